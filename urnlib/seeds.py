"""Seeds as a dimension: the runs of one model under several seeds, and statistics across them.

A chapter's plan gives each run its coordinates as data (:meth:`urnlib.records.RunSpec.of`: ``label``,
the group of runs it belongs to, ``seed``, and the chapter's own such as ``model`` or ``setting``); its
name ``"<label> seed <s>"`` is derived from them for display and never parsed back. :func:`by_label`
groups the runs a plan returned by a coordinate into ``{label: Seeds}``, and :class:`Seeds` gives a
measure across the seeds as a :class:`Stat` (values, mean, standard deviation), which :mod:`urnlib.rules`
decides claims on (the plots draw each seed's values through seaborn's estimators:
:class:`urnlib.plots.series.SeedCurves`).

    runs = dyck.run(config)                     # {"3-TURN seed 0": Run, ...}
    seeds = by_label(runs)                      # {"3-TURN": Seeds([...]), ...}
    seeds["3-TURN"].stat(lambda run: run.final["closing_accuracy"])   # Stat(mean=..., sd=..., n=3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from urnlib.params import ParameterError, check_int, check_list

__all__ = ["Stat", "Seeds", "by_label", "coords_of", "split_setting", "check_seeds"]


def check_seeds(seeds: Any, name: str = "seeds") -> None:
    """A non-empty list of distinct non-negative integers."""
    check_list(
        name,
        seeds,
        example="[0, 1, 2]",
        each=lambda item, s: check_int(item, s, minimum=0, maximum=2**31 - 1),
    )
    if len(set(seeds)) != len(seeds):
        raise ParameterError(f"{name}={list(seeds)!r} repeats a seed; give each seed once, e.g. [0, 1, 2]")


@dataclass(frozen=True)
class Stat:
    """A measure across seeds: its values (one per seed, in seed order), their mean and sample standard
    deviation (0 for one value). NaN values (a seed where the measure is undefined) are left out of the
    mean and deviation and counted in ``missing``."""

    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Iterable[float]) -> "Stat":
        return cls(tuple(float(v) for v in values))

    @property
    def finite(self) -> np.ndarray:
        x = np.asarray(self.values, dtype=float)
        return x[~np.isnan(x)]

    @property
    def n(self) -> int:
        return int(self.finite.size)

    @property
    def missing(self) -> int:
        return len(self.values) - self.n

    @property
    def mean(self) -> float:
        return float(self.finite.mean()) if self.n else math.nan

    @property
    def sd(self) -> float:
        return float(self.finite.std(ddof=1)) if self.n > 1 else 0.0

    @property
    def low(self) -> float:
        return self.mean - self.sd

    @property
    def high(self) -> float:
        return self.mean + self.sd

    def mean_sd(self, digits: int = 3, empty: str = "n/a") -> str:
        """``"0.912 ± 0.004"`` (mean ± sd over the seeds); one value: ``"0.912"``; none: ``empty``. Where
        every seed gave the same value, the value without trailing zeros and an sd of 0: ``"0 ± 0"``,
        ``"0.2 ± 0"`` (not ``"0.000 ± 0.000"``: an exact value has no digits to pad)."""
        if not self.n:
            return empty
        if self.n > 1 and float(np.ptp(self.finite)) == 0:
            exact = f"{self.mean:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{self.mean:.0f}"
            return f"{'0' if exact in ('-0', '') else exact} ± 0"
        return f"{self.mean:.{digits}f}" + (f" ± {self.sd:.{digits}f}" if self.n > 1 else "")

    def text(self, digits: int = 3) -> str:
        """``"0.912 ± 0.004 (3 seeds)"``; one value: ``"0.912 (1 seed)"``."""
        if not self.n:
            return "n/a"
        return f"{self.mean_sd(digits)} ({self.n} seed{'s' if self.n != 1 else ''})"

    def __str__(self) -> str:
        return self.text()


class Seeds(Sequence):
    """The runs of one label, one per seed, in seed order (a sequence of :class:`~urnlib.results.Run`)."""

    def __init__(self, label: str, runs: Sequence, seeds: Sequence[int | None]):
        if len(runs) != len(seeds) or not runs:
            raise ValueError(f"{label}: {len(runs)} runs for seeds {list(seeds)}")
        order = sorted(range(len(runs)), key=lambda i: -1 if seeds[i] is None else seeds[i])
        self.label = label
        self.runs = [runs[i] for i in order]
        self.seeds = [seeds[i] for i in order]

    def __getitem__(self, i):
        return self.runs[i]

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        return f"Seeds({self.label!r}, seeds={self.seeds})"

    def stat(self, measure: Callable[[Any], float]) -> Stat:
        """``measure(run)`` of every seed's run."""
        return Stat.of(measure(run) for run in self.runs)

    def final(self, key: str) -> Stat:
        """The final metric ``key`` of every seed."""
        return self.stat(lambda run: run.final[key])

    def best(self, key: str, minimize: bool = True) -> Stat:
        """The best value of the epoch metric ``key`` of every seed (its minimum, or maximum)."""
        pick = min if minimize else max
        return self.stat(lambda run: pick(run.column(key)))

    def each(self, fn: Callable[[Any], Any]) -> list:
        return [fn(run) for run in self.runs]


def coords_of(run: Any) -> dict[str, Any]:
    """A run's coordinates (:class:`~urnlib.records.RunSpec`): ``run.coords``, or for an object without
    any (a hand-made run in a test) ``{"label": run.name, "seed": None}``: its name is its own label."""
    coords = getattr(run, "coords", None)
    return coords if coords else {"label": getattr(run, "name", None), "seed": None}


def by_label(runs: dict[str, Any] | Iterable[Any], by: str = "label") -> dict[Any, Seeds]:
    """Group runs by a coordinate (default ``label``: every coordinate but the seed) into
    ``{value: Seeds}``, in the order the values first appear; each group's seeds are its runs' ``seed``
    coordinates. ``runs``: a plan's ``{name: run}`` or runs."""
    groups: dict[Any, tuple[list, list]] = {}
    for run in runs.values() if isinstance(runs, dict) else runs:
        coords = coords_of(run)
        if by not in coords:
            raise ParameterError(f"run {getattr(run, 'name', run)!r} has no coordinate {by!r}; it has "
                                 f"{sorted(coords)}")
        runs_, seeds_ = groups.setdefault(coords[by], ([], []))
        runs_.append(run)
        seeds_.append(coords.get("seed"))
    return {value: Seeds(str(value), r, s) for value, (r, s) in groups.items()}


def split_setting(grouped: dict[str, Seeds], setting: str) -> tuple[dict[str, Seeds], dict[str, Seeds]]:
    """``(mine, rest)`` of :func:`by_label`'s groups: the groups whose ``setting`` coordinate is
    ``setting``, as ``{model: Seeds}`` (their ``model`` coordinate), and every other group as it was (a
    chapter that trains its models under several settings)."""
    mine, rest = {}, {}
    for label, seeds in grouped.items():
        coords = coords_of(seeds.runs[0]) if len(seeds) else {}
        if coords.get("setting") == setting:
            mine[coords["model"]] = seeds
        else:
            rest[label] = seeds
    return mine, rest
