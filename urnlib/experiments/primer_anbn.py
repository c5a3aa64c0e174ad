"""Counting with recurrent units: a^n b^n (Weiss, Goldberg & Yahav 2018; lecture 004, "Training recurrent
architectures on a^nb^n" and "Hidden & cell state contents").

A language model reads ``<s> a^n b^n`` and predicts every next symbol; it is trained on n = 1 .. N and a string is
*accepted* when, at every position where the next symbol is forced, the model gives that symbol probability above a
threshold (:mod:`urnlib.languages.anbn`). The largest n such that every a^m b^m with m <= n is accepted measures how
far a model counts beyond its training range. The lecture shows the LSTM counting past N and the GRU and SRN not,
and plots the LSTM's cell state rising over the a's and falling over the b's.

Models: :class:`~urnlib.models.cells.SRN` and :class:`~urnlib.models.cells.GRU` (localist input),
:class:`~urnlib.models.recurrent.PaperLSTM` and the unitary :class:`~urnlib.models.unitary.URN` (paper 000's cell,
a rotation per symbol: can a norm-preserving state count?), all trained by the one loop of :mod:`urnlib.train`
without dropout. A run stores, per model and seed, which n are accepted, and the hidden (and LSTM cell) states along
one long string for the state plots.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from urnlib.languages import anbn
from urnlib.models.cells import GRU, SRN
from urnlib.models.recurrent import PaperLSTM
from urnlib.models.unitary import URN
from urnlib.params import ParameterError, check_choice, check_float, check_int
from urnlib.results import Run, RunStore
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

__all__ = ["AnbnTask", "KINDS", "parse_model", "build", "training_data", "acceptance", "lstm_cell_states",
           "run_all", "EXPERIMENT"]

EXPERIMENT = "primer_anbn"
KINDS = ("srn", "gru", "lstm", "urn")


@dataclass(frozen=True)
class AnbnTask:
    max_train_n: int = 20  # lecture 004: D_train = {a^n b^n : n <= N}, N = 20 on the slide
    copies: int = 50  # each training string this many times per epoch (our choice)
    max_test_n: int = 200  # largest n tested
    threshold: float = 0.5  # accept when p(forced next symbol) > threshold (our choice; see urnlib.languages.anbn)
    trace_n: int = 50  # the string a^n b^n whose states are plotted

    def __post_init__(self):
        check_int("max_train_n", self.max_train_n, minimum=1)
        check_int("copies", self.copies, minimum=1)
        check_int("max_test_n", self.max_test_n, minimum=self.max_train_n)
        check_float("threshold", self.threshold, minimum=0.0, maximum=1.0, strict_min=True)
        check_int("trace_n", self.trace_n, minimum=1)
        if self.threshold >= 1:
            raise ParameterError(f"threshold={self.threshold}: need a probability strictly below 1")


def parse_model(spec: str) -> dict[str, Any]:
    """``"lstm 10"`` -> ``{"kind": "lstm", "n": 10}``; KIND one of :data:`KINDS` (a URN needs an even n)."""
    parts = spec.split() if isinstance(spec, str) else []
    if len(parts) != 2 or parts[0] not in KINDS or not parts[1].isdigit() or int(parts[1]) < 1:
        raise ParameterError(f"model {spec!r}: write 'KIND UNITS' with KIND in {list(KINDS)}, e.g. 'lstm 10'")
    kind, n = parts[0], int(parts[1])
    if kind == "urn" and n % 2:
        raise ParameterError(f"model {spec!r}: a URN needs an even number of units")
    return {"kind": kind, "n": n}


def build(spec: dict[str, Any]) -> torch.nn.Module:
    """The model of a spec over the a^n b^n vocabulary (V = 5), without dropout."""
    V, n = len(anbn.AnbnVocab()), spec["n"]
    if spec["kind"] == "srn":
        return SRN(V, n)  # localist input
    if spec["kind"] == "gru":
        return GRU(V, n)
    if spec["kind"] == "lstm":
        return PaperLSTM(V, n, V, dropout=0.0)  # an embedding of the 5 symbols, as wide as the vocabulary
    return URN(V, n, dropout=0.0, state_dropout=False)


def training_data(task: AnbnTask) -> TokenData:
    """a^n b^n for n = 1 .. N, each ``copies`` times."""
    ns = [n for n in range(1, task.max_train_n + 1) for _ in range(task.copies)]
    return TokenData(*anbn.encode(anbn.strings(ns), anbn.AnbnVocab()))


def acceptance(model: torch.nn.Module, task: AnbnTask) -> list[bool]:
    """Whether a^n b^n is accepted, for n = 1 .. max_test_n (one padded batch)."""
    inputs, targets = anbn.encode(anbn.strings(range(1, task.max_test_n + 1)), anbn.AnbnVocab())
    model.eval()
    with torch.no_grad():
        probs = torch.softmax(model(inputs).double(), dim=-1)
    return [anbn.accepts(probs[n - 1, : 2 * n + 1], targets[n - 1, : 2 * n + 1], task.threshold)
            for n in range(1, task.max_test_n + 1)]


def largest(accepted: list[bool]) -> int:
    """Largest n with every m <= n accepted (0 if a b is rejected)."""
    return next((i for i, ok in enumerate(accepted) if not ok), len(accepted))


def lstm_cell_states(model: PaperLSTM, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Hidden and cell states ``(T, n)`` each of one sequence ``(T,)``, in eval mode (the LSTM's own loop returns
    only the hidden states; this repeats its equations and keeps ``c_t``)."""
    n = model.n
    x = model.embedding(tokens)  # (T, e)
    W_h, W_x = model.gates.weight[:, :n], model.gates.weight[:, n:]
    act = torch.tanh if model.candidate == "tanh" else torch.sigmoid
    h, c = x.new_zeros(n), x.new_zeros(n)
    hs, cs = [], []
    for t in range(len(tokens)):
        g = W_x @ x[t] + model.gates.bias + W_h @ h
        f, i, o = torch.sigmoid(g[: 3 * n]).split(n)
        c = f * c + i * act(g[3 * n :])
        h = o * torch.tanh(c)
        hs.append(h)
        cs.append(c)
    return torch.stack(hs), torch.stack(cs)


def _trace(model: torch.nn.Module, spec: dict[str, Any], n: int) -> dict[str, list]:
    inputs, _ = anbn.encode(anbn.strings([n]), anbn.AnbnVocab())
    model.eval()
    with torch.no_grad():
        if spec["kind"] == "lstm":
            h, c = lstm_cell_states(model, inputs[0])
            return {"hidden": h.tolist(), "cell": c.tolist()}
        return {"hidden": model.states(inputs)[0].tolist()}


def run_all(models: list[str], seeds: list[int], task: AnbnTask, cfg: TrainConfig, store_dir: str | Path, *,
            retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Load or train every model for every seed (the label is ``"KIND UNITS seed S"``)."""
    check_choice("on_stale", on_stale, ["warn", "retrain", "error"])
    if not isinstance(models, (list, tuple)) or not models:
        raise ParameterError(f"models={models!r}: give a non-empty list such as ['srn 10', 'gru 10', 'lstm 10']")
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ParameterError(f"seeds={seeds!r}: give a non-empty list of seeds such as [0, 1, 2]")
    specs = {m: parse_model(m) for m in models}
    for s in seeds:
        check_int("seed", s, minimum=0)
    store = RunStore(store_dir, code_module=__name__)
    runs = {}
    for label, spec in specs.items():
        for seed in seeds:
            def train(checkpoint, spec=spec, seed=seed, label=label):
                seed_everything(seed)
                model = build(spec)
                config = TrainConfig(cfg.epochs, cfg.batch_size, cfg.lr, seed)
                history, wall = fit(model, training_data(task), None, config, checkpoint=checkpoint,
                                    desc=f"{label} seed {seed}")
                accepted = acceptance(model, task)
                final = {**history.rows[-1], "accepted": accepted, "largest_accepted": largest(accepted),
                         "trace": _trace(model, spec, task.trace_n),
                         "n_params": sum(p.numel() for p in model.parameters())}
                return history.rows, final, {}, wall

            params = {"task": asdict(task), "model": spec, "seed": seed, "train": asdict(cfg)}
            runs[f"{label} seed {seed}"] = store.get_or_train(EXPERIMENT, f"{label} seed {seed}", params, train,
                                                              retrain=retrain, on_stale=on_stale)
    return runs
