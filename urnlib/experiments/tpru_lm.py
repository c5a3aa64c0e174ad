"""Language modelling with the TPRU and the LSTM on the Brown corpus, and the roles' PMI with POS tags (stand-ins
for paper 002 Tables 4 and 5).

Table 4 of paper 002 compares two-layer TPRU and LSTM language models (dim 1024, the readout tied to the
embedding, appendix C.3) by perplexity on WikiText-103 and WikiText-2; neither is reachable offline. Here both
train on the Brown corpus as :mod:`urnlib.experiments.primer_lm` prepares it (a stream of tokens in corpus order,
split into contiguous train / validation / test parts, rare words ``<unk>``; rows of ``warmup`` context tokens and
``window`` predicted ones) in the one loop :func:`urnlib.train.fit`; the weights of the epoch with the lowest
validation perplexity are kept (C.3: "the best one is selected based on perplexity on the validation set") and
scored on the test part, batch by batch.

Table 5 counts, for the trained TPRU, the maximally selected role ``beta_t = argmax_n (f_t)_n`` of the top layer at
every token against the token's POS tag, and reports the top two PMI values per tag. The paper's tags come from
spaCy on MNLI sentences (17 universal POS tags); ours are Brown's gold tags of the test part, mapped to the same 17
universal tags by :func:`brown_to_upos`, token by token (:func:`test_tags` checks the alignment). PMI uses the
natural logarithm (the paper does not say which), ``PMI(r, t) = log p(r, t) / (p(r) p(t))`` with the empirical
frequencies. The same counts for the untrained TPRU (same seed, before the first step) tell how much of the
association comes from the word embeddings alone. A run stores only these numbers.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.corpora.brown import brown_sentences
from urnlib.experiments.primer_lm import BrownTask, make_data, next_token_probs, perplexity, rows
from urnlib.models.tpru import STACK_KINDS, StackLM, weight_matrix_count
from urnlib.params import ParameterError, check_bool, check_choice, check_float, check_int
from urnlib.progress import progress
from urnlib.results import Run, RunStore
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["EXPERIMENT", "UPOS", "LMSetup", "brown_to_upos", "test_tags", "reading_positions", "selected_roles",
           "role_tag_pmi", "check_lm", "run_lm"]

EXPERIMENT = "tpru_lm"
BROWN_TOKENS = 1_161_192  # tokens of NLTK's Brown corpus (urnlib.corpora.text)
#: the 17 universal POS tags (Universal Dependencies; spaCy's ``pos_``, paper 002 sec. 6.2)
UPOS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT",
        "SCONJ", "SYM", "VERB", "X")
_UPOS_OF = {
    **dict.fromkeys(["nn", "nns", "nn$", "nns$", "nr", "nrs", "nr$"], "NOUN"),
    **dict.fromkeys(["np", "nps", "np$", "nps$"], "PROPN"),
    **dict.fromkeys(["vb", "vbd", "vbg", "vbn", "vbz"], "VERB"),
    **dict.fromkeys(["be", "bed", "bedz", "beg", "bem", "ben", "ber", "bez", "hv", "hvd", "hvg", "hvn", "hvz", "do",
                     "dod", "doz", "md"], "AUX"),
    **dict.fromkeys(["jj", "jjr", "jjs", "jjt", "jj$", "od"], "ADJ"),
    **dict.fromkeys(["rb", "rbr", "rbt", "rb$", "rn", "ql", "qlp", "wql", "wrb", "abl"], "ADV"),
    **dict.fromkeys(["in", "rp"], "ADP"),
    "cc": "CCONJ", "cs": "SCONJ",
    **dict.fromkeys(["at", "ap", "ap$", "abn", "abx", "dt", "dt$", "dti", "dts", "dtx", "wdt"], "DET"),
    **dict.fromkeys(["pp$", "pp$$", "ppl", "ppls", "ppo", "pps", "ppss", "pn", "pn$", "wp$", "wpo", "wps", "ex"],
                    "PRON"),
    **dict.fromkeys(["cd", "cd$"], "NUM"),
    **dict.fromkeys(["to", "*"], "PART"),  # infinitival to; * is Brown's tag of not / n't
    "uh": "INTJ",
    **dict.fromkeys([".", ",", ":", "(", ")", "--", "``", "''", "'"], "PUNCT"),
}


def brown_to_upos(tag: str) -> str:
    """A Brown tag (as in the corpus files) -> one of the 17 universal POS tags (:data:`UPOS`).

    Our mapping, in the spirit of Petrov et al.'s (2012) brown -> universal table, refined to UD's 17 tags: nouns
    NOUN (``nr`` adverbial nouns too), proper nouns PROPN, ``be``/``have``/``do`` forms and modals AUX (UD tags
    main-verb *have* VERB; Brown does not tell them apart), ``rp`` ADP (UD's English particles), ordinals ADJ,
    ``to`` and ``*`` (not) PART, ``fw-`` (foreign words) and ``nil`` X. A contraction (``pps+bez``, *it's*) takes
    the class of its first part; ``-tl``/``-hl``/``-nc`` and a negating ``*`` suffix are dropped."""
    t = tag.lower()
    if t.startswith("fw-"):
        return "X"
    while True:
        stripped = t.removesuffix("-tl").removesuffix("-hl").removesuffix("-nc")
        if stripped == t:
            break
        t = stripped
    first = t.split("+")[0]
    if first != "*":
        first = first.rstrip("*")
    return _UPOS_OF.get(first, "X")


@dataclass(frozen=True)
class LMSetup:
    """The language models compared (paper 002 appendix C.3, scaled down)."""

    d: int = 64  # state size and (tied) embedding size; the paper: 1024
    layers: int = 2  # C.3: "the same two-layer architecture"
    n_roles: int = 64  # TPRU roles N; the paper: 1024
    slices: int = 1  # TPRU slices (appendix E)
    dropout: float = 0.0  # Table 4 right: "trained without dropout layers" (the paper tunes it for the table)
    tie_weights: bool = True  # C.3: "The output prediction layer is tied to the input word embedding layer"

    def __post_init__(self):
        check_int("lm d", self.d, minimum=1)
        check_int("lm layers", self.layers, minimum=1)
        check_int("lm roles", self.n_roles, minimum=1)
        check_int("lm slices", self.slices, minimum=1)
        if self.d % self.slices:
            raise ParameterError(f"lm slices={self.slices} must divide lm d={self.d}")
        check_float("lm dropout", self.dropout, minimum=0.0)
        if self.dropout >= 1:
            raise ParameterError(f"lm dropout={self.dropout} must be < 1")
        check_bool("tie_weights", self.tie_weights)


def _tagged_sentences(task: BrownTask) -> list[list[tuple[str, str]]]:
    return list(islice(brown_sentences(), task.max_sentences or None))


def test_tags(task: BrownTask) -> list[str]:
    """The universal POS tag of every token of the test stream of ``make_data(task)``, in order.

    The test part is cut from the same sentences, in the same order, by the same
    :func:`~urnlib.corpora.text.split_by_tokens` (which looks only at sentence lengths), so the tags line up token
    by token; the words are checked against the stream (a mismatch raises ``RuntimeError``)."""
    data = make_data(task)
    split = text.split_by_tokens(_tagged_sentences(task), task.train_tokens, task.valid_tokens,
                                 task.test_tokens or None)
    pairs = [p for s in split.test for p in s]
    words = [w.lower() if task.lower else w for w, _ in pairs]
    ids = [data.vocab.index.get(w, 0) for w in words]
    if ids != data.streams["test"]:
        bad = next((i for i, (a, b) in enumerate(zip(ids, data.streams["test"])) if a != b), min(len(ids),
                                                                                             len(data.streams["test"])))
        raise RuntimeError(f"tags and test stream disagree at token {bad} ({len(ids)} tagged tokens, "
                           f"{len(data.streams['test'])} in the stream)")
    return [brown_to_upos(t) for _, t in pairs]


def reading_positions(n_tokens: int, window: int, warmup: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Where each token of a stream is *read* in the rows of :func:`urnlib.experiments.primer_lm.rows`.

    Row k's input at column j is stream token ``i = k window + j - warmup - 1`` (the token before the target of that
    column). Over the predicted columns ``j >= warmup`` every token ``0 <= i < n_tokens - 1`` is read exactly once
    (the last token is only predicted). Returns ``(row, column, token index)``, three long tensors, in token order."""
    i = torch.arange(n_tokens - 1)
    k = (i + 1) // window
    j = i + 1 - k * window + warmup
    return k, j, i


@torch.no_grad()
def selected_roles(model: StackLM, data: TokenData, window: int, warmup: int, n_tokens: int,
                   batch_size: int = 256) -> np.ndarray:
    """``beta_t = argmax_n (f_t)_n`` of the top TPRU layer when it reads token t, for tokens ``0 .. n_tokens - 2``
    of the stream cut into ``data`` (with s > 1 slices, the argmax of the fillers summed over the slices)."""
    model.eval()
    best = []
    for i in range(0, len(data), batch_size):
        f = model.fillers(data.inputs[i : i + batch_size])  # (B, T, N) or (B, T, s, N)
        if f.dim() == 4:
            f = f.sum(dim=2)
        best.append(f.argmax(dim=-1))
    beta = torch.cat(best)  # (R, T)
    k, j, _ = reading_positions(n_tokens, window, warmup)
    return beta[k, j].numpy()


def role_tag_pmi(roles: Sequence[int], tags: Sequence[str], *, top: int = 2, min_joint: int = 1) -> dict[str, Any]:
    """PMI between the selected role and the tag (paper 002 sec. 6.2, Table 5).

    ``PMI(r, t) = log(p(r, t) / (p(r) p(t))) = log(c(r, t) n / (c(r) c(t)))`` (natural log) from the counts over
    the n tokens. For each tag, the ``top`` roles by PMI among the pairs seen at least ``min_joint`` times.

    Returns:
        ``{"tokens": n, "roles_used": distinct roles, "mutual_information": I(role; tag) (nats, all pairs),
        "tags": {tag: {"count": c(t), "top": [{"role", "pmi", "joint", "role_count"}, ...]}}}``, tags by count.
    """
    if len(roles) != len(tags):
        raise ParameterError(f"{len(roles)} roles but {len(tags)} tags: pass one of each per token")
    if not len(roles):
        raise ParameterError("no tokens to count")
    check_int("top", top, minimum=1)
    check_int("min_joint", min_joint, minimum=1)
    roles = [int(r) for r in roles]
    n = len(roles)
    joint = Counter(zip(roles, tags))
    c_role, c_tag = Counter(roles), Counter(tags)
    pmi = {(r, t): math.log(c * n / (c_role[r] * c_tag[t])) for (r, t), c in joint.items()}
    mi = sum(c / n * pmi[key] for key, c in joint.items())
    out = {}
    for tag, count in sorted(c_tag.items(), key=lambda x: (-x[1], x[0])):
        cands = sorted(((p, r) for (r, t), p in pmi.items() if t == tag and joint[r, t] >= min_joint),
                       key=lambda x: (-x[0], x[1]))[:top]
        out[tag] = {"count": count, "top": [{"role": r, "pmi": p, "joint": joint[r, tag], "role_count": c_role[r]}
                                            for p, r in cands]}
    return {"tokens": n, "roles_used": len(c_role), "mutual_information": mi, "tags": out}


def _build(kind: str, vocab_size: int, setup: LMSetup, seed: int) -> StackLM:
    seed_everything(seed)
    opts = {"n_roles": setup.n_roles, "slices": setup.slices} if kind == "tpru" else {}
    return StackLM(kind, vocab_size, setup.d, setup.d, setup.layers, dropout=setup.dropout,
                   tie_weights=setup.tie_weights, seed=seed, **opts)


def check_lm(models: list[str], task: BrownTask) -> list[str]:
    """Check the model kinds and that the split fits in the corpus (before anything is read or trained)."""
    if not isinstance(models, (list, tuple)) or not models:
        raise ParameterError(f"lm_models={models!r}: give a non-empty list such as ['tpru', 'lstm']")
    for kind in models:
        check_choice("each of lm_models", kind, list(STACK_KINDS))
    if len(set(models)) != len(models):
        raise ParameterError(f"lm_models={list(models)} repeats a model")
    wanted = task.train_tokens + task.valid_tokens + task.test_tokens
    if not task.max_sentences and wanted >= BROWN_TOKENS:
        raise ParameterError(f"lm_train_tokens + lm_valid_tokens + lm_test_tokens = {wanted:,} but the Brown corpus "
                             f"has {BROWN_TOKENS:,} tokens: lower them (lm_test_tokens=0 takes all that is left)")
    return list(models)


def run_lm(models: list[str], task: BrownTask, setup: LMSetup, cfg: TrainConfig, store_dir: str | Path, *,
           pmi_min_joint: int = 5, retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Load or train a language model of each kind in ``models`` (``"tpru"``, ``"lstm"``, ``"gru"``).

    Each run records the validation perplexity after every epoch; the validation and test perplexity of the
    weights of the best epoch by validation perplexity (and ``train_ppl``, exp of that epoch's mean training loss,
    in training mode); parameter counts; and for the TPRU the role-tag PMI of the trained and of the untrained
    model (:func:`role_tag_pmi`). (A run resumed from a checkpoint keeps the best weights among the epochs trained
    after the resume.)"""
    check_lm(models, task)
    check_int("pmi_min_joint", pmi_min_joint, minimum=1)
    store = RunStore(store_dir, code_module=__name__)
    runs = {}
    for kind in models:
        label = f"{kind.upper()} {setup.d}" + (f" N={setup.n_roles}" if kind == "tpru" else "")

        def train(checkpoint, kind=kind, label=label):
            d = make_data(task)
            parts = {p: rows(d.streams[p], task.window, task.warmup, d.start_id) for p in d.streams}
            model = _build(kind, len(d.vocab.tokens), setup, cfg.seed)
            extra: dict[str, Any] = {}
            if kind == "tpru":
                tags = test_tags(task)
                n = len(d.streams["test"])
                extra["pmi_untrained"] = role_tag_pmi(
                    selected_roles(model, parts["test"], task.window, task.warmup, n), tags[: n - 1],
                    min_joint=pmi_min_joint)
            best: dict[str, Any] = {"valid_ppl": math.inf}

            def evaluate(m):  # keep the weights of the epoch with the lowest validation perplexity
                ppl = perplexity(next_token_probs(m, parts["valid"]))
                if ppl < best["valid_ppl"]:
                    best.update(valid_ppl=ppl, state=copy.deepcopy(m.state_dict()))
                return {"valid_ppl": ppl}

            history, wall = fit(model, parts["train"], None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                                desc=label)
            if "state" in best:
                model.load_state_dict(best["state"])
            probs = {p: next_token_probs(model, parts[p]) for p in progress(("valid", "test"), desc=f"{label}: scoring")}
            recurrent = model.stack
            top = min(range(len(history.rows)), key=lambda e: history.rows[e]["valid_ppl"])
            final = {**{f"{p}_ppl": perplexity(probs[p]) for p in probs},
                     "train_ppl": math.exp(history.rows[top]["train_loss"]), "best_epoch": top + 1,
                     "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
                     "recurrent_params": sum(p.numel() for p in recurrent.parameters() if p.requires_grad),
                     "recurrent_weights": weight_matrix_count(recurrent), "data": d.stats, **extra}
            if kind == "tpru":
                n = len(d.streams["test"])
                final["pmi"] = role_tag_pmi(selected_roles(model, parts["test"], task.window, task.warmup, n),
                                            tags[: n - 1], min_joint=pmi_min_joint)
            return history.rows, final, {}, wall

        params = {"task": asdict(task), "setup": asdict(setup), "kind": kind, "train": asdict(cfg),
                  "pmi_min_joint": pmi_min_joint}
        runs[label] = store.get_or_train(EXPERIMENT, label, params, train, retrain=retrain, on_stale=on_stale)
    return runs
