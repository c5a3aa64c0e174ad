"""The one-way flow of DESIGN.md, checked on the source: data and models below the loop, reports above
experiments' data but never importing them, drawing only in urnlib.plots, small modules, thin notebooks."""

import ast
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "urnlib"
#: generated data, not code
NOT_CODE: set[str] = set()
MAX_LINES = 400
REGISTRY = "urnlib.chapters.registry"  #: the chapter registry (it imports the chapters: see its docstring)


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if str(p.relative_to(REPO)) not in NOT_CODE)


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def under(path: Path, *folders: str) -> bool:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] in folders


def uses(found: set[str], prefix: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in found)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layering(path):
    found = imports(path)
    if under(path, "languages", "corpora", "models"):
        for above in ("urnlib.train", "urnlib.experiments", "urnlib.reports", "urnlib.results",
                      "urnlib.runner", "urnlib.plots", "urnlib.chapters", "urnlib.chapter"):
            assert not uses(found, above), f"{path.name}: data and model modules must not import {above}"
    if under(path, "reports"):  # shared report helpers: stored runs and saved claims, no experiment
        assert not uses({n for n in found if not uses({n}, REGISTRY)}, "urnlib.experiments"), \
            f"{path.name}: reports read stored runs, not experiments"
    if report_side(path):  # a chapter's report and claims read its stored runs, not its experiment
        mine = f"urnlib.chapters.{path.parent.name}"
        bad = sorted(n for n in found if uses({n}, "urnlib.experiments") or (
            uses({n}, mine) and n.count(".") >= 3 and not report_side_name(n.split(".")[3])))
        assert not bad, f"{path.name}: a chapter's report reads stored runs, not its experiment ({bad})"
    if not under(path, "plots"):
        assert not uses(found, "matplotlib"), f"{path.name}: drawing belongs in urnlib.plots"


def in_package(*folders: str) -> list[Path]:
    return [p for p in modules() if under(p, *folders)]


#: models don't know datasets or languages (DESIGN.md): they import none of these
MODEL_DATA = ("urnlib.languages", "urnlib.corpora", "urnlib.tasks")


@pytest.mark.parametrize("path", in_package("models"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_models_know_no_data(path):
    bad = sorted(n for n in imports(path) if any(uses({n}, layer) for layer in MODEL_DATA))
    assert not bad, f"{path.name} imports {bad}: models must not import {MODEL_DATA} (they take tensors)"


#: what a task module may import of urnlib: the generators and readers below it, and the shared basics
TASKS_MAY_IMPORT = ("urnlib.languages", "urnlib.corpora", "urnlib.tasks", "urnlib.tokens", "urnlib.params",
                    "urnlib.errors", "urnlib.metrics", "urnlib.losses", "urnlib.progress")


@pytest.mark.parametrize("path", in_package("tasks"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_tasks_import_nothing_above_them(path):
    """No model, training loop, store, runner, experiment or report: an evaluation takes the model."""
    above = sorted(n for n in imports(path) if uses({n}, "urnlib") and n != "urnlib"
                   and not any(uses({n}, ok) for ok in TASKS_MAY_IMPORT))
    assert not above, f"{path.name} imports {above}: a task may import only {TASKS_MAY_IMPORT}"


def test_there_are_tasks():
    names = {p.stem for p in in_package("tasks")}
    assert {"dyck", "cross_serial", "anbn", "agreement", "brown_lm", "matrix_lm"} <= names


def report_side_name(stem: str) -> bool:
    """A chapter module that reads stored runs (its report, tables, claims), not one that plans or trains."""
    return stem.startswith(("report", "claims"))


def report_side(path: Path) -> bool:
    in_folder = under(path, "chapters") and len(path.relative_to(PACKAGE).parts) == 3
    return in_folder and report_side_name(path.stem)


def chapter_names() -> list[str]:
    return sorted(p.name for p in (PACKAGE / "chapters").iterdir() if (p / "__init__.py").is_file())


#: shared modules that import the chapter registry, which sits above the chapters: the CLI, the orchestrator
#: of every chapter's plan, the cost table (a store folder's chapter) and the claims tables (a chapter's
#: title and figures, read inside functions)
ABOVE_CHAPTERS = {"cli.py", "experiments/orchestrate.py", "reports/cost.py", "reports/claims_tables.py"}


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_chapters_import_no_other_chapter(path):
    """A chapter's modules import each other and the shared library, never another chapter's (shared tasks
    live in urnlib.tasks); a shared module imports no chapter, except the few above the registry."""
    found = {n for n in imports(path) if uses({n}, "urnlib.chapters")}
    rel = str(path.relative_to(PACKAGE))
    if rel == "chapters/registry.py":
        return
    if under(path, "chapters"):
        mine = path.relative_to(PACKAGE).parts[1]
        theirs = sorted(n for n in found if n.count(".") >= 2 and n.split(".")[2] not in (mine, "registry"))
        assert not theirs, f"{rel} imports {theirs}: move what chapters share to the shared library"
        assert not uses(found, REGISTRY), f"{rel}: a chapter does not read the registry"
    elif rel not in ABOVE_CHAPTERS:
        assert not found, f"{rel} (shared) imports the chapters {sorted(found)}"


#: folders whose modules are named after the model, language, task or corpus they hold, which a chapter may
#: share its name with (the TPRU, the Dyck language, the agreement task: the zoo uses them too)
NAMED_BY_DATA = ("models", "languages", "tasks", "corpora")


@pytest.mark.parametrize("path", [p for p in modules() if not under(p, "chapters", *NAMED_BY_DATA)],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_shared_module_is_named_after_a_chapter(path):
    named = [c for c in chapter_names() if path.stem == c or path.stem.startswith(c + "_")]
    assert not named, f"{path.relative_to(PACKAGE)} is named after the chapter {named}: move it to its folder"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """``{module: the urnlib modules it imports}``, at any level (function-level imports included):
    ``from P import a`` is an edge to ``P.a`` where that is a module, else to ``P``."""
    names = {module_name(p): p for p in modules()}
    graph = {}
    for name, path in names.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module
                            for a in node.names}
        graph[name] = set()
        for target in targets:
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e", "d"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    """No circle of imports anywhere in urnlib, not even through an import inside a function."""
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(
        " <-> ".join(c) + " (" + ", ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) + ")"
        for c in found)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, \
        f"{path.relative_to(REPO)} has {lines} lines: split it into modules of one idea each"


MAX_FUNCTION_LINES = 80  #: no function of urnlib is longer (its def line to its last, docstring included)


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """``(name, first line, lines)`` of every function (nested ones too) longer than ``limit`` lines."""
    functions = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [(f.name, f.lineno, f.end_lineno - f.lineno + 1) for f in functions
            if f.end_lineno - f.lineno + 1 > limit]


def test_long_functions_are_found():
    def body(n, indent=4):
        return "\n".join(f"{' ' * indent}x{i} = {i}" for i in range(n))

    assert long_functions(f"def ok():\n{body(79)}\n") == []  # 80 lines in all
    assert long_functions(f"def long():\n{body(80)}\n") == [("long", 1, 81)]
    nested = f"def outer():\n    def inner():\n{body(80, 8)}\n"
    assert sorted(long_functions(nested)) == [("inner", 2, 81), ("outer", 1, 82)]


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_functions_are_short(path):
    found = long_functions(path.read_text())
    assert not found, f"{path.relative_to(REPO)}: " + "; ".join(
        f"{name} (line {line}) has {n} lines" for name, line, n in found) + \
        f": split each into functions of at most {MAX_FUNCTION_LINES} lines"


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_hold_no_validation_code(path):
    cells = json.loads(path.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    for text in code:
        for forbidden in ("check_int(", "check_choice(", "check_float(", "check_bool(", "ParameterError",
                          "raise ", "torch.", "fit("):
            assert forbidden not in text, f"{path.name}: {forbidden!r} in a code cell; that belongs in urnlib"
