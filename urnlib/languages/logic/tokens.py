"""Token ids of formulas and pairs, and the symbolic vocabulary permutation.

Tokens (:data:`VOCAB`): ``<pad>`` (0), ``<sep>``, ``(``, ``)``, ``~``, ``&``, ``|``, ``>``, ``a``..``z``;
formulas are read character by character as written. :func:`permute_variables` is the symbolic
vocabulary permutation of appendix C.1, drawn as a true permutation of the variable symbols (the
original code sampled with replacement, which can merge two variables and change the label).
"""

from __future__ import annotations

import torch

from urnlib.languages.logic.formulas import ALPHABET, Bin, Not, Var, to_string
from urnlib.params import ParameterError, check_int

__all__ = ["VOCAB", "PAD_ID", "SEP_ID", "TOKEN_ID", "variable_ids", "tokenize", "encode_pairs",
           "encode_packed", "encode_labels", "decode", "permute_variables"]

VOCAB: tuple[str, ...] = ("<pad>", "<sep>", "(", ")", "~", "&", "|", ">", *ALPHABET)
TOKEN_ID = {s: i for i, s in enumerate(VOCAB)}
PAD_ID, SEP_ID = TOKEN_ID["<pad>"], TOKEN_ID["<sep>"]
_FIRST_VAR = TOKEN_ID["a"]


def variable_ids() -> torch.Tensor:
    """Ids of the 26 variable symbols ``a``..``z`` (a long tensor)."""
    return torch.arange(_FIRST_VAR, _FIRST_VAR + 26, dtype=torch.long)


def tokenize(formula) -> list[int]:
    """Token ids of a formula read character by character (spaces dropped). Formula objects are
    printed in the files' format first; strings are taken as written."""
    text = to_string(formula) if isinstance(formula, (Var, Not, Bin)) else formula
    if not isinstance(text, str):
        raise ParameterError(f"expected a formula string, got {type(formula).__name__}")
    ids = []
    for i, c in enumerate(text):
        if c in " \t":
            continue
        if c not in TOKEN_ID:
            raise ParameterError(f"{text!r}: character {c!r} at column {i + 1} is not in VOCAB")
        ids.append(TOKEN_ID[c])
    if not ids:
        raise ParameterError("empty formula")
    return ids


def _pad(seqs: list[list[int]], max_len: int | None, what: str) -> torch.Tensor:
    longest = max(len(s) for s in seqs)
    if max_len is not None:
        check_int("max_len", max_len, minimum=1)
        if longest > max_len:
            raise ParameterError(f"max_len={max_len} is shorter than the longest {what} ({longest} tokens)")
    T = longest if max_len is None else max_len
    out = torch.full((len(seqs), T), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def _check_pairs(pairs):
    if not len(pairs):
        raise ParameterError("pairs must not be empty")
    for p in pairs:
        if len(p) < 2:
            raise ParameterError(f"each pair must be (premise, hypothesis, ...); got {p!r}")


def encode_pairs(pairs, max_len: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Premises and hypotheses as two padded id tensors (padding 0).

    Args:
        pairs: :class:`Entailment` lines or ``(A, B, ...)`` tuples (strings or formulas).
        max_len: pad both to this length (default: each to its own longest); longer sequences raise.

    Returns:
        ``(premise_ids (N, Tp), hypothesis_ids (N, Th))`` long tensors.
    """
    _check_pairs(pairs)
    prem = _pad([tokenize(p[0]) for p in pairs], max_len, "premise")
    hyp = _pad([tokenize(p[1]) for p in pairs], max_len, "hypothesis")
    return prem, hyp


def encode_packed(pairs, max_len: int | None = None) -> torch.Tensor:
    """``premise <sep> hypothesis`` per row, padded with 0: an ``(N, T)`` long tensor."""
    _check_pairs(pairs)
    return _pad([tokenize(p[0]) + [SEP_ID] + tokenize(p[1]) for p in pairs], max_len, "packed pair")


def encode_labels(pairs) -> torch.Tensor:
    """The labels E as an ``(N,)`` float tensor (for binary cross-entropy)."""
    _check_pairs(pairs)
    return torch.tensor([float(p[2]) for p in pairs])


def decode(ids) -> str:
    """Token ids back to text (padding dropped, ``<sep>`` printed as ``,``)."""
    out = []
    for i in torch.as_tensor(ids).tolist():
        if i == PAD_ID:
            continue
        out.append("," if i == SEP_ID else VOCAB[i])
    return "".join(out)




def permute_variables(tokens, variable_ids=None, generator: torch.Generator | None = None):
    """Symbolic vocabulary permutation (Evans et al.; paper 002 appendix C.1): rename the variables
    of each example by a random permutation of the variable symbols.

    Row b gets its own uniformly random permutation ``pi_b`` of the K variable ids ``x_1 .. x_K``
    (the argsort of K i.i.d. uniform keys, ``torch.rand(N, K)``), applied as the lookup table::

        table_b[x_k] = x_{pi_b(k)},    table_b[w] = w  for every other id w

    a bijection on the variables (distinct variables stay distinct, so entailment labels are
    unchanged) and the identity on connectives, brackets, separator and padding. Passing several
    tensors (premise and hypothesis ids) applies the SAME permutation to row i of each; in the
    packed layout the whole row is one example.

    Args:
        tokens: an ``(N, T)`` (or ``(T,)``) long tensor, or a tuple/list of such tensors with equal N.
        variable_ids: the ids to permute (default :func:`variable_ids`).
        generator: a ``torch.Generator`` for reproducibility; the keys are drawn on its device.
            ``None``: torch's global generator, on the device of ``variable_ids`` (the CPU for the
            default ids or a list).

    Returns:
        The permuted tensor(s), in the same structure.
    """
    single = isinstance(tokens, torch.Tensor)
    parts = [tokens] if single else list(tokens)
    if not parts or not all(isinstance(p, torch.Tensor) for p in parts):
        raise ParameterError("tokens must be a tensor or a non-empty tuple/list of tensors")
    squeeze = [p.dim() == 1 for p in parts]
    parts = [p.unsqueeze(0) if s else p for p, s in zip(parts, squeeze)]
    if any(p.dim() != 2 or p.dtype != torch.long for p in parts):
        raise ParameterError("token tensors must be (N, T) or (T,) long tensors")
    n = parts[0].shape[0]
    if any(p.shape[0] != n for p in parts):
        raise ParameterError(f"all token tensors must have the same number of rows; got "
                             f"{[p.shape[0] for p in parts]}")
    if variable_ids is None:
        vids = torch.arange(_FIRST_VAR, _FIRST_VAR + 26, dtype=torch.long)
    else:
        vids = torch.as_tensor(variable_ids, dtype=torch.long)
    if vids.dim() != 1 or len(vids) == 0 or len(torch.unique(vids)) != len(vids) or (vids < 0).any():
        raise ParameterError("variable_ids must be distinct non-negative ids")
    if any((p < 0).any() for p in parts):
        raise ParameterError("token ids must be non-negative")
    device = generator.device if generator is not None else vids.device
    perm = torch.rand(n, len(vids), generator=generator, device=device).argsort(dim=1)  # (N, K): pi_b
    size = int(max(int(vids.max()), *(int(p.max()) if p.numel() else 0 for p in parts))) + 1
    where = parts[0].device
    vids = vids.to(where)
    table = torch.arange(size, device=where).repeat(n, 1)  # (N, size): the identity
    table[:, vids] = vids[perm.to(where)]  # x_k -> x_{pi_b(k)}
    out = []
    for p, s in zip(parts, squeeze):
        q = table.to(p.device).gather(1, p)
        out.append(q.squeeze(0) if s else q)
    return out[0] if single else type(tokens)(out) if isinstance(tokens, tuple) else out
