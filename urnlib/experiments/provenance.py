"""Where each value of a preset comes from: the comments of its parameter file, read with ruamel.yaml.

A parameter file ``notebooks/params/<chapter>.<scale>.yaml`` says beside every value where it comes from
("paper 001 sec. 2: Adam lr 0.001", "ours, for time: ..."). A key's provenance is, in order:

* the comment lines just above it (none across a blank line; the file's opening block, up to its first
  blank line or key, is about the whole preset, not its first key),
* the comment at the end of its line,
* the indented comment lines that continue it below, and the comments at the end of the lines of its value
  (a nested key whose value starts on the next line, ``dyck:  # paper 000 sec. 5``, names its note's subject:
  ``dyck: paper 000 sec. 5``).

ruamel.yaml's scanner finds the comments (a ``#`` inside a quoted value is no comment) and its round-trip
loader the keys, with their lines. Its loader alone would not do: it attaches a comment to the node before
or after it by rules of its own, and drops the comment of a key whose value is a flow mapping on the next
line (``dyck:  # ...`` above ``{n_pairs: 10, ...}``); every comment the scanner sees is kept here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.tokens import CommentToken

__all__ = ["comments_by_line", "nested_keys", "where_from"]


def _tokens(comment) -> Iterator[CommentToken]:
    """The comment tokens of a token's ``comment`` (nested lists of tokens and ``None``)."""
    if isinstance(comment, CommentToken):
        yield comment
    elif isinstance(comment, (list, tuple)):
        for part in comment:
            yield from _tokens(part)


def comments_by_line(text: str) -> dict[int, tuple[int, str]]:
    """Every comment of the YAML ``text``: ``{line: (column of its '#', its text without '#')}`` (lines and
    columns from 0).

    ruamel's scanner hands a run of comment lines (and the blank lines between them) over as one token whose
    value starts at the token's mark, after the line break of the line before when it has one."""
    found: dict[int, tuple[int, str]] = {}
    for token in YAML(typ="rt").scan(text):
        for comment in _tokens(token.comment):
            line, column = comment.start_mark.line, comment.start_mark.column
            for i, piece in enumerate(comment.value.lstrip("\n").split("\n")):
                if piece.strip():
                    where = column if i == 0 else len(piece) - len(piece.lstrip())
                    found[line + i] = (where, piece.strip().lstrip("#").strip())
    return found


def nested_keys(node) -> dict[int, str]:
    """``{line: "name:"}`` of the keys below the top level whose value starts on a later line (a nested
    mapping or list, or a flow mapping written below its key) and whose name is an identifier."""
    out: dict[int, str] = {}
    children = node.values() if isinstance(node, CommentedMap) else node if isinstance(node, CommentedSeq) \
        else []
    for child in children:
        if isinstance(child, CommentedMap):
            for key in child:
                (line, _), (value_line, _) = child.lc.key(key), child.lc.value(key)
                if isinstance(key, str) and key.isidentifier() and value_line > line:
                    out[line] = f"{key}:"
        if isinstance(child, (CommentedMap, CommentedSeq)):
            out |= nested_keys(child)
    return out


def where_from(path: Path) -> dict[str, str]:
    """``{top-level key: where its value comes from}`` of the YAML file ``path`` (see the module's
    docstring); ``""`` for a key without a comment."""
    text = path.read_text()
    data = YAML(typ="rt").load(text)
    if not isinstance(data, CommentedMap):
        return {}
    keys = {data.lc.key(key)[0]: str(key) for key in data}
    notes, labels = comments_by_line(text), nested_keys(data)
    out: dict[str, str] = {}
    above: list[str] = []
    last = None
    header = True  # the file's opening comment block is about the whole preset, not its first key
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            above, last, header = [], None, False
            continue
        column, note = notes.get(i, (None, ""))
        if column is not None and not line[:column].strip():  # a line holding only a comment
            if column > 0 and last is not None:  # indented: it continues the key above
                out[last] = f"{out[last]} {note}".strip()
            elif not header:
                above.append(note)
            continue
        header = False
        if i in keys:
            last = keys[i]
            out[last] = " ".join([*above, note]).strip()
            above = []
        elif note and last is not None:  # a line of the value of the key above, with a comment of its own
            out[last] = " ".join(filter(None, [out[last], labels.get(i, ""), note]))
    return out
