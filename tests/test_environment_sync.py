"""environment.yml installs exactly the requirements of pyproject.toml (core + book + dev extras)."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[1]

# environment.yml may pin these exactly where pyproject gives a range (the pin must lie in the range):
# torch==2.13.0 is the CPU wheel; any other torch spec makes pip pull the CUDA build.
EXACT_PINS_ALLOWED = {"torch"}


def normalise(name: str) -> str:
    """PEP 503 name: case, '_', '.' and '-' do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_requirements() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]


def environment_pip_lines() -> list[str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one pip: section"
    return [str(line).strip() for line in pip_sections[0]]


def mismatches(pyproject: list[str], environment: list[str]) -> list[str]:
    """Differences between two lists of requirement strings; [] when they agree."""

    def by_name(reqs: list[str], where: str) -> dict[str, SpecifierSet]:
        out = {}
        for line in reqs:
            req = Requirement(line)
            name = normalise(req.name)
            assert name not in out, f"{req.name} appears twice in {where}"
            out[name] = req.specifier
        return out

    pyp = by_name(pyproject, "pyproject.toml")
    env = by_name(environment, "environment.yml")
    problems = [f"{n} is in pyproject.toml but not in environment.yml"
                for n in sorted(pyp.keys() - env.keys())]
    problems += [f"{n} is in environment.yml but not in pyproject.toml"
                 for n in sorted(env.keys() - pyp.keys())]
    for name in sorted(pyp.keys() & env.keys()):
        want, got = pyp[name], env[name]
        if want == got:
            continue
        pins = [s for s in got if s.operator == "=="]
        if name in EXACT_PINS_ALLOWED and len(got) == 1 and pins and want.contains(pins[0].version):
            continue
        problems.append(f"{name}: pyproject.toml says {str(want) or '(any)'!r}, "
                        f"environment.yml {str(got) or '(any)'!r}")
    return problems


def test_environment_yml_matches_pyproject():
    lines = environment_pip_lines()
    editable = [line for line in lines if line.startswith("-e")]
    assert [line.replace(" ", "") for line in editable] == ["-e.[book,dev]"], (
        "environment.yml must install the package itself with `-e .[book,dev]`"
    )
    problems = mismatches(pyproject_requirements(), [line for line in lines if not line.startswith("-")])
    assert problems == [], "\n".join(problems)


def test_mismatches_are_found():
    pyproject = ["torch>=2.13,<2.14", "numpy", "jupyter_book>=1.0.4,<2", "pytest"]
    assert mismatches(pyproject, ["torch==2.13.0", "NumPy", "Jupyter-Book<2,>=1.0.4", "pytest"]) == []
    problems = mismatches(pyproject, ["torch==2.14.0", "numpy>=2", "jupyter-book>=1.0.4", "scipy"])
    assert len(problems) == 5, problems
    assert any("pytest is in pyproject.toml but not" in p for p in problems)
    assert any("scipy is in environment.yml but not" in p for p in problems)
    assert any(p.startswith("torch:") for p in problems)  # the pin lies outside the range
    assert any(p.startswith("numpy:") for p in problems)
    assert any(p.startswith("jupyter-book:") for p in problems)
    # an exact pin is only accepted for the packages that need one
    assert mismatches(["numpy"], ["numpy==2.0.0"]) != []
