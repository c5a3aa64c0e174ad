"""The TPRU chapter's ablation of its few-role encoders (not in paper 002): why they stay at chance on logical
entailment, from the stored runs of :meth:`urnlib.chapters.tpru.experiment.Config.ablation_plan` beside the
chapter's main runs.

A setting is the encoder's model and what the ablation changes: the scalar biases ``b_b = b_x`` of eq. 5 at
initialisation (1 in the authors' code), a fixed factor on the unbinding scores (1 in the paper), the
normalisation of eq. 4 (sec. 4's modifications), the encoder's layers (:func:`layers_change`), or the
training: the optimiser, the learning rate and the gradient clipping, set against the chapter's main runs
(:func:`training_change`). For each setting: how many
seeds left chance (training loss below ln 2 - :data:`~urnlib.chapters.tpru.report_checks.NEAR_CHANCE`, the
measure of the chapter's :func:`~urnlib.chapters.tpru.report_checks.escape_line`), the validation and *hard*
accuracy, and how the top layer uses its roles (:func:`urnlib.chapters.tpru.features.role_use`); a setting's
rate of leaving chance is set against the original setting's by :func:`urnlib.rules.rates`.
:func:`settle_collapse` says, for the claims on encoders at chance, what the ablation found and what to run
next.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from urnlib import rules
from urnlib.models.palette import COLORBLIND
from urnlib.models.registry import Style
from urnlib.plots.curves import column_figure, panels_figure
from urnlib.chapters.tpru import report
from urnlib.chapters.tpru.report_checks import NEAR_CHANCE, left_chance
from urnlib.reports.common import cpu_hours
from urnlib.seeds import Seeds, Stat

__all__ = ["ORIGINAL", "TRAINING_KEYS", "setting_name", "training_change", "training_words", "layers_change",
           "groups", "left_count", "ablation_table", "ablation_figure", "ablation_line", "ablation_summary",
           "decisions",
           "rescue", "settle_collapse"]

ORIGINAL = "b = 1 (original)"  #: the authors' initialisation: the name of the setting it is compared with
#: one look per kind of setting (the curves of a figure differ by setting, not by model), in the book's
#: colour-blind palette; the settings of one kind in a figure take its shades (plots.curves.shaded)
_LOOKS = {"original": Style("original", COLORBLIND[7], "o", ":"),
          "bias": Style("bias", COLORBLIND[0], "s", "-"),
          "scale": Style("scale", COLORBLIND[1], "^", "-."),
          "variant": Style("variant", COLORBLIND[2], "D", "--"),
          "longer": Style("longer", COLORBLIND[4], "v", "-"),
          "optimisation": Style("optimisation", COLORBLIND[3], "P", "-"),
          "rate": Style("rate", COLORBLIND[5], "X", "--"),
          "depth": Style("depth", COLORBLIND[9], "*", "-")}
#: how sec. 4's modifications read in a setting's name
VARIANT_NAMES = {"mod1": "Modification I", "mod2": "Modification II", "mod3": "softmax (Modification III)"}


#: the training settings an ablation entry may change (a run's ``train`` parameters; ``clip_value`` is left
#: out of them when off)
TRAINING_KEYS = ("optimizer", "lr", "clip_value", "clip")
#: how an optimiser reads in a setting's name
OPTIMIZER_NAMES = {"adam": "Adam", "amsgrad": "Adam with AMSGrad", "adagrad": "Adagrad", "sgd": "SGD"}


def training_change(seeds: Seeds, base: Seeds | None) -> dict[str, Any]:
    """The training settings of ``seeds``' runs that differ from those of ``base`` (the original setting's
    runs; ``None``: none to compare with, nothing changed): ``{key: value}``, ``None`` where a clipping is
    off."""
    if base is None:
        return {}
    mine, usual = seeds[0].params.get("train", {}), base[0].params.get("train", {})
    return {key: mine.get(key) for key in TRAINING_KEYS if mine.get(key) != usual.get(key)}


def training_words(changes: dict[str, Any]) -> list[str]:
    """:func:`training_change`'s settings in words: ``["Adam with AMSGrad", "gradient values clipped at 10",
    "no norm clip"]``, ``["lr 0.003"]``."""
    words = {"optimizer": lambda v: OPTIMIZER_NAMES.get(v, v), "lr": lambda v: f"lr {v:g}",
             "clip_value": lambda v: "no value clip" if v is None else f"gradient values clipped at {v:g}",
             "clip": lambda v: "no norm clip" if v is None else f"gradient norm clipped at {v:g}"}
    return [words[key](changes[key]) for key in TRAINING_KEYS if key in changes]


def layers_change(seeds: Seeds, base: Seeds | None) -> int | None:
    """The encoder layers of ``seeds``' runs where they differ from those of ``base`` (the original setting's
    runs; ``None``: none to compare with), else ``None``."""
    if base is None:
        return None
    mine = seeds[0].params.get("architecture", {}).get("layers")
    return mine if mine != base[0].params.get("architecture", {}).get("layers") else None


def setting_name(spec: dict, train: dict[str, Any] | None = None, layers: int | None = None) -> str:
    """What a spec, the training settings ``train`` (:func:`training_change`) and the encoder ``layers``
    (:func:`layers_change`; ``None``: the chapter's) change: ``"b = 1 (original)"``, ``"b = 0"``, ``"b = 1,
    scores x 2.83"``, ``"b = 1, softmax (mod3)"``, ``"b = 1, lr 0.003"``, ``"b = 1, 1 layer"``."""
    bias, scale = spec.get("bias_init", 1.0), spec.get("score_scale", 1.0)
    variant, words = spec.get("variant", "tpru"), training_words(train or {})
    if layers is not None:
        words = [f"{layers} layer" + ("s" if layers != 1 else ""), *words]
    if bias == 1.0 and scale == 1.0 and variant == "tpru" and not words:
        return ORIGINAL
    return (f"b = {bias:g}" + (f", scores x {scale:.3g}" if scale != 1.0 else "")
            + (f", {VARIANT_NAMES.get(variant, variant)}" if variant != "tpru" else "")
            + "".join(f", {word}" for word in words))


def _kind(spec: dict, name: str = "", train: dict[str, Any] | None = None, layers: int | None = None) -> str:
    if name.endswith("epochs"):
        return "longer"
    if layers is not None:
        return "depth"
    if set(train or {}) - {"lr"}:
        return "optimisation"
    if train:
        return "rate"
    if spec.get("variant", "tpru") != "tpru":
        return "variant"
    if spec.get("score_scale", 1.0) != 1.0:
        return "scale"
    return "bias" if spec.get("bias_init", 1.0) != 1.0 else "original"


def groups(entailment: dict[str, Seeds], ablations: dict[str, Seeds]) -> dict[str, dict[str, Seeds]]:
    """``{encoder label: {setting name: Seeds}}`` for every encoder the ablation changes, the original
    setting first: the ablation's own runs at the original initialisation where it has them (more seeds),
    else the chapter's main runs of that encoder. An ablation label is its encoder's label, then what it
    changes after a comma (:func:`urnlib.chapters.tpru.entailment.ablation_label`); its training is set
    against the main runs' (those of its encoder, else any: they share it)."""
    out: dict[str, dict[str, Seeds]] = {}
    for label, seeds in ablations.items():
        spec = report.model_spec(seeds)
        encoder = label.split(",")[0]
        row = out.setdefault(encoder, {})
        if encoder in entailment and ORIGINAL not in row:
            row[ORIGINAL] = entailment[encoder]
        main = entailment.get(encoder) or next(iter(entailment.values()), None)
        name = setting_name(spec, training_change(seeds, main), layers_change(seeds, main))
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
    """How many of a group's runs left chance (:func:`urnlib.chapters.tpru.report_checks.left_chance`)."""
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
    initialisation and trained (``roles``: rows of :func:`urnlib.chapters.tpru.features.filler_use`,
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
    panels, styles = [], {}
    for encoder, settings in grouped.items():
        series = {}
        for name, seeds in settings.items():
            series[name] = report._curves(seeds, report._percent("valid_acc"))
            base = settings.get(ORIGINAL)
            kind = _kind(report.model_spec(seeds), name, training_change(seeds, base),
                         layers_change(seeds, base))
            styles.setdefault(name, _LOOKS[kind])
        panels.append({**report._accuracy_panel(series, "validation accuracy"), "title": encoder,
                       "integer_x": True})
    return panels_figure(panels, styles, rows=(len(panels) + 1) // 2, cols=2 if len(panels) > 1 else 1)


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


def ablation_summary(grouped: dict[str, dict[str, Seeds]]) -> str:
    """What the ablation finds, in short (Markdown): the settings whose rate of leaving chance the seeds
    decide against the original one's, and how many they leave undecided (each: :func:`ablation_line`)."""
    if not grouped:
        return ablation_line(grouped)
    found, open_ = [], 0
    for encoder, settings in decisions(grouped).items():
        for name, d in settings.items():
            if d.holds is None:
                open_ += 1
                continue
            where = "all encoders pooled" if encoder == "all" else encoder
            found.append(f"{where}, *{name}*: {'more' if d.holds else 'less'} often ({d.direction})")
    decided = ("; ".join(found) + "." if found else "none.")
    rest = (f" The other {open_} comparisons are not decided at their seeds." if found and open_ else
            f" {open_} comparisons are not decided at their seeds." if open_ else "")
    test = rules.RATES_RULE.split(";")[0]
    return (f"Settings that left chance more or less often than the original one, decided by {test}: "
            f"{decided}{rest}")


#: the learning rates the next experiment would try (ours: the preset's ``lr``)
NEXT_RATES = (3e-3, 3e-4)


def _authors_optimisation(clip: float | None) -> str:
    """The optimisation of paper 002's code as an experiment to run, against ours (``clip``: our norm)."""
    ours = f"clips their norm at {clip:g}" if clip else "does not clip them"
    return ("the optimisation of the authors' code (Adam with amsgrad, gradients clipped by value at 10 "
            f"where ours {ours})")


def rescue(settings: dict[str, Seeds], name: str) -> str | None:
    """How the setting ``name`` of one encoder's ``settings`` (:func:`groups`) took it off chance, in words:
    ``"every seed"`` where each of its seeds (more than one) left chance; ``"7 of 10 seeds (the original
    setting: 3 of 10, a rate decided lower by Fisher's exact test)"`` where its rate of leaving chance is
    decided higher than the original setting's (:func:`urnlib.rules.rates`); else ``None``."""
    seeds, base = settings.get(name), settings.get(ORIGINAL)
    if name == ORIGINAL or seeds is None or len(seeds) < 2:
        return None
    left = left_count(seeds)
    if left == len(seeds):
        return "every seed"
    if base is not None and _rate(name, [(seeds, base)]).holds:
        return (f"{left} of {len(seeds)} seeds (the original setting: {left_count(base)} of {len(base)}, a "
                "rate decided lower by Fisher's exact test)")
    return None


def _change(tried: dict[str, dict[str, Seeds]], name: str) -> dict[str, Any]:
    """The training change of the setting ``name`` (on the first encoder of ``tried`` that ran it)."""
    settings = next(settings for settings in tried.values() if name in settings)
    return training_change(settings[name], settings.get(ORIGINAL))


def settle_collapse(ent: dict[str, Seeds], grouped: dict[str, dict[str, Seeds]], labels: list[str],
                    compared: Sequence[str] = ()) -> str:
    """What would make the encoders ``labels`` that did not train evidence, and its cost: a retrain in the
    setting of the ablation (``grouped``: :func:`groups`) that took them off chance (:func:`rescue`), where
    one did (with the claim's other encoders ``compared``, so that the claim compares them in one setting);
    else what the ablation tried (the optimisation and the learning rates among it, each by what it found) and
    the next experiment: the optimisation of the authors' code and the learning rates of :data:`NEXT_RATES`
    not run yet, or, once both ran, the training set at Evans et al.'s size."""
    hours = cpu_hours(*(ent[k] for k in labels))
    tried = {k: grouped[k] for k in labels if k in grouped}
    rescued = lambda name: [k for k, settings in tried.items() if rescue(settings, name)]  # noqa: E731
    how = lambda name: "; ".join(f"{rescue(tried[k], name)} of {k}" for k in rescued(name))  # noqa: E731
    fixed = sorted({name for settings in tried.values() for name in settings if name != ORIGINAL
                    and rescued(name)})
    # a learning rate alone that rescued any encoder: the chapter's choice of rate on validation data, which
    # trains every encoder (those the ablation did not try too) at it
    anywhere = lambda name: [k for k, settings in grouped.items() if rescue(settings, name)]  # noqa: E731
    rate_only = sorted({name for settings in grouped.values() for name in settings
                        if name != ORIGINAL and anywhere(name) and set(_change(grouped, name)) == {"lr"}})
    if rate_only:
        name = rate_only[0]
        rate, usual = _change(grouped, name)["lr"], ent[labels[0]][0].params["train"]["lr"]
        found = "; ".join(f"{rescue(grouped[k], name)} of {k}" for k in anywhere(name))
        return (f"set `lr_choices: [{usual:g}, {rate:g}]`, so that every encoder of the chapter also trains "
                f"at lr {rate:g} and is read at the rate of its higher mean validation accuracy (the "
                f"chapter's learning-rate choice); at lr {rate:g} {found} left chance "
                f"(the chapter's ablation section): about {cpu_hours(*ent.values()):.1f} CPU hours, as the "
                "chapter's encoders took at their rate")
    if fixed:
        # the claim's other TPRUs too: a claim on roles or slices compares TPRUs trained alike
        others = [k for k in compared if k not in labels and k in ent
                  and ent[k][0].params["model"].get("kind") == "tpru"]
        every = [*labels, *others]
        alike = f", and {', '.join(others)} with them, so that the claim compares TPRUs trained alike" \
            if others else ""
        return (f"retrain {', '.join(labels)} in the ablation's setting {fixed[0]!r}, under which "
                f"{how(fixed[0])} left chance (the chapter's ablation section){alike}: "
                f"about {cpu_hours(*(ent[k] for k in every)):.1f} CPU hours, as these runs took")
    if not tried:
        return (f"the ablation of {', '.join(labels)}'s initialisation (scalar biases b_b = b_x of eq. 5 at "
                "0 instead of the authors' 1, and the softmax of sec. 4 in place of eq. 4), 3 seeds each: "
                f"about {2 * hours:.1f} CPU hours")
    changed = {(k, name): training_change(s, settings.get(ORIGINAL))
               for k, settings in tried.items() for name, s in settings.items()}

    def listed(pick, quote: bool = True) -> str:  # per encoder, the settings pick keeps, with their counts
        parts = []
        for k, settings in tried.items():
            chosen = [(f"{name!r}" if quote else name) + f" {left_count(s)} of {len(s)} seeds"
                      for name, s in settings.items() if pick(changed[k, name])]
            if chosen:
                parts.append(f"{k}: " + ", ".join(chosen))
        return "; ".join(parts)

    optimised = listed(lambda c: set(c) - {"lr"})
    rated = listed(lambda c: set(c) == {"lr"})
    text = f"the ablation found no setting in which every seed left chance ({listed(lambda c: not c, False)})"
    if optimised:
        text += f", nor with another optimisation ({optimised})"
    if rated:
        text += f", nor with another learning rate ({rated})"
    rates = [c["lr"] for c in changed.values() if set(c) == {"lr"}]
    left = [r for r in NEXT_RATES if not any(math.isclose(r, t) for t in rates)]
    todo = [] if optimised else [_authors_optimisation(ent[labels[0]][0].params["train"].get("clip"))]
    if left:
        rate = " and ".join(f"{r:g}" for r in left)
        todo.append(f"a learning-rate ablation ({rate})" if len(left) > 1 else f"the learning rate {rate}")
    if todo:  # three seeds of a setting cost what the main runs of these encoders took
        return (f"{text}; the next experiment{'s' if len(todo) > 1 else ''}, 3 seeds each: "
                f"{' and '.join(todo)}: about {(len(left) + (not optimised)) * hours:.1f} CPU hours")
    times = report.PAPER_TRAIN_SIZE / ent[labels[0]][0].params["task"]["train"]
    return (f"{text}; the next experiment: {', '.join(labels)} on {report.PAPER_TRAIN_SIZE:,} generated "
            f"training pairs (the size of Evans et al.'s training file, {times:.0f} times ours), every seed: "
            f"about {times * hours:.0f} CPU hours")
