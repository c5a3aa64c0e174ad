"""Elman (1990), "Finding structure in time": an SRN learns word classes from next-word prediction (lecture
004, "Learning with artificial language input" and "Learning word classes").

Elman generated 10,000 two- and three-word sentences from 16 templates over 13 word categories
(:mod:`urnlib.languages.elman`, the lecture's Tables 3 and 4), concatenated them into one stream of 27,534
words without sentence boundaries, and trained a simple recurrent network with 150 hidden units and localist
(one-hot) input and output to predict the next word, six passes over the stream. He then averaged the hidden
state over every occurrence of each word and clustered the averages hierarchically: the tree splits nouns from
verbs, and within the nouns animates from inanimates, although the network only ever saw which word follows
which.

Here the SRN is :class:`urnlib.models.cells.SRN` with localist input (the registry's ``"srn N"``), trained by
the one loop of :mod:`urnlib.train` with Adam (Elman used plain back-propagation with a copy-back context
layer, i.e. no gradient through time; we back-propagate through the rows the stream is cut into). A run stores
the per-word mean hidden states (the report clusters them), its losses and its weights.

The chapter's :class:`~urnlib.chapters.primer.experiment.Config` plans the runs with :func:`specs`, one per
training setting and seed (the seed draws the sentences and initialises the SRN); :func:`train_run` trains
one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from urnlib.languages import elman
from urnlib.models import build_model, count_parameters
from urnlib.params import ParameterError, check_int
from urnlib.results import Run, RunSpec, Trained
from urnlib.tokens import device_of
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["ElmanTask", "vocabulary", "make_data", "build", "parse_setting", "label", "specs", "train_run",
           "rebuild_model", "main_run", "mean_states", "EXPERIMENT"]

EXPERIMENT = "primer_elman"
COMPONENTS = ("train.loop", "data.elman", "experiment.primer_elman", "model.srn")


@dataclass(frozen=True)
class ElmanTask:
    """The language and the network (values from the chapter's Config).

    Args:
        n_sentences: sentences of the training stream (Elman 1990: 10,000).
        hidden: SRN hidden units (Elman 1990: 150).
        row_length: words per training row, back-propagated through (ours; Elman: one step).
        seed: sentences, initialisation and data order.
    """

    n_sentences: int
    hidden: int
    row_length: int
    seed: int

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
    each), and held-out rows from ``n_sentences // 10`` further sentences (for the held-out loss per
    epoch)."""
    rng = np.random.default_rng(task.seed)
    stream = elman.stream(elman.generate(task.n_sentences, rng))
    held_out = elman.stream(elman.generate(task.n_sentences // 10, rng))
    return stream, _rows(stream, task.row_length), _rows(held_out, task.row_length)


def build(task: ElmanTask) -> torch.nn.Module:
    """Elman's SRN: localist input and output over the 21 words, ``task.hidden`` units."""
    return build_model({"kind": "srn", "n": task.hidden}, len(vocabulary()))


def mean_states(model: torch.nn.Module, stream: list[str]) -> dict[str, list[float]]:
    """The hidden state after each word of ``stream`` (read in one pass, as Elman's network read its stream),
    averaged per word."""
    words = vocabulary()
    index = {w: i for i, w in enumerate(words)}
    ids = torch.tensor([index[w] for w in stream])
    model.eval()
    with torch.no_grad():
        h = model.states(ids[None].to(device_of(model)))[0].double().cpu()  # (T, n)
    sums = torch.zeros(len(words), model.n, dtype=torch.float64).index_add_(0, ids, h)
    counts = torch.bincount(ids, minlength=len(words)).double()
    means = sums / counts.clamp(min=1)[:, None]
    return {word: means[i].tolist() for i, word in enumerate(words) if counts[i] > 0}


def _next_word_accuracy(model: torch.nn.Module, data: TokenData) -> float:
    """Share of positions where the most probable next word is one the grammar allows (any word of a category
    that can follow); a stand-in for Elman's "the network predicts the category, not the word"."""
    model.eval()
    with torch.no_grad():
        pred = model(data.inputs.to(device_of(model))).argmax(-1).cpu()
    words = vocabulary()
    allowed = _allowed_next()
    ok = [words[int(p)] in allowed[words[int(x)]] for p, x in zip(pred.flatten(), data.inputs.flatten())]
    return float(np.mean(ok))


def _allowed_next() -> dict[str, set[str]]:
    """Words that can follow each word in the stream (inside a template, or first in a sentence)."""
    firsts = {w for t in elman.TEMPLATES for w in elman.CATEGORIES[t[0]]}
    out: dict[str, set[str]] = {w: set(firsts) for w in vocabulary()}
    for t in elman.TEMPLATES:
        for a, b in zip(t, t[1:]):
            for w in elman.CATEGORIES[a]:
                out[w] |= set(elman.CATEGORIES[b])
    return out


def parse_setting(text: str, name: str = "elman_settings") -> tuple[int, int, float]:
    """``"20 32 0.01"`` -> ``(epochs, batch size, Adam learning rate)``; errors name ``name``."""
    parts = text.split() if isinstance(text, str) else []
    try:
        if len(parts) != 3:
            raise ValueError
        epochs, batch, lr = int(parts[0]), int(parts[1]), float(parts[2])
    except ValueError:
        raise ParameterError(f"{name} contains {text!r}: write each training setting as 'EPOCHS BATCH LR', "
                             "e.g. '20 32 0.01'") from None
    check_int(f"the epochs of {text!r} in {name}", epochs, minimum=1, maximum=100_000)
    check_int(f"the batch size of {text!r} in {name}", batch, minimum=1, maximum=1_000_000)
    if not (np.isfinite(lr) and lr > 0):
        raise ParameterError(f"the learning rate of {text!r} in {name} must be a number > 0, not {lr}")
    return epochs, batch, lr


def label(task: ElmanTask, cfg: TrainConfig) -> str:
    """``"SRN 150, 20 epochs, batch 32, lr 0.01"``."""
    epochs = f"{cfg.epochs} epoch" + "s" * (cfg.epochs != 1)
    return f"SRN {task.hidden}, {epochs}, batch {cfg.batch_size}, lr {cfg.lr:g}"


def specs(task: ElmanTask, configs: list[TrainConfig], seed: int | None = None) -> list[RunSpec]:
    """One run of Elman's SRN per training setting.

    Args:
        seed: ``task.seed`` (and every config's), named in the runs' names (``"SRN 150, 20 epochs, batch 32,
            lr 0.01 seed 0"``, coordinate ``seed``); ``None``: the runs are named by their setting.
    """
    if seed is not None and any(s != seed for s in (task.seed, *(cfg.seed for cfg in configs))):
        raise ValueError(f"runs named 'seed {seed}' would draw their sentences or train with another seed")
    return [RunSpec.of(EXPERIMENT, label(task, cfg), {"task": asdict(task), "train": cfg.params()},
                       COMPONENTS, train_run, seed=seed, setting=label(task, cfg))
            for cfg in configs]


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the SRN of one run of :func:`specs`; final metrics are the monitor's best epoch's (the last
    epoch's without a monitor), with the per-word mean hidden states and the share of grammatical next-word
    predictions of the weights kept."""
    task, cfg = ElmanTask(**spec.params["task"]), TrainConfig(**spec.params["train"])
    stream, data, held_out = make_data(task)
    seed_everything(task.seed)
    model = build(task)
    history, _ = fit(model, data, held_out, cfg, checkpoint=checkpoint, desc=f"Elman {spec.name}")
    final = {**history.best_row, "words": len(stream), "sentences": task.n_sentences,
             "grammatical_prediction": _next_word_accuracy(model, data),
             "mean_states": mean_states(model, stream), "n_params": count_parameters(model)}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def rebuild_model(run: Run) -> torch.nn.Module:
    """The trained SRN of a stored run (one stored with its weights), in eval mode."""
    return run.model(build=lambda params: build(ElmanTask(**params["task"])))


def main_run(runs: dict[str, Run]) -> str:
    """The name of the run with the lowest final held-out loss."""
    return min(runs, key=lambda k: runs[k].final["test_loss"])
