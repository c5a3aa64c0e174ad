"""Run the chapter notebooks with papermill and build the book.

    python -m urnlib.cli notebooks --scale tiny [--only dyck ...] [--retrain] [--out DIR]
    python -m urnlib.cli train --scale paper --workers 8 [--only dyck ...] [--retrain]
    python -m urnlib.cli book [--book-dir DIR]
    python -m urnlib.cli runs [--store DIR ...] [--all] [--check]
    python -m urnlib.cli agreement-data [--sources brown sotu] [--max-sentences N] [--cache DIR]

``notebooks`` executes every chapter notebook ``notebooks/<name>.ipynb`` (in the order of the chapter
registry, :mod:`urnlib.chapters.registry`) with the parameters of ``notebooks/params/<name>.<scale>.yaml``
into ``book/chapters/<name>.ipynb``. Like pymc-examples' runner it runs every notebook even when one
fails and reports all failures together at the end. ``book`` builds the executed notebooks into
static HTML with Jupyter Book 1.x, warnings as errors; the book never executes a notebook itself.

Besides the parameters file, every notebook receives (so its parameters cell must declare them):
``scale`` (the scale name), ``claims_dir`` (``_claims``: papermill runs the notebooks in ``<out>``, so
that the page's parameter cell shows no path of this machine; there chapters write their claims and the
``claims`` chapter reads them), and ``mode`` with ``--train`` (train the
missing or stale runs) or ``--retrain`` (every run). Without either, the stored runs are loaded and a
missing one stops its chapter with the command that builds it: the book never trains. ``train`` trains
the runs of every chapter's plan at once on one Dask backend (each chapter submits its plan from a thread
of its own), so a cluster's workers never wait for one chapter's last runs; ``notebooks`` then loads them.

This runner is for a source checkout (``make venv`` installs the package editable): it finds
``notebooks/`` and ``book/`` from the package location, ``REPO = Path(__file__).resolve().parents[1]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from urnlib.chapters import registry

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
BOOK = REPO / "book"

# Chapters in book order (book/_toc.yml lists them so). "claims" stays last: it summarises the claims
# the other chapters wrote into claims_dir.
CHAPTERS = registry.names()


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def scales_in(params_dir: Path, name: str = "*") -> list[str]:
    """Scales that have a parameters file ``<name>.<scale>.yaml`` in ``params_dir`` (any chapter for "*":
    other YAML files there, such as ``cluster.example.yaml``, are no scales)."""
    names = CHAPTERS if name == "*" else [name]
    return sorted({p.stem.rsplit(".", 1)[1] for chapter in names for p in params_dir.glob(f"{chapter}.*.yaml")
                   if p.stem.rsplit(".", 1)[0] == chapter})


def plan(scale: str, only: list[str] | None, notebooks_dir: Path) -> list[tuple[str, Path, Path]]:
    """Check everything before running anything; return ``(name, notebook, params file)`` per run.

    Raises:
        SystemExit: with a message naming what is wrong and what is available.
    """
    params_dir = notebooks_dir / "params"
    unknown = sorted(set(only or []) - set(CHAPTERS))
    if unknown:
        raise SystemExit(f"error: unknown chapter(s) {', '.join(unknown)}; "
                         f"chapters are: {', '.join(CHAPTERS)}")
    scales = scales_in(params_dir)
    if scale not in scales:
        raise SystemExit(
            f"error: unknown scale {scale!r}; scales found in {params_dir}: {', '.join(scales) or '(none)'}"
        )
    runs, errors = [], []
    for name in CHAPTERS:
        if only and name not in only:
            continue
        notebook = notebooks_dir / f"{name}.ipynb"
        if not notebook.exists():
            if only:
                errors.append(f"{notebook} does not exist")
            else:
                print(f"skipping {name}: {notebook} does not exist yet")
            continue
        params = params_dir / f"{name}.{scale}.yaml"
        if not params.exists():
            errors.append(
                f"no parameters for {name} at scale {scale!r} ({params} is missing); "
                f"scales available for {name}: {', '.join(scales_in(params_dir, name)) or '(none)'}"
            )
            continue
        runs.append((name, notebook, params))
    if errors:
        raise SystemExit("error: " + "\nerror: ".join(errors))
    if not runs:
        raise SystemExit(f"error: no chapter notebook to run in {notebooks_dir}")
    return runs


def execute(notebook: Path, output: Path, parameters: dict, cwd: Path) -> None:
    """Execute one notebook with papermill; raises papermill's PapermillExecutionError if a cell fails.

    Training progress bars go to this terminal (``URNLIB_PROGRESS=terminal``, see urnlib.progress), not
    into the notebook; the cell papermill injects with the parameters is left out of the book (remove-input:
    the chapter shows its settings in a folded section).
    """
    import papermill

    before = os.environ.get("URNLIB_PROGRESS")
    os.environ.setdefault("URNLIB_PROGRESS", "terminal")  # the kernel inherits this process's environment
    try:
        papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(cwd),
            progress_bar=not _in_ci(),
            log_output=False,
            request_save_on_cell_execute=True,
            # the kernel's own stderr (where the progress bars go) stays this terminal's instead of
            # becoming notebook output: ipykernel otherwise captures file descriptors 1 and 2
            extra_arguments=["--IPKernelApp.capture_fd_output=False"],
        )
    finally:
        if before is None:  # leave the caller's environment as it was
            os.environ.pop("URNLIB_PROGRESS", None)
        if output.exists():
            _fold_injected_parameters(output)


def _fold_injected_parameters(path: Path) -> None:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-input" not in tags:
            tags.append("remove-input")
    nbformat.write(nb, path)


def _workers(value: str | None) -> int | str | None:
    """``--workers``: a number of local worker processes, or ``auto``."""
    return None if value is None else int(value) if value.isdigit() else value


def run_notebooks(args: argparse.Namespace) -> int:
    notebooks_dir = Path(args.notebooks_dir).resolve()
    out = Path(args.out).resolve()
    runs = plan(args.scale, args.only, notebooks_dir)
    claims_dir = out / "_claims"
    claims_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    for name, notebook, _params_file in runs:
        # the notebook reads its own preset (params_file) through its chapter's Config: only what the runner
        # decides is injected, so the page's parameter cell shows exactly what differs from the preset
        parameters = {"scale": args.scale, "claims_dir": os.path.relpath(claims_dir, out)}
        if registry.get(name).trains:
            if args.retrain or args.train:
                parameters["mode"] = "retrain" if args.retrain else "train"
            where = {"workers": _workers(args.workers), "scheduler": args.scheduler, "device": args.device}
            parameters |= {k: v for k, v in where.items() if v is not None}
        output = out / f"{name}.ipynb"
        how = ", retrain" if args.retrain else ", train" if args.train else ""
        print(f"== {name} (scale {args.scale}{how}) -> {output}", flush=True)
        start = time.perf_counter()
        try:
            execute(notebook, output, parameters, out)
        except Exception as exc:  # noqa: BLE001 - collect every failure, report them together
            ename = getattr(exc, "ename", type(exc).__name__)
            evalue = getattr(exc, "evalue", str(exc))
            failures.append((name, ename, evalue, output))
            status = "FAILED"
        else:
            status = "ok"
        print(f"== {name}: {status} in {time.perf_counter() - start:.1f} s", flush=True)
    print(f"\n{len(runs)} notebook(s) run at scale {args.scale}, {len(failures)} failed")
    for name, ename, evalue, output in failures:
        print(f"FAILED {name}: {ename}: {evalue}\n       (see {output})")
    return 1 if failures else 0


def train_runs(args: argparse.Namespace) -> int:
    """Train every chapter's missing or stale runs (all of them with --retrain) on one backend at once."""
    from urnlib.experiments.config import scales_of
    from urnlib.experiments.orchestrate import run_chapters

    # in the order --only gives (the first train first), else the book's
    trainable = registry.names(trains=True)
    chapters = list(dict.fromkeys(c for c in args.only if c in trainable)) if args.only else trainable
    unknown = sorted(set(args.only or []) - set(chapters))
    if unknown:
        print(f"unknown chapter(s) {unknown}; the chapters that train runs are {trainable}", file=sys.stderr)
        return 2
    missing = [c for c in chapters if args.scale not in scales_of(c)]
    if missing:
        print(f"no preset {args.scale!r} for {missing} (notebooks/params/<chapter>.{args.scale}.yaml); "
              "pass --only with the chapters that have one", file=sys.stderr)
        return 2
    overrides = {"mode": "retrain" if args.retrain else "train"}
    if args.device:
        overrides["device"] = args.device
    results = run_chapters(chapters, args.scale, workers=_workers(args.workers),
                           scheduler=args.scheduler or "", **overrides)
    failed = 0
    for name, outcome in results.items():
        if isinstance(outcome, Exception):
            failed += 1
            print(f"FAILED {name}: {type(outcome).__name__}: {outcome}")
        else:
            print(f"{name}: every run stored")
    return 1 if failed else 0


def _toc_files(toc: dict | list) -> list[str]:
    """Every ``root``/``file`` entry of a _toc.yml, recursively."""
    found, items = [], [toc]
    while items:
        item = items.pop()
        if isinstance(item, dict):
            found += [item[k] for k in ("root", "file") if k in item]
            items += list(item.values())
        elif isinstance(item, list):
            items += item
    return found


def build_book(args: argparse.Namespace) -> int:
    book_dir = Path(args.book_dir).resolve()
    toc = yaml.safe_load((book_dir / "_toc.yml").read_text())
    missing = [f for f in _toc_files(toc)
               if not any((book_dir / f).with_suffix(s).exists() for s in (".md", ".ipynb"))]
    if missing:
        raise SystemExit(
            f"error: {book_dir}/_toc.yml lists pages that do not exist: {', '.join(missing)}\n"
            "       (executed notebooks come from `python -m urnlib.cli notebooks --scale SCALE`)"
        )
    from urnlib.reports.cost import cost_markdown

    # the cost of the committed runs, from their records (the Performance page includes it)
    (book_dir / "performance" / "cost.md").write_text(cost_markdown(REPO / "notebooks" / "results"))
    from urnlib.reports.cost import write_cost_figure

    # the figure the Performance page opens with: each chapter's cost on the CPU and, estimated, on one GPU
    write_cost_figure(REPO / "notebooks" / "results", REPO / "benchmarks" / "results" / "gpu_chapters.json",
                      book_dir / "performance" / "cost.svg")
    # the landing page's verdicts per paper (from the chapters' saved claims) and what this build is
    from urnlib.reports.landing import write_landing

    write_landing(book_dir, REPO)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    exe = str(jupyter_book) if jupyter_book.exists() else shutil.which("jupyter-book")
    if exe is None:
        raise SystemExit("error: jupyter-book not found; install the 'book' extra: pip install -e '.[book]'")
    # --all: rebuild every page, so warnings of unchanged pages are reported (and fail the build) too.
    cmd = [exe, "build", str(book_dir), "-W", "-n", "--keep-going", "--all"]
    print("+", " ".join(cmd), flush=True)
    status = subprocess.call(cmd)
    if status != 0:
        return status
    index = book_dir / "_build" / "html" / "index.html"
    if not index.exists():
        print(f"error: the build finished but {index} does not exist", file=sys.stderr)
        return 1
    print(f"book: {index}")
    return 0


def agreement_data(args: argparse.Namespace) -> int:
    """Build (or find cached) the offline agreement data; offline_dataset prints examples per attractor
    count."""
    from urnlib.corpora.agreement_builder import offline_dataset
    from urnlib.errors import UrnlibError

    try:
        offline_dataset(args.cache, sources=args.sources, max_sentences=args.max_sentences)
    except UrnlibError as err:  # a bad option, a corpus not installed or damaged: a message, no traceback
        raise SystemExit(f"error: {err}") from None
    return 0


def list_runs(args: argparse.Namespace) -> int:
    """Every stored run under the store(s): current, stale (and why), or corrupt (and what is wrong)."""
    from urnlib.results import RunStore

    counts = {"current": 0, "stale": 0, "corrupt": 0, "without their patch": 0}
    for root in args.store:
        store = RunStore(root)
        print(f"== {store.root}")
        for folder, run in store.runs():
            where = folder.relative_to(store.root)
            if isinstance(run, Exception):
                counts["corrupt"] += 1
                print(f"CORRUPT  {where}: {run}")
                continue
            reasons = run.stale_reasons()
            counts["stale" if reasons else "current"] += 1
            if reasons or args.all:
                print(f"{'STALE' if reasons else 'current':8} {str(where):32} {run.name}"
                      + (f": {'; '.join(reasons)}" if reasons else ""))
            patch = store.missing_patch(run)
            if patch is not None:
                counts["without their patch"] += 1
                print(f"NO PATCH {str(where):32} {run.name}: trained from a work tree with uncommitted edits "
                      f"whose patch {patch.relative_to(store.root)} is missing; retrain it from a clean tree "
                      "(mode retrain)")
    print(", ".join(f"{v} {k}" for k, v in counts.items() if v or k != "without their patch"))
    failing = counts["stale"] + counts["without their patch"]
    return 1 if counts["corrupt"] or (args.check and failing) else 0


def _backend_options(command: argparse.ArgumentParser, default: str) -> None:
    """--workers, --scheduler and --device: where the runs that must be trained train."""
    command.add_argument("--workers", metavar="N",
                         help="train on a local Dask cluster of N worker processes ('auto': one per core; "
                         f"default: {default})")
    command.add_argument("--scheduler", metavar="ADDR",
                         help="train on a running Dask scheduler (tcp://host:8786) or a batch-queue cluster "
                         "(slurm:FILE, pbs:FILE; see notebooks/params/cluster.example.yaml)")
    command.add_argument("--device", choices=["cpu", "cuda", "auto"], help="where runs train (default: cpu)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m urnlib.cli", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    nb = sub.add_parser("notebooks", help="execute the chapter notebooks with papermill")
    nb.add_argument("--scale", required=True, help="parameter set: notebooks/params/<chapter>.<scale>.yaml")
    nb.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                    help=f"run only these chapters {CHAPTERS}")
    nb.add_argument("--train", action="store_true",
                    help="mode train: train the runs that are missing or stale")
    nb.add_argument("--retrain", action="store_true",
                    help="mode retrain: ignore stored runs and train every one again")
    _backend_options(nb, "in the notebook's process")
    nb.add_argument("--out", default=str(BOOK / "chapters"),
                    help="where executed notebooks go (default: book/chapters)")
    nb.add_argument("--notebooks-dir", default=str(NOTEBOOKS),
                    help="source notebooks and params/ (default: notebooks)")
    nb.set_defaults(func=run_notebooks)
    tr = sub.add_parser("train", help="train the chapters' missing or stale runs, every chapter's plan on "
                        "one Dask backend at once (then `notebooks` loads them)")
    tr.add_argument("--scale", required=True, help="parameter set: notebooks/params/<chapter>.<scale>.yaml")
    tr.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                    help="train only these chapters, the first listed first (default: all, in book order)")
    tr.add_argument("--retrain", action="store_true", help="train every run again, stored or not")
    _backend_options(tr, "here, one run after another")
    tr.set_defaults(func=train_runs)
    bk = sub.add_parser("book", help="build the HTML book with jupyter-book, warnings as errors")
    bk.add_argument("--book-dir", default=str(BOOK), help="the book's source (default: book)")
    bk.set_defaults(func=build_book)
    rn = sub.add_parser("runs", help="list the stored runs: current, stale (why) or corrupt (what is wrong)")
    rn.add_argument("--store", nargs="+", default=[str(NOTEBOOKS / "results")], metavar="DIR",
                    help="run stores to list (default: notebooks/results, the committed runs)")
    rn.add_argument("--all", action="store_true",
                    help="list current runs too (default: only stale and corrupt)")
    rn.add_argument("--check", action="store_true",
                    help="exit 1 when a run is stale or lacks the patch of the edits it was trained with "
                         "(corrupt ones always fail)")
    rn.set_defaults(func=list_runs)
    ag = sub.add_parser("agreement-data",
                        help="build the subject-verb agreement data from Brown and SOTU (cached)")
    ag.add_argument("--sources", nargs="+", choices=["brown", "sotu"], default=["brown", "sotu"],
                    help="corpora to parse (default: both; installed by `make data`)")
    ag.add_argument("--max-sentences", type=int, default=None, metavar="N",
                    help="at most N sentences per source")
    ag.add_argument("--cache", default=None, metavar="DIR", help="cache folder (default: .cache/agreement)")
    ag.set_defaults(func=agreement_data)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; an error urnlib raises on purpose (a bad parameter, missing data, a stored run, a
    device or backend: :mod:`urnlib.errors`) is printed as one line, ``error: ...``, with exit status 2."""
    from urnlib.errors import UrnlibError

    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except UrnlibError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
