"""The TPRU inside the chapter's entailment classifier can learn (issue 16: every stored entailment encoder
ended near chance; can the TPRU fit anything?).

A small separable entailment task, built from the logic vocabulary: the premise is a conjunction of one to
three distinct variables, the hypothesis one variable, entailed iff it is one of the conjuncts (balanced
labels). The label is decidable from the two sides' variables alone, which the max-pooled features
``[u; v; |u - v|; u (.) v]`` can compare. The classifier is the chapter's own
(:func:`urnlib.chapters.tpru.entailment.build_classifier`, two layers), and must fit the task to high
training accuracy within a bounded number of Adam steps. The GRU and LSTM have the same kind of test in
tests/test_entailment_model.py.
"""

import pytest
import torch

from urnlib.chapters.tpru import entailment as ent
from urnlib.languages import logic
from urnlib.models.entailment import entailment_accuracy, pack_pairs, pack_targets
from urnlib.train import TokenData, TrainConfig, fit, token_cross_entropy

torch.set_num_threads(1)

AND = logic.TOKEN_ID["&"]
VARIABLES = [logic.TOKEN_ID[c] for c in "abcdefgh"]


def conjunction_task(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``p_1 & ... & p_k |= h`` (k = 1..3 distinct variables) holds iff h is one of the p_i; even rows are
    not entailed, odd rows entailed."""
    g = torch.Generator().manual_seed(seed)
    premises, hypotheses, labels = [], [], []
    for i in range(n):
        k = int(torch.randint(1, 4, (1,), generator=g))
        chosen = [VARIABLES[int(j)] for j in torch.randperm(len(VARIABLES), generator=g)[:k]]
        premises.append([t for j, v in enumerate(chosen) for t in ([AND, v] if j else [v])])
        pool = chosen if i % 2 else [v for v in VARIABLES if v not in chosen]
        hypotheses.append([pool[int(torch.randint(len(pool), (1,), generator=g))]])
        labels.append(i % 2)
    x = pack_pairs(premises, hypotheses, sep_id=logic.SEP_ID, pad_id=logic.PAD_ID, length=8)
    return x, torch.tensor(labels)


#: the chapter's classifier at a small size: two layers, no dropout, no renaming (the task is not about it)
ARCH = ent.Architecture(layers=2, embedding_size=16, hidden=16, dropout=0.0, permute=False)


@pytest.mark.parametrize("encoder", ["tpru 16 N8", "tpru 16 N4 s4"])
def test_tpru_classifier_fits_a_small_separable_entailment_task(encoder):
    x, y = conjunction_task(512, seed=1)
    model = ent.build_classifier(ent.encoder_spec(encoder), ARCH, seed=0)
    assert entailment_accuracy(model, x, y) < 0.8  # not solved before training
    config = TrainConfig(epochs=20, batch_size=32, lr=1e-2, seed=0)  # 320 Adam steps
    history, _ = fit(model, TokenData(x, pack_targets(y, x.shape[1])), None, config,
                     evaluate=lambda m: {"train_acc": entailment_accuracy(m, x, y)})
    losses = history.column("train_loss")
    assert losses[0] > 0.6 and losses[-1] < 0.25, losses  # from ln 2 to well below it
    assert history.rows[-1]["train_acc"] >= 0.95, history.column("train_acc")


def test_every_tpru_parameter_gets_a_gradient_on_the_chapter_data():
    """One batch of the chapter's generated pairs (renamed, as in training): every trainable parameter of the
    classifier, in both TPRU layers, receives a finite, non-zero gradient (nothing is cut off from the loss by
    the binding, the normalisation or the renaming)."""
    data = ent.make_data(ent.EntailmentTask(64, 8, 4, 4, 4, 4, seed=0))
    arch = ent.Architecture(layers=2, embedding_size=16, hidden=16, dropout=0.0, permute=True)
    for encoder in ("tpru 16 N4", "tpru 16 N4 s4"):
        model = ent.build_classifier(ent.encoder_spec(encoder), arch, seed=0).train()
        x, y = data.train_data().batch(torch.arange(64))
        loss, _ = token_cross_entropy(model, x, y)
        loss.backward()
        for name, p in model.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), (encoder, name)
            assert float(p.grad.abs().max()) > 0, (encoder, name)
