"""The TPRU chapter's initialisation ablation (not in paper 002): why few-role TPRU encoders stay at chance on
logical entailment, from the stored runs of :meth:`urnlib.experiments.tpru.Config.ablation_plan` beside the
chapter's main runs.

A setting is the encoder's model and what the ablation changes: the scalar biases ``b_b = b_x`` of eq. 5 at
initialisation (1 in the authors' code), a fixed factor on the unbinding scores (1 in the paper), or the
normalisation of eq. 4 (sec. 4's modifications). For each setting: how many seeds left chance (training loss
below ln 2 - :data:`~urnlib.reports.tpru_checks.NEAR_CHANCE`, the measure of the chapter's
:func:`~urnlib.reports.tpru_checks.escape_line`), the validation and *hard* accuracy, and how the top layer
uses its roles (:func:`urnlib.experiments.tpru_features.role_use`); a setting's rate of leaving chance is set
against the original setting's by :func:`urnlib.rules.rates`.
"""

from __future__ import annotations

import pandas as pd

from urnlib import rules
from urnlib.models.registry import Style
from urnlib.plots.curves import column_figure, panels_figure
from urnlib.reports import tpru as report
from urnlib.reports.tpru_checks import NEAR_CHANCE, left_chance
from urnlib.seeds import Seeds, Stat

__all__ = ["ORIGINAL", "setting_name", "groups", "left_count", "ablation_table", "ablation_figure",
           "ablation_line", "decisions"]

ORIGINAL = "b = 1 (original)"  #: the authors' initialisation: the name of the setting it is compared with
#: one look per kind of setting (the curves of a figure differ by setting, not by model)
_LOOKS = {"original": Style("original", ("#636363",), "o", ":"),
          "bias": Style("bias", ("#2166ac", "#67a9cf"), "s", "-"),
          "scale": Style("scale", ("#d95f02",), "^", "-."),
          "variant": Style("variant", ("#1b7837", "#7fbf7b"), "D", "--"),
          "longer": Style("longer", ("#762a83",), "v", "-")}
#: how sec. 4's modifications read in a setting's name
VARIANT_NAMES = {"mod1": "Modification I", "mod2": "Modification II", "mod3": "softmax (Modification III)"}


def setting_name(spec: dict) -> str:
    """What a spec changes: ``"b = 1 (original)"``, ``"b = 0"``, ``"b = 1, scores x 2.83"``, ``"b = 1, softmax
    (mod3)"``."""
    bias, scale = spec.get("bias_init", 1.0), spec.get("score_scale", 1.0)
    variant = spec.get("variant", "tpru")
    if bias == 1.0 and scale == 1.0 and variant == "tpru":
        return ORIGINAL
    return (f"b = {bias:g}" + (f", scores x {scale:.3g}" if scale != 1.0 else "")
            + (f", {VARIANT_NAMES.get(variant, variant)}" if variant != "tpru" else ""))


def _kind(spec: dict, name: str = "") -> str:
    if name.endswith("epochs"):
        return "longer"
    if spec.get("variant", "tpru") != "tpru":
        return "variant"
    if spec.get("score_scale", 1.0) != 1.0:
        return "scale"
    return "bias" if spec.get("bias_init", 1.0) != 1.0 else "original"


def groups(entailment: dict[str, Seeds], ablations: dict[str, Seeds]) -> dict[str, dict[str, Seeds]]:
    """``{encoder label: {setting name: Seeds}}`` for every encoder the ablation changes, the original
    setting first: the ablation's own runs at the original initialisation where it has them (more seeds),
    else the chapter's main runs of that encoder. An ablation label is its encoder's label, then what it
    changes after a comma (:func:`urnlib.experiments.tpru_entailment.ablation_label`)."""
    out: dict[str, dict[str, Seeds]] = {}
    for label, seeds in ablations.items():
        spec = report.model_spec(seeds)
        encoder = label.split(",")[0]
        row = out.setdefault(encoder, {})
        if encoder in entailment and ORIGINAL not in row:
            row[ORIGINAL] = entailment[encoder]
        name = setting_name(spec)
        least, usual = _least(seeds), _least(entailment[encoder]) if encoder in entailment else None
        if least is not None and least != usual:
            name = (name.replace(" (original)", "") if name == ORIGINAL else name) + f", {least}+ epochs"
        if name == ORIGINAL and ORIGINAL in row and len(row[ORIGINAL]) >= len(seeds):
            continue
        row[name] = seeds
    return {encoder: dict(sorted(row.items(), key=lambda kv: kv[0] != ORIGINAL))
            for encoder, row in out.items()}


def _least(seeds: Seeds) -> int | None:
    """The epochs a group's runs trained before patience could stop them (their stop's ``min_epochs``)."""
    stop = seeds[0].params.get("stop") or {}
    return stop.get("min_epochs")


def left_count(seeds: Seeds) -> int:
    """How many of a group's runs left chance (:func:`urnlib.reports.tpru_checks.left_chance`)."""
    return sum(left_chance(run) is not None for run in seeds)


def _roles(rows: list[dict], seeds: Seeds) -> dict[str, Stat] | None:
    row = next((r for r in rows if r["model"] == seeds.label), None)
    if row is None:
        return None
    return {"top_init": Stat.of(100 * t for t, _ in row["init"]),
            "dep_init": Stat.of(d for _, d in row["init"]),
            "top_trained": Stat.of(100 * t for t, _ in row["trained"]),
            "dep_trained": Stat.of(d for _, d in row["trained"])}


def _percent(stat: Stat) -> str:  # the seeds are in the caption, not in every cell
    return Stat.of(100 * v for v in stat.values).mean_sd(1)


def ablation_table(grouped: dict[str, dict[str, Seeds]], roles: list[dict]) -> pd.DataFrame:
    """One row per encoder and setting (column ``setting``): the seeds that left chance, the best validation
    accuracy and the *hard* accuracy (%, mean ± sd over the seeds), and how the top layer used its roles at
    initialisation and trained (``roles``: rows of :func:`urnlib.experiments.tpru_features.filler_use`,
    matched by label)."""
    out = []
    for encoder, settings in grouped.items():
        for name, seeds in settings.items():
            use = _roles(roles, seeds)
            row = {"encoder": encoder, "setting": name,
                   "left chance": f"{left_count(seeds)} of {len(seeds)}",
                   "validation accuracy (%)": _percent(report.valid_accuracy(seeds)),
                   "hard (%)": _percent(report.split_accuracy(seeds, "hard"))}
            for key, column, digits in (("top_init", "top role, initial (%)", 0),
                                        ("dep_init", "input dependence, initial", 3),
                                        ("top_trained", "top role, trained (%)", 0),
                                        ("dep_trained", "input dependence, trained", 3)):
                row[column] = use[key].mean_sd(digits) if use else "-"
            out.append(row)
    return pd.DataFrame(out)


def ablation_figure(grouped: dict[str, dict[str, Seeds]]):
    """One panel per encoder: validation accuracy (%) per epoch of every setting (each seed's curve where the
    seeds stop at different epochs: :class:`~urnlib.plots.series.SeedCurves`); without an ablation, one empty
    panel that says so."""
    if not grouped:
        fig, (ax,), _ = column_figure(1, letters=False)
        ax.axis("off")
        ax.text(0.5, 0.5, "no ablation at this preset (ablations: [])", ha="center", va="center")
        return fig
    panels, styles, kinds = [], {}, {}
    for encoder, settings in grouped.items():
        series = {}
        for name, seeds in settings.items():
            series[name] = report._curves(seeds, report._percent("valid_acc"))
            kind = _kind(report.model_spec(seeds), name)
            kinds[name] = kind
            earlier = sum(k == kind for n, k in kinds.items() if n != name)
            styles.setdefault(name, _shade(_LOOKS[kind], earlier))
        panels.append({**report._accuracy_panel(series, "validation accuracy"), "title": encoder,
                       "integer_x": True})
    return panels_figure(panels, styles, rows=(len(panels) + 1) // 2, cols=2 if len(panels) > 1 else 1)


def _shade(style: Style, index: int) -> Style:
    colours = style.colours[min(index, len(style.colours) - 1):]
    return Style(style.word, colours, style.marker, style.linestyle, style.shade)


def decisions(grouped: dict[str, dict[str, Seeds]]) -> dict[str, dict[str, rules.Decision]]:
    """``{encoder: {setting: Decision}}``: each setting's rate of leaving chance against the original
    initialisation's (:func:`urnlib.rules.rates`); and under ``"all"`` each setting run on more than one
    encoder, its seeds and the original's pooled over those encoders."""
    out: dict[str, dict[str, rules.Decision]] = {}
    pooled: dict[str, list[tuple[Seeds, Seeds]]] = {}
    for encoder, settings in grouped.items():
        base = settings.get(ORIGINAL)
        for name, seeds in settings.items():
            if base is None or name == ORIGINAL:
                continue
            out.setdefault(encoder, {})[name] = _rate(name, [(seeds, base)])
            pooled.setdefault(name, []).append((seeds, base))
    out["all"] = {name: _rate(name, pairs) for name, pairs in pooled.items() if len(pairs) > 1}
    return out


def _rate(name: str, pairs: list[tuple[Seeds, Seeds]]) -> rules.Decision:
    return rules.rates(sum(left_count(s) for s, _ in pairs), sum(len(s) for s, _ in pairs),
                       sum(left_count(b) for _, b in pairs), sum(len(b) for _, b in pairs),
                       what="left chance", names=(name, ORIGINAL))


def ablation_line(grouped: dict[str, dict[str, Seeds]]) -> str:
    """What the ablation finds, in words (Markdown): per setting, how often the seeds left chance against the
    original initialisation, and whether that difference is decided."""
    if not grouped:
        return "No ablation was run at this preset (the parameter `ablations` is empty)."
    parts = []
    for encoder, settings in decisions(grouped).items():
        for name, d in settings.items():
            where = "all encoders pooled" if encoder == "all" else encoder
            verdict = ("more often than in the original setting" if d.holds else "less often"
                       if d.holds is False else f"not decided ({d.undecided})")
            parts.append(f"* {where}, *{name}*: {d.direction}; {verdict}.")
    return (f"Seeds that left chance (training loss below ln 2 - {NEAR_CHANCE}) in each setting, against the "
            f"original one ({rules.RATES_RULE}):\n\n" + "\n".join(parts))
