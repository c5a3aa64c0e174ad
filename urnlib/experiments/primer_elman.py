"""Elman (1990), "Finding structure in time": an SRN learns word classes from next-word prediction (lecture 004,
"Learning with artificial language input" and "Learning word classes").

Elman generated 10,000 two- and three-word sentences from 16 templates over 13 word categories
(:mod:`urnlib.languages.elman`, the lecture's Tables 3 and 4), concatenated them into one stream of 27,534 words
without sentence boundaries, and trained a simple recurrent network with 150 hidden units and localist (one-hot)
input and output to predict the next word, six passes over the stream. He then averaged the hidden state over every
occurrence of each word and clustered the averages hierarchically: the tree splits nouns from verbs, and within the
nouns animates from inanimates, although the network only ever saw which word follows which.

Here the SRN is :class:`urnlib.models.cells.SRN` with localist input (``embedding_size=None``), trained by the one
loop of :mod:`urnlib.train` with Adam (Elman used plain back-propagation with a copy-back context layer, i.e. no
gradient through time; we back-propagate through the rows the stream is cut into). A run stores the per-word mean
hidden states; the clustering is done by the report from those.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.languages import elman
from urnlib.models.cells import SRN
from urnlib.params import ParameterError, check_int
from urnlib.results import Run, RunStore
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["ElmanTask", "make_data", "parse_setting", "run_elman", "main_run", "mean_states", "EXPERIMENT", "ANIMATE",
           "INANIMATE"]

EXPERIMENT = "primer_elman"
#: Elman (1990) Fig. 7: the animate and inanimate noun categories.
ANIMATE = ("NOUN-HUM", "NOUN-ANIM", "NOUN-AGRESS")
INANIMATE = ("NOUN-INANIM", "NOUN-FRAG", "NOUN-FOOD")


@dataclass(frozen=True)
class ElmanTask:
    n_sentences: int = 10_000  # Elman (1990): 10,000 sentences
    hidden: int = 150  # Elman (1990): 150 hidden units
    row_length: int = 24  # words per training row, back-propagated through (our choice; Elman: one step)
    seed: int = 0  # sentences, initialisation and data order

    def __post_init__(self):
        check_int("n_sentences", self.n_sentences, minimum=10)
        check_int("hidden", self.hidden, minimum=1)
        check_int("row_length", self.row_length, minimum=2)
        check_int("seed", self.seed, minimum=0)


def vocabulary() -> list[str]:
    """The tables' 21 words, in category order."""
    return list(dict.fromkeys(w for words in elman.CATEGORIES.values() for w in words))


def _rows(stream: list[str], L: int) -> TokenData:
    index = {w: i for i, w in enumerate(vocabulary())}
    ids = torch.tensor([index[w] for w in stream])
    n_rows = (len(ids) - 1) // L
    return TokenData(ids[: n_rows * L].reshape(n_rows, L), ids[1 : n_rows * L + 1].reshape(n_rows, L))


def make_data(task: ElmanTask) -> tuple[list[str], TokenData, TokenData]:
    """The training stream and its rows (row k reads words ``k L .. (k+1) L - 1`` and predicts the word after
    each), and held-out rows from ``n_sentences // 10`` further sentences (for the held-out loss per epoch)."""
    rng = np.random.default_rng(task.seed)
    stream = elman.stream(elman.generate(task.n_sentences, rng))
    held_out = elman.stream(elman.generate(task.n_sentences // 10, rng))
    return stream, _rows(stream, task.row_length), _rows(held_out, task.row_length)


def mean_states(model: SRN, stream: list[str]) -> dict[str, list[float]]:
    """The hidden state after each word of ``stream`` (read in one pass, as Elman's network read its stream),
    averaged per word."""
    words = vocabulary()
    index = {w: i for i, w in enumerate(words)}
    ids = torch.tensor([index[w] for w in stream])
    model.eval()
    with torch.no_grad():
        h = model.states(ids[None])[0].double()  # (T, n)
    sums = torch.zeros(len(words), model.n, dtype=torch.float64).index_add_(0, ids, h)
    counts = torch.bincount(ids, minlength=len(words)).double()
    means = sums / counts.clamp(min=1)[:, None]
    return {word: means[i].tolist() for i, word in enumerate(words) if counts[i] > 0}


def _next_word_accuracy(model: SRN, data: TokenData) -> float:
    """Share of positions where the most probable next word is one the grammar allows (any word of a category
    that can follow); a stand-in for Elman's "the network predicts the category, not the word"."""
    model.eval()
    with torch.no_grad():
        pred = model(data.inputs).argmax(-1)
    words = vocabulary()
    allowed = _allowed_next()
    ok = [words[int(p)] in allowed[words[int(x)]] for p, x in zip(pred.flatten(), data.inputs.flatten())]
    return float(np.mean(ok))


def _allowed_next() -> dict[str, set[str]]:
    """Words that can follow each word in the stream (inside a template, or as the first word of a sentence)."""
    firsts = {w for t in elman.TEMPLATES for w in elman.CATEGORIES[t[0]]}
    out: dict[str, set[str]] = {w: set(firsts) for w in vocabulary()}
    for t in elman.TEMPLATES:
        for a, b in zip(t, t[1:]):
            for w in elman.CATEGORIES[a]:
                out[w] |= set(elman.CATEGORIES[b])
    return out


def parse_setting(spec: str) -> TrainConfig:
    """``"20 32 0.01"`` (epochs, batch size, Adam learning rate) -> a :class:`~urnlib.train.TrainConfig`."""
    parts = spec.split() if isinstance(spec, str) else []
    try:
        epochs, batch, lr = int(parts[0]), int(parts[1]), float(parts[2])
        if len(parts) != 3:
            raise ValueError
    except (ValueError, IndexError):
        raise ParameterError(f"training setting {spec!r}: write 'EPOCHS BATCH LR', e.g. '20 32 0.01'") from None
    return TrainConfig(epochs, batch, lr)


def run_elman(task: ElmanTask, settings: list[str], store_dir: str | Path, *, retrain: bool = False,
              on_stale: str = "warn") -> dict[str, Run]:
    """Load or train the SRN once per training setting (``"EPOCHS BATCH LR"``, see :func:`parse_setting`); each run
    stores its per-word mean hidden states and its training and held-out loss per epoch.

    Elman's own procedure (one word at a time, no gradient through time, six passes) has no direct counterpart in
    a batched loop, so the chapter trains under a few settings and shows how much the clustering depends on them;
    :func:`main_run` picks the one with the lowest held-out loss."""
    if not isinstance(settings, (list, tuple)) or not settings:
        raise ParameterError(f"settings={settings!r}: give a non-empty list such as ['20 32 0.01']")
    configs = {spec: parse_setting(spec) for spec in settings}
    store = RunStore(store_dir, code_module=__name__)
    runs = {}
    for spec, cfg in configs.items():
        cfg = TrainConfig(cfg.epochs, cfg.batch_size, cfg.lr, task.seed)

        def train(checkpoint, cfg=cfg, spec=spec):
            stream, data, held_out = make_data(task)
            seed_everything(task.seed)
            model = SRN(len(vocabulary()), task.hidden)  # localist input
            history, wall = fit(model, data, held_out, cfg, checkpoint=checkpoint, desc=f"Elman SRN ({spec})")
            final = {**history.rows[-1], "words": len(stream), "sentences": task.n_sentences,
                     "grammatical_prediction": _next_word_accuracy(model, data),
                     "mean_states": mean_states(model, stream),
                     "n_params": sum(p.numel() for p in model.parameters())}
            return history.rows, final, {}, wall

        epochs = f"{cfg.epochs} epoch" + "s" * (cfg.epochs != 1)
        label = f"SRN {task.hidden}, {epochs}, batch {cfg.batch_size}, lr {cfg.lr:g}"
        params: dict[str, Any] = {"task": asdict(task), "train": asdict(cfg)}
        runs[label] = store.get_or_train(EXPERIMENT, label, params, train, retrain=retrain, on_stale=on_stale)
    return runs


def main_run(runs: dict[str, Run]) -> str:
    """The label of the run with the lowest final held-out loss."""
    return min(runs, key=lambda k: runs[k].final["test_loss"])
