"""Tables, figures and lines of text of the TPRU chapter (paper 002), from the stored runs (``label ->
Seeds``, as :func:`urnlib.chapters.tpru.experiment.run` gives them) and the rows of the sec. 4 checks; the
claims are in :mod:`urnlib.chapters.tpru.claims`. A model's number is a :class:`~urnlib.seeds.Stat` over its
seeds at each run's best validation epoch (the runs keep that epoch's weights, so their final metrics are
its). Figures draw each label's per-epoch curves over its seeds (:class:`~urnlib.plots.series.SeedCurves`):
the mean with a ± one standard deviation band where every seed trained the same epochs, else each seed's curve
(thin) and the mean over the epochs every seed reached, so the mean never jumps where a seed stops.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import pandas as pd

from urnlib import rules
from urnlib.plots.curves import panels_figure
from urnlib.plots.series import SeedCurves
from urnlib.reports.common import look, looks
from urnlib.results import Run
from urnlib.seeds import Seeds, Stat

CHAPTER = "tpru"
SPLITS = ("valid", "easy", "hard", "big", "massive", "exam")
TEST_SPLITS = SPLITS[1:]
#: paper 002 Table 2, plain architecture, dim 64 (accuracy %, and "# params" as printed)
PAPER_TABLE2 = {name: {**dict(zip(SPLITS, values)), "params": params} for name, values, params in (
    ("GRU", (84.3, 68.2, 84.3, 77.0, 57.4, 66.8), "49.1k"),
    ("TPRU - 512", (88.6, 73.1, 88.4, 79.0, 62.0, 71.8), "98.3k"),
    ("LSTM", (88.6, 76.3, 88.4, 79.0, 64.7, 76.4), "131.1k"))}
#: Evans et al.'s training set (paper 002 uses their data): about 100k pairs
PAPER_TRAIN_SIZE = 100_000
PAPER_SEEDS = 3  #: paper 002 sec. 5: "averaged from the results of three random initialisations"
PAPER_ROLES = 512  #: Table 2's TPRU
PAPER_LM = {"d": 1024, "n_roles": 1024, "epochs": 64}  #: appendix C.3 and Table 4
#: "Mean 2^#Vars" row of Table 2 (Evans et al.'s Table 1)
PAPER_MEAN_WORLDS = {"valid": 75.7, "easy": 81.0, "hard": 184.4, "big": 3310.8, "massive": 848570.0,
                     "exam": 5.8}
#: paper 002 Table 4 (left): test perplexity, two layers, dim 1024
PAPER_TABLE4 = {"TPRU": {"WikiText-103": 41.4, "WikiText-2": 76.8, "params": "12.6m"},
                "LSTM": {"WikiText-103": 42.3, "WikiText-2": 76.0, "params": "16.8m"}}
#: paper 002 Table 5: top two PMI values per tag (tags whose two values differ by at least 0.5; 7 of 17)
PAPER_TABLE5 = {"ADV": (7.37, 5.83), "DET": (6.06, 5.41), "INTJ": (7.13, 6.46), "NOUN": (7.23, 5.84),
                "PART": (7.54, 6.91), "PROPN": (7.27, 6.47), "VERB": (7.22, 6.28)}
PMI_GAP = 0.5  # sec. 6.2: "the top two PMI values ... differ by at least 0.5"
CHANCE = 0.5  #: the splits are balanced
TRAIN_PROBE = "train_acc"  #: the per-epoch accuracy on a fixed set of training pairs (no renaming)
MULTI_SLICE_LINE = (0, (1, 1.2))  #: Fig. 2's several-slice TPRUs: dotted, beside the one-slice ones
PROBE_PAIRS = 2000  #: those pairs: the first 2,000 of the training split (urnlib.chapters.tpru.entailment)


# ---- measures of one model over its seeds, at each run's best validation epoch -----------------------------
def model_spec(seeds: Seeds) -> dict:
    """The model parameters (``params["model"]``) of a label's runs (the seeds share them)."""
    return seeds[0].params["model"]


def best_epoch(run: Run, key: str = "valid_acc", minimize: bool = False) -> int:
    """The 1-based epoch of the best ``key`` (the first of equal ones, as the loop's monitor picks it)."""
    values = run.column(key)
    return int(np.argmin(values) if minimize else np.argmax(values)) + 1


def valid_accuracy(seeds: Seeds) -> Stat:
    """The validation accuracy of each run's best epoch."""
    return seeds.best("valid_acc", minimize=False)


def split_accuracy(seeds: Seeds, split: str) -> Stat:
    """The accuracy on ``split`` of each run's final weights: its best validation epoch's (without a monitor:
    the last epoch's)."""
    return seeds.stat(lambda run: run.final["accuracy"][split])


def test_accuracy(seeds: Seeds) -> Stat:
    """The accuracy averaged over the five test splits, per run."""
    return seeds.stat(lambda run: float(np.mean([run.final["accuracy"][s] for s in TEST_SPLITS])))


def train_fit(seeds: Seeds) -> Stat:
    """The best accuracy on the fixed training pairs over each run's epochs (how well it fits them)."""
    return seeds.best(TRAIN_PROBE, minimize=False)


def chance_bar(seeds: Seeds, split: str | None) -> float:
    """Chance (50%) plus two standard errors of a coin on ``split``'s pairs (``None``: the training probe), or
    on an evaluation split the best baseline that reads only the pairs' surface (the heuristics H1-H3 and the
    linear classifier on lengths, variables and overlap) where that is higher: an accuracy must clear this
    to count as off chance, whatever the seeds' spread."""
    data = seeds[0].final["data"]
    n = data[split]["count"] if split else min(PROBE_PAIRS, data["train"]["count"])
    surface = [v for k, v in data[split].items() if k.startswith("acc_")] if split else []
    return max([CHANCE + 2 * math.sqrt(CHANCE * (1 - CHANCE) / n), *surface])


def off_chance(stats: dict[str, Stat], seeds: dict[str, Seeds], split: str | None) -> bool:
    """The chapter's chance guard: every side (``{label: Stat}``) off chance on ``split``
    (:func:`urnlib.rules.off_chance` against :func:`chance_bar`)."""
    return all(rules.off_chance(chance_bar(seeds[k], split), stat) for k, stat in stats.items())




def common_epochs(*groups: Seeds) -> int:
    """The number of epochs every run of ``groups`` trained (runs stop at different epochs)."""
    return min(len(run.history) for seeds in groups for run in seeds)


def mean_train_loss(seeds: Seeds, epochs: int) -> Stat:
    """The mean training loss over the first ``epochs`` epochs of each run (the whole curve they share)."""
    return seeds.stat(lambda run: float(np.mean(run.column("train_loss")[:epochs])))


def runs_of_kind(ent_runs: dict[str, Seeds], kind: str) -> dict[str, Seeds]:
    """The labels whose model is of ``kind`` (``"tpru"``, ``"gru"``, ``"lstm"``)."""
    return {k: v for k, v in ent_runs.items() if model_spec(v)["kind"] == kind}


def main_tpru(ent_runs: dict[str, Seeds]) -> str | None:
    """The TPRU set against the paper's "TPRU - 512": the most roles, then the most slices."""
    tprus = runs_of_kind(ent_runs, "tpru")
    if not tprus:
        return None
    return max(tprus, key=lambda k: (model_spec(tprus[k])["n_roles"], model_spec(tprus[k])["slices"]))


def role_series(ent_runs: dict[str, Seeds]) -> dict[int, str]:
    """Fig. 1: N -> label of the one-slice TPRUs (of the most common d), by N."""
    one = {k: v for k, v in runs_of_kind(ent_runs, "tpru").items() if model_spec(v)["slices"] == 1}
    if not one:
        return {}
    ds = [model_spec(v)["d"] for v in one.values()]
    d = max(set(ds), key=ds.count)
    return dict(sorted((model_spec(v)["n_roles"], k) for k, v in one.items() if model_spec(v)["d"] == d))


def slice_pairs(ent_runs: dict[str, Seeds]) -> dict[int, tuple[str, str]]:
    """Fig. 2: N -> (one-slice label, multi-slice label) for every N trained both ways (same d)."""
    specs = {k: model_spec(v) for k, v in runs_of_kind(ent_runs, "tpru").items()}
    single = {(s["n_roles"], s["d"]): k for k, s in specs.items() if s["slices"] == 1}
    return dict(sorted((s["n_roles"], (single[s["n_roles"], s["d"]], k)) for k, s in specs.items()
                       if s["slices"] > 1 and (s["n_roles"], s["d"]) in single))


def format_params(n: int) -> str:
    """A parameter count as the paper prints it: ``49.1k``, ``12.6m``."""
    return f"{n / 1e6:.1f}m" if n >= 1e6 else f"{n / 1e3:.1f}k"


def pct(stat: Stat) -> str:
    """A Stat of fractions in percent: ``"61.2 ± 0.4 (3 seeds)"``."""
    return Stat.of(100 * v for v in stat.values).text(1)


# ---- logical entailment ------------------------------------------------------------------------------------
def preset_lines(ent_runs: dict[str, Seeds], lm_runs: dict[str, Seeds]) -> str:
    """How the runs' preset differs from the paper (Markdown bullets, every number read from the runs)."""
    any_runs = next(iter(ent_runs.values()))
    p = any_runs[0].params
    train, arch = p["train"], p["architecture"]
    roles = max((model_spec(v)["n_roles"] for v in runs_of_kind(ent_runs, "tpru").values()), default=None)
    lines = [f"* **Entailment**: {p['task']['train']:,} generated training pairs (Evans et al.: about "
             f"{PAPER_TRAIN_SIZE:,}); {_stop(train, 'accuracy', p.get('stop'))} (the paper does not say how "
             "long); "
             f"{len(any_runs)} initialisation seed(s) per model (the paper: {PAPER_SEEDS}); TPRUs with at "
             f"most {roles} roles (Table 2: {PAPER_ROLES}); {arch['layers']}-layer encoders of dimension "
             f"{model_spec(any_runs)['d']}, the plain architecture only (no BiDAF), no hyperparameter "
             f"search; gradients clipped at norm {train.get('clip')} (the paper clips, by an unstated norm)."]
    if lm_runs:
        run = next(iter(lm_runs.values()))
        setup, lstop = run[0].params["setup"], _stop(run[0].params["train"], "perplexity")
        lines.append(f"* **Language modelling**: Brown instead of WikiText; dimension {setup['d']} and "
                     f"{setup['n_roles']} roles (the paper: {PAPER_LM['d']} and {PAPER_LM['n_roles']}); "
                     f"{lstop} (the paper: {PAPER_LM['epochs']}); {len(run)} seed(s) per model.")
    return "\n".join(lines)


def _stop(train: dict, what: str, stop: dict | None = None) -> str:
    """How long a run trains, from its params: ``train`` (the loop's own patience) or ``stop`` (an EarlyStop
    rule with ``min_epochs``)."""
    patience = (stop or {}).get("patience") or train.get("patience")
    if not patience:
        return f"{train['epochs']} epochs"
    least = (stop or {}).get("min_epochs")
    return (f"at most {train['epochs']} epochs, stopped after {patience} without a better validation {what}"
            + (f" but never before {least}" if least else ""))


def stopping_line(groups: dict[str, Seeds], key: str, minimize: bool) -> str:
    """Per label, the epochs trained and the best epoch by ``key`` over the seeds, and the seeds whose best
    epoch is the cap's last (still improving when the cap stopped them) with the last epoch's relative gain
    (Markdown)."""
    def capped(seeds: Seeds) -> str:
        gains = [abs(r.column(key)[-1] / r.column(key)[-2] - 1) for r in seeds
                 if len(r.history) == r.params["train"]["epochs"] and len(r.history) >= 2
                 and best_epoch(r, key, minimize) == len(r.history)]
        if not gains:
            return ""
        cap = seeds[0].params["train"]["epochs"]
        return (f" ({len(gains)} of {len(seeds)} seeds still improving at the cap of {cap} "
                f"epochs: the last epoch's gain {', '.join(f'{100 * g:.1f}%' for g in gains)})")

    return "; ".join(f"{label}: {seeds.stat(lambda r: len(r.history)).text(1)} epochs trained, best at "
                     f"{seeds.stat(lambda r: best_epoch(r, key, minimize)).text(1)}{capped(seeds)}"
                     for label, seeds in groups.items()) + "."


def cost_line(runs: Iterable[Run]) -> str:
    """What training the runs cost (Markdown): the longest run and the total, in minutes of wall-clock time
    (and of CPU time, where the run recorded it)."""
    runs = list(runs)
    if not runs:
        return "No stored runs."
    wall = {r.name: r.record.get("wall_time_s", 0.0) / 60 for r in runs}
    cpu = [r.record.get("cpu_time_s") for r in runs]
    longest = max(wall, key=wall.get)
    text = (f"The longest of the {len(runs)} runs, *{longest}*, trained for {_minutes(wall[longest])}; "
            f"all of them together for {_minutes(sum(wall.values()))}")
    if all(c is not None for c in cpu):
        text += f" ({_minutes(sum(cpu) / 60)} of CPU time)"
    return text + "."


def _minutes(x: float) -> str:
    return "less than a minute" if x < 0.5 else "1 minute" if x < 1.5 else f"{x:.0f} minutes"


def our_rows(ent_runs: dict[str, Seeds], scaled: dict[str, Seeds] | None, row) -> list[dict]:
    """``row(label, seeds)`` of every main label, source ``"ours"``, then of every label of the scaled group
    (runs on a larger training set), source ``"ours, 100,000 pairs"``: the rows of our models in Table 2."""
    return [{"source": "ours" if label in ent_runs else f"ours, {seeds[0].params['task']['train']:,} pairs",
             **row(label, seeds)} for label, seeds in {**ent_runs, **(scaled or {})}.items()]


def table2(ent_runs: dict[str, Seeds], scaled: dict[str, Seeds] | None = None) -> pd.DataFrame:
    """Table 2 on the generated splits: accuracy (%) on every split, the paper's rows (plain architecture, on
    Evans et al.'s data) above ours (mean ± sd over seeds, each run at its best validation epoch), that epoch,
    and the encoder's parameter count; then the scaled group's rows (``scaled``, on its own generated splits).
    The same runs on the released files: :func:`urnlib.chapters.tpru.report_released.released_table2`."""
    rows = []
    for name, vals in PAPER_TABLE2.items():
        rows.append({"source": "paper", "model": name, **{s: f"{vals[s]:.1f}" for s in SPLITS},
                     "best epoch": "", "# params (encoder)": vals["params"]})
    rows += our_rows(ent_runs, scaled, lambda label, seeds: {
        "model": label, "valid": pct(valid_accuracy(seeds)),
        **{s: pct(split_accuracy(seeds, s)) for s in TEST_SPLITS},
        "best epoch": seeds.stat(best_epoch).text(1),
        "# params (encoder)": format_params(seeds[0].final["encoder_params"])})
    return pd.DataFrame(rows)


def _percent(key: str):
    """A run's per-epoch ``key`` (a fraction) in percent, for :func:`_curves`."""
    return lambda run: 100 * np.asarray(run.column(key), dtype=float)


def _two_panels(panels: list[dict], styles: dict):
    """Two panels side by side, as wide as the book's column, with whole-number epoch ticks; ``styles``: each
    series' (its model's)."""
    return panels_figure([{**panel, "integer_x": True} for panel in panels], styles, rows=1, cols=2)


def _curves(seeds: Seeds, curve) -> SeedCurves:
    """Each seed's per-epoch curve: ``curve`` is an epoch metric's key or a function of a run."""
    return SeedCurves(seeds.each((lambda run: run.column(curve)) if isinstance(curve, str) else curve))


def _loss_panel(series: dict) -> dict:  # the dash-dotted line: ln 2, the loss of a coin
    return {"series": series, "xlabel": "epoch", "ylabel": "training loss (cross-entropy, nats)",
            "title": "training loss", "hline": math.log(2)}


def _accuracy_panel(series: dict, title: str) -> dict:  # the dash-dotted line: chance
    return {"series": series, "xlabel": "epoch", "ylabel": f"{title} (%)", "title": title,
            "hline": 100 * CHANCE, "bounds": (0, 100)}


def fig1(ent_runs: dict[str, Seeds]):
    """Fig. 1: training loss and validation accuracy (%) per epoch of the one-slice TPRUs by N, and the GRU
    and LSTM, over the seeds (:func:`_curves`)."""
    labels = {f"TPRU N={n}": k for n, k in role_series(ent_runs).items()}
    labels.update({k: k for kind in ("gru", "lstm") for k in runs_of_kind(ent_runs, kind)})
    loss = {name: _curves(ent_runs[k], "train_loss") for name, k in labels.items()}
    acc = {name: _curves(ent_runs[k], _percent("valid_acc")) for name, k in labels.items()}
    styles = {name: look(ent_runs[k]) for name, k in labels.items()}
    return _two_panels([_loss_panel(loss), _accuracy_panel(acc, "validation accuracy")], styles)


def fig2(ent_runs: dict[str, Seeds]):
    """Fig. 2: one slice ("N") against several ("N M"): training loss and accuracy (%) on the fixed training
    pairs per epoch, over the seeds (:func:`_curves`)."""
    loss, acc, styles = {}, {}, {}
    for n, (single, multi) in slice_pairs(ent_runs).items():
        s = model_spec(ent_runs[multi])["slices"]
        for name, label in ((f"{n}", single), (f"{n} M ({s} slices)", multi)):
            loss[name] = _curves(ent_runs[label], "train_loss")
            acc[name] = _curves(ent_runs[label], _percent(TRAIN_PROBE))
            styles[name] = look(ent_runs[label])
            if label == multi:  # several slices dotted beside one slice: told apart not by shade alone
                styles[name] = replace(styles[name], linestyle=MULTI_SLICE_LINE)
    return _two_panels([_loss_panel(loss), _accuracy_panel(acc, "accuracy on training pairs")], styles)


# ---- language modelling ------------------------------------------------------------------------------------
def lm_line(lm_runs: dict[str, Seeds]) -> str:
    run = next(iter(lm_runs.values()))[0]
    s, p = run.final["data"], run.params
    setup, train = p["setup"], p["train"]
    return (f"Brown: {s['train_tokens']:,} training, {s['valid_tokens']:,} validation and "
            f"{s['test_tokens']:,} test tokens, vocabulary {s['vocabulary']:,} (`<unk>` is "
            f"{s['unk_share_train']:.1%} of the training tokens); {setup['layers']} layers of dimension "
            f"{setup['d']}, the TPRU with N = {setup['n_roles']} roles; batch {train['batch_size']}, Adam lr "
            f"{train['lr']}. " + stopping_line(lm_runs, "valid_ppl", minimize=True))


def table4(lm_runs: dict[str, Seeds]) -> pd.DataFrame:
    """Table 4 stand-in: perplexity on Brown (ours, mean ± sd over seeds at each run's best epoch) next to
    WikiText (the paper's)."""
    rows = []
    for label, seeds in lm_runs.items():
        f = seeds[0].final
        paper = PAPER_TABLE4.get(label.split()[0], {})
        rows.append({"model": label, "valid perplexity": seeds.final("valid_ppl").text(1),
                     "test perplexity": seeds.final("test_ppl").text(1),
                     "best epoch": seeds.final("best_epoch").text(1),
                     "# params (recurrent)": f"{f['recurrent_params']:,}",
                     "# params (all)": f"{f['n_params']:,}",
                     **{f"paper: {c}": f"{paper[c]:.1f}" if c in paper else ""
                        for c in ("WikiText-103", "WikiText-2")},
                     "paper: # params": paper.get("params", "")})
    return pd.DataFrame(rows)


def lm_curves(lm_runs: dict[str, Seeds]):
    """Table 4 (right) stand-in: training loss (NLL per token) and validation perplexity per epoch, over the
    seeds (:func:`_curves`)."""
    return _two_panels([
        {"series": {k: _curves(v, "train_loss") for k, v in lm_runs.items()}, "xlabel": "epoch",
         "ylabel": "training NLL (nats per token)", "title": "training loss", "markers": True},
        {"series": {k: _curves(v, "valid_ppl") for k, v in lm_runs.items()}, "xlabel": "epoch",
         "ylabel": "validation perplexity", "title": "validation perplexity", "markers": True,
         "bounds": (1.0, None)}],  # a perplexity is at least 1
        looks(lm_runs))


def tpru_lm_runs(lm_runs: dict[str, Seeds]) -> Seeds | None:
    """The language-model runs that measured the role/POS PMI (the TPRU's), or None."""
    return next((seeds for seeds in lm_runs.values() if "pmi" in seeds[0].final), None)


def top_two_gap(entry: dict) -> float | None:
    """Difference of the top two roles' PMI of one tag's entry (None with fewer than two roles)."""
    top = entry["top"]
    return top[0]["pmi"] - top[1]["pmi"] if len(top) >= 2 else None


def dedicated_tags(pmi: dict) -> tuple[list[str], int]:
    """The tags whose top two PMI values differ by at least :data:`PMI_GAP`, and how many tags have two."""
    ranked = [t for t, e in pmi["tags"].items() if len(e["top"]) >= 2]
    return [t for t in ranked if top_two_gap(pmi["tags"][t]) >= PMI_GAP], len(ranked)


def _gap(g: float | None) -> str:
    return "" if g is None else f"{g:.2f}"


def table5(lm_runs: dict[str, Seeds]) -> pd.DataFrame:
    """Table 5 stand-in, of the first seed's TPRU (role ids mean nothing across seeds): per universal POS tag,
    the top two roles by PMI with the maximally selected role (role id, PMI, tokens with that role and tag),
    the gap, the same gap for the untrained TPRU, and the paper's top two PMI values (MNLI, spaCy tags) where
    Table 5 lists the tag."""
    seeds = tpru_lm_runs(lm_runs)
    if seeds is None:
        return pd.DataFrame()
    run = seeds[0]
    pmi, untrained = run.final["pmi"]["tags"], run.final["pmi_untrained"]["tags"]
    order = [t for t in PAPER_TABLE5 if t in pmi] + [t for t in pmi if t not in PAPER_TABLE5]
    rows = []
    for tag in order:
        e = pmi[tag]
        top = e["top"] + [None] * (2 - len(e["top"]))
        cell = lambda t: "" if t is None else f"role {t['role']}: {t['pmi']:.2f} ({t['joint']})"  # noqa: E731
        g, gu = top_two_gap(e), top_two_gap(untrained[tag]) if tag in untrained else None
        paper = PAPER_TABLE5.get(tag)
        rows.append({"tag": tag, "tokens": f"{e['count']:,}", "top-1 role: PMI (tokens)": cell(top[0]),
                     "top-2 role: PMI (tokens)": cell(top[1]), "gap": _gap(g),
                     f"gap >= {PMI_GAP}": "" if g is None else "yes" if g >= PMI_GAP else "no",
                     "gap, untrained TPRU": _gap(gu),
                     "paper: top 2 PMI": "" if paper is None else f"{paper[0]:.2f} / {paper[1]:.2f}"})
    return pd.DataFrame(rows)


# ---- sec. 4 checks -----------------------------------------------------------------------------------------
