"""Language modelling with the TPRU and the LSTM on the Brown corpus, and the roles' PMI with POS tags
(stand-ins for paper 002 Tables 4 and 5): the model, the tags, the PMI and the training of one run.

Table 4 of paper 002 compares two-layer TPRU and LSTM language models (dim 1024, the readout tied to the
embedding, appendix C.3) by perplexity on WikiText-103 and WikiText-2; neither is reachable offline. Here both
train on the Brown corpus as :mod:`urnlib.tasks.brown_lm` prepares it (a stream of tokens in corpus
order, split into contiguous train / validation / test parts, rare words ``<unk>``; rows of ``warmup`` context
tokens and ``window`` predicted ones) in the one loop :func:`urnlib.train.fit`, whose monitor keeps the
weights of the epoch with the lowest validation perplexity (C.3: "the best one is selected based on perplexity
on the validation set": ``TrainConfig(monitor="valid_ppl", keep_best=True)``); they are scored on the test
part, batch by batch.

Table 5 counts, for the trained TPRU, the maximally selected role ``beta_t = argmax_n (f_t)_n`` of the top
layer at every token against the token's POS tag, and reports the top two PMI values per tag. The paper's tags
come from spaCy on MNLI sentences (17 universal POS tags); ours are Brown's gold tags of the test part, mapped
to the same 17 universal tags by :func:`brown_to_upos`, token by token (:func:`test_tags` checks the
alignment). PMI uses the natural logarithm (the paper does not say which), ``PMI(r, t) = log p(r, t) / (p(r)
p(t))`` with the empirical frequencies. The same counts for the untrained TPRU (same seed, before the first
step) tell how much of the association comes from the word embeddings alone. A run stores these numbers and
the model's weights.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import torch

from urnlib.corpora import text
from urnlib.corpora.brown import brown_sentences
from urnlib.models.tpru_counts import weight_matrix_count
from urnlib.models.tpru_stack import StackLM
from urnlib.params import ParameterError, check_bool, check_float, check_int, check_list
from urnlib.progress import progress
from urnlib.results import Run, RunSpec, Trained
from urnlib.tasks.brown_lm import (BROWN_SENTENCES, BROWN_TOKENS, BROWN_TYPES, BrownTask, make_data,
                                   next_token_probs, perplexity, rows)
from urnlib.tokens import device_of
from urnlib.train import TokenData, TrainConfig, fit, seed_everything

#: the BROWN_ counts are urnlib.tasks.brown_lm's, named here for the chapter's config
__all__ = ["EXPERIMENT", "COMPONENTS", "UPOS", "BROWN_TOKENS", "BROWN_TYPES", "BROWN_SENTENCES", "LMSetup",
           "brown_to_upos", "test_tags", "reading_positions", "selected_roles", "role_tag_pmi", "resized",
           "check_sizes", "lm_label",
           "build_lm", "train_run", "rebuild_lm", "check_brown_split", "check_brown_corpus"]

EXPERIMENT = "tpru_lm"
#: what a run computes depends on: the stack language model (model.stack_lm; torch's GRU and LSTM layers count
#: here) and its TPRU layers, the Brown stream, the loop and this module's scoring and PMI
COMPONENTS = ("experiment.tpru_lm", "data.brown_stream", "model.stack_lm", "model.tpru", "train.loop")
#: the 17 universal POS tags (Universal Dependencies; spaCy's ``pos_``, paper 002 sec. 6.2)
UPOS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT",
        "SCONJ", "SYM", "VERB", "X")
_UPOS_OF = {
    **dict.fromkeys(["nn", "nns", "nn$", "nns$", "nr", "nrs", "nr$"], "NOUN"),
    **dict.fromkeys(["np", "nps", "np$", "nps$"], "PROPN"),
    **dict.fromkeys(["vb", "vbd", "vbg", "vbn", "vbz"], "VERB"),
    **dict.fromkeys(["be", "bed", "bedz", "beg", "bem", "ben", "ber", "bez", "hv", "hvd", "hvg", "hvn", "hvz",
                     "do", "dod", "doz", "md"], "AUX"),
    **dict.fromkeys(["jj", "jjr", "jjs", "jjt", "jj$", "od"], "ADJ"),
    **dict.fromkeys(["rb", "rbr", "rbt", "rb$", "rn", "ql", "qlp", "wql", "wrb", "abl"], "ADV"),
    **dict.fromkeys(["in", "rp"], "ADP"),
    "cc": "CCONJ", "cs": "SCONJ",
    **dict.fromkeys(["at", "ap", "ap$", "abn", "abx", "dt", "dt$", "dti", "dts", "dtx", "wdt"], "DET"),
    **dict.fromkeys(["pp$", "pp$$", "ppl", "ppls", "ppo", "pps", "ppss", "pn", "pn$", "wp$", "wpo", "wps",
                     "ex"], "PRON"),
    **dict.fromkeys(["cd", "cd$"], "NUM"),
    **dict.fromkeys(["to", "*"], "PART"),  # infinitival to; * is Brown's tag of not / n't
    "uh": "INTJ",
    **dict.fromkeys([".", ",", ":", "(", ")", "--", "``", "''", "'"], "PUNCT"),
}


def brown_to_upos(tag: str) -> str:
    """A Brown tag (as in the corpus files) -> one of the 17 universal POS tags (:data:`UPOS`).

    Our mapping, in the spirit of Petrov et al.'s (2012) brown -> universal table, refined to UD's 17 tags:
    nouns NOUN (``nr`` adverbial nouns too), proper nouns PROPN, ``be``/``have``/``do`` forms and modals AUX
    (UD tags main-verb *have* VERB; Brown does not tell them apart), ``rp`` ADP (UD's English particles),
    ordinals ADJ, ``to`` and ``*`` (not) PART, ``fw-`` (foreign words) and ``nil`` X. A contraction
    (``pps+bez``, *it's*) takes the class of its first part; ``-tl``/``-hl``/``-nc`` and a negating ``*``
    suffix are dropped."""
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
    """The language models compared (paper 002 appendix C.3, scaled down); the values come from the config."""

    d: int  # state size and embedding size
    layers: int  # recurrent layers
    n_roles: int  # TPRU roles N
    slices: int  # TPRU slices (appendix E)
    dropout: float  # on the embeddings, between the layers and before the readout
    tie_weights: bool  # the readout tied to the input embedding (C.3)

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
    :func:`~urnlib.corpora.text.split_by_tokens` (which looks only at sentence lengths), so the tags line up
    token by token; the words are checked against the stream (a mismatch raises ``RuntimeError``)."""
    data = make_data(task)
    split = text.split_by_tokens(_tagged_sentences(task), task.train_tokens, task.valid_tokens,
                                 task.test_tokens or None)
    pairs = [p for s in split.test for p in s]
    words = [w.lower() if task.lower else w for w, _ in pairs]
    ids = [data.vocab.index.get(w, 0) for w in words]
    if ids != data.streams["test"]:
        stream = data.streams["test"]
        bad = next((i for i, (a, b) in enumerate(zip(ids, stream)) if a != b), min(len(ids), len(stream)))
        raise RuntimeError(f"tags and test stream disagree at token {bad} ({len(ids)} tagged tokens, "
                           f"{len(data.streams['test'])} in the stream)")
    return [brown_to_upos(t) for _, t in pairs]


def reading_positions(n_tokens: int, window: int,
                      warmup: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Where each token of a stream is *read* in the rows of :func:`urnlib.tasks.brown_lm.rows`.

    Row k's input at column j is stream token ``i = k window + j - warmup - 1`` (the token before the target
    of that column). Over the predicted columns ``j >= warmup`` every token ``0 <= i < n_tokens - 1`` is read
    exactly once (the last token is only predicted). Returns ``(row, column, token index)``, three long
    tensors, in token order."""
    i = torch.arange(n_tokens - 1)
    k = (i + 1) // window
    j = i + 1 - k * window + warmup
    return k, j, i


@torch.no_grad()
def selected_roles(model: StackLM, data: TokenData, window: int, warmup: int, n_tokens: int,
                   batch_size: int = 256) -> np.ndarray:
    """``beta_t = argmax_n (f_t)_n`` of the top TPRU layer when it reads token t, for tokens ``0 .. n_tokens -
    2`` of the stream cut into ``data`` (with s > 1 slices, the argmax of the fillers summed over the
    slices)."""
    model.eval()
    best = []
    for i in range(0, len(data), batch_size):
        f = model.fillers(data.inputs[i : i + batch_size].to(device_of(model))).cpu()  # (B, T, [s,] N)
        if f.dim() == 4:
            f = f.sum(dim=2)
        best.append(f.argmax(dim=-1))
    beta = torch.cat(best)  # (R, T)
    k, j, _ = reading_positions(n_tokens, window, warmup)
    return beta[k, j].numpy()


def role_tag_pmi(roles: Sequence[int], tags: Sequence[str], *, top: int = 2,
                 min_joint: int = 1) -> dict[str, Any]:
    """PMI between the selected role and the tag (paper 002 sec. 6.2, Table 5).

    ``PMI(r, t) = log(p(r, t) / (p(r) p(t))) = log(c(r, t) n / (c(r) c(t)))`` (natural log) from the counts
    over the n tokens. For each tag, the ``top`` roles by PMI among the pairs seen at least ``min_joint``
    times.

    Returns: ``{"tokens": n, "roles_used": distinct roles, "mutual_information": I(role; tag) (nats, all
        pairs), "tags": {tag: {"count": c(t), "top": [{"role", "pmi", "joint", "role_count"}, ...]}}}``, tags
        by count.
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
        out[tag] = {"count": count,
                    "top": [{"role": r, "pmi": p, "joint": joint[r, tag], "role_count": c_role[r]}
                            for p, r in cands]}
    return {"tokens": n, "roles_used": len(c_role), "mutual_information": mi, "tags": out}


def resized(setup: LMSetup, d: int) -> LMSetup:
    """``setup`` at dimension ``d``, the TPRU's roles scaled with it (at least one): a size trend keeps the
    ratio of roles to dimension, as paper 002 Table 4's 1,024 roles at dimension 1,024 do."""
    return replace(setup, d=d, n_roles=max(1, setup.n_roles * d // setup.d))


def check_sizes(sizes: Any, d: int, slices: int) -> None:
    """``lm_sizes``: a list of dimensions (``[]``: none), each an integer >= 1 other than ``d`` (``lm_d``,
    trained already) and divisible by ``slices``, none twice.

    Raises:
        ParameterError: naming ``lm_sizes`` and what to write.
    """
    example = f"[{max(1, d // 2)}] (the language models again at half lm_d={d}; [] for none)"
    if not isinstance(sizes, (list, tuple)):
        raise ParameterError(f"lm_sizes={sizes!r} must be a list of dimensions, e.g. {example}")
    if sizes:
        check_list("lm_sizes", sizes, example=example, each=lambda name, v: check_int(name, v, minimum=1))
    for v in sizes:
        if v == d or v % slices:
            raise ParameterError(f"lm_sizes={list(sizes)!r}: each dimension other than lm_d={d} (trained "
                                 f"already) and divisible by lm_slices={slices}, e.g. {example}")


def lm_label(kind: str, setup: LMSetup) -> str:
    """``"TPRU LM 64 N=64"``, ``"LSTM LM 64"``: the label of a model (its runs are ``"<label> seed <s>"``;
    "LM" keeps them apart from the entailment encoders' runs, ``"TPRU 64 N=64 seed 0"``)."""
    return f"{kind.upper()} LM {setup.d}" + (f" N={setup.n_roles}" if kind == "tpru" else "")


def build_lm(kind: str, vocab_size: int, setup: LMSetup, seed: int) -> StackLM:
    """The language model of ``kind`` (``"tpru"``, ``"lstm"``, ``"gru"``), initialised from ``seed``: the
    embedding of size d (the readout tied to it with ``tie_weights``) and ``layers`` recurrent layers of size
    d."""
    seed_everything(seed)
    opts = {"n_roles": setup.n_roles, "slices": setup.slices} if kind == "tpru" else {}
    return StackLM(kind, vocab_size, setup.d, setup.d, setup.layers, dropout=setup.dropout,
                   tie_weights=setup.tie_weights, seed=seed, **opts)


def train_run(spec: RunSpec, checkpoint: Path | None) -> Trained:
    """Train the language model of one planned run (``params``: ``task``, ``setup``, ``kind``, ``train``,
    ``pmi_min_joint``).

    The history records the validation perplexity after every epoch (:func:`urnlib.tasks.brown_lm.
    next_token_probs`, 64 rows at a time); the loop's monitor (``train.monitor``) keeps the weights of the
    best epoch. The final metrics: the validation and test perplexity of those weights, ``train_ppl`` (exp of
    that epoch's mean training loss, in training mode), ``best_epoch``, parameter counts, the data statistics,
    and for the TPRU the role-tag PMI of the trained and of the untrained model (:func:`role_tag_pmi`)."""
    params = spec.params
    kind, task, setup = params["kind"], BrownTask(**params["task"]), LMSetup(**params["setup"])
    cfg, min_joint = TrainConfig(**params["train"]), params["pmi_min_joint"]
    d = make_data(task)
    parts = {p: rows(d.streams[p], task.window, task.warmup, d.start_id) for p in d.streams}
    model = build_lm(kind, len(d.vocab.tokens), setup, cfg.seed)
    n_test = len(d.streams["test"])

    def pmi(m: StackLM) -> dict[str, Any]:
        roles = selected_roles(m, parts["test"], task.window, task.warmup, n_test)
        return role_tag_pmi(roles, tags[: n_test - 1], min_joint=min_joint)

    extra: dict[str, Any] = {}
    if kind == "tpru":
        tags = test_tags(task)
        extra["pmi_untrained"] = pmi(model)

    def evaluate(m):  # batched: never more than 64 rows of logits
        return {"valid_ppl": perplexity(next_token_probs(m, parts["valid"]))}

    history, _ = fit(model, parts["train"], None, cfg, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name)
    probs = {p: next_token_probs(model, parts[p])
             for p in progress(("valid", "test"), desc=f"{spec.name}: scoring")}
    best = history.best_epoch or len(history.rows)  # the monitor's epoch (without a monitor: the last)
    final = {**{f"{p}_ppl": perplexity(probs[p]) for p in probs},
             "train_ppl": math.exp(history.rows[best - 1]["train_loss"]), "best_epoch": best,
             "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
             "recurrent_params": sum(p.numel() for p in model.stack.parameters() if p.requires_grad),
             "recurrent_weights": weight_matrix_count(model.stack), "data": d.stats, **extra}
    if kind == "tpru":
        final["pmi"] = pmi(model)
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)


def rebuild_lm(run: Run, vocab_size: int) -> StackLM:
    """The trained language model of a stored run (one that stored its weights), in eval mode; ``vocab_size``
    is ``run.final["data"]["vocabulary"] + 1`` (the vocabulary and the start symbol)."""
    return run.model(build=lambda p: build_lm(p["kind"], vocab_size, LMSetup(**p["setup"]),
                                              p["train"]["seed"]))


# ---------------------------------------------------------------------------------- the chapter's checks
def _tokens_wanted(config: Any) -> int:
    return config.lm_train_tokens + config.lm_valid_tokens + config.lm_test_tokens


def check_brown_split(config: Any) -> None:
    """The chapter's Brown split parameters (``lm_*`` of :class:`urnlib.chapters.tpru.experiment.Config`),
    named as the user passed them; the split fits the corpus."""
    check_int("lm_train_tokens", config.lm_train_tokens, minimum=1)
    check_int("lm_valid_tokens", config.lm_valid_tokens, minimum=1)
    check_int("lm_test_tokens", config.lm_test_tokens, minimum=0)
    check_int("lm_min_count", config.lm_min_count, minimum=1)
    check_bool("lm_lower", config.lm_lower)
    check_int("lm_max_sentences", config.lm_max_sentences, minimum=0)
    check_int("lm_window", config.lm_window, minimum=1)
    check_int("lm_warmup", config.lm_warmup, minimum=0)
    wanted = _tokens_wanted(config)
    if not config.lm_max_sentences and wanted >= BROWN_TOKENS:
        raise ParameterError(f"lm_train_tokens + lm_valid_tokens + lm_test_tokens = {wanted:,} but the "
                             f"Brown corpus has {BROWN_TOKENS:,} tokens: lower them (lm_test_tokens=0 takes "
                             "all that is left)")


def check_brown_corpus(config: Any) -> None:
    """The corpus is installed and is the pinned package, whole (:func:`urnlib.corpora.brown.brown_files`
    calls :func:`urnlib.corpora.npm.verify`); a slice of ``lm_max_sentences`` holds the split."""
    from urnlib.corpora.brown import brown_files

    brown_files()
    if config.lm_max_sentences:
        tokens = sum(len(s) for s in islice(brown_sentences(), config.lm_max_sentences))
        wanted = _tokens_wanted(config)
        if wanted >= tokens:
            raise ParameterError(
                f"lm_train_tokens + lm_valid_tokens + lm_test_tokens = {wanted:,} but the first "
                f"lm_max_sentences={config.lm_max_sentences:,} sentences of Brown hold {tokens:,} tokens: "
                "lower them or raise lm_max_sentences (0 reads the whole corpus)")
