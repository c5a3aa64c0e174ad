"""Unitary-evolution RNN (URN / k-TURN) and its unconstrained baseline.

Paper 000 (Bernardy & Lappin 2022) sec. 2 and paper 001 sec. 2.2. Every input symbol x
is embedded as an orthogonal matrix ``Q(x) = expm(S(x))`` with ``S(x)`` skew-symmetric; the
cell multiplies the state by it and nothing else (no non-linearity on the recurrent path).

Conventions used throughout urnlib:

* states are *row* vectors, as in the authors' code: ``h_t = h_{t-1} @ Q(x_t)`` (the paper's
  column form ``h_t = Q^T h_{t-1}`` is the same map); so the embedding of a phrase
  ``x_0 ... x_i`` is ``Q(x_0) @ Q(x_1) @ ... @ Q(x_i)`` (see :func:`urnlib.analysis.phrase_embedding`);
* ``h_0 = e_0 = [1, 0, ..., 0]``;
* a k-truncated generator has non-zero entries only in its first k rows (and, by skew-symmetry,
  first k columns); its parameters fill the strict upper triangle of those rows row by row,
  ``l = (n-1) + (n-2) + ... + (n-k)`` of them. ``k=None`` is the full URN (``k = n - 1``).

Dropout (reference-facts, "URN / k-TURN"): rate 0.05 on (1) the skew parameters, (2) the state,
(3) the output before the readout; one mask per sequence for (2) and (3), reused at every step.
For (1) we draw **one mask per batch** (per symbol and parameter), not one per sequence: this keeps
``Q`` computed once per vocabulary symbol per batch (a ``[V, n, n]`` exponential), which is what
makes training affordable; per-sequence masks would need a ``[B, V, n, n]`` exponential.

Speed (measured in ``benchmarks/urn_speed.py``, shown on the book's Performance page): the recurrence
runs in a compiled kernel, or grouped by symbol, with a hand-written backward
(:mod:`urnlib.models.scan`); the exponential is a scaled and squared Taylor polynomial (:func:`expm`,
differentiated through its products), and a k-TURN with ``4k <= n`` exponentiates through the rank-2k
form (:func:`expm_truncated`); long sequences can be read by a parallel prefix product
(:meth:`_MatrixRNN.states_parallel`).
"""

from __future__ import annotations


import torch
import torch.nn.functional as F
from torch import nn

from urnlib.models.expm import expm, expm_truncated, truncated_factors
from urnlib.models.scan import dense_applies, matrix_scan, prefix_states
from urnlib.params import ParameterError, check_choice, check_int

__all__ = [
    "skew_size",
    "skew_indices",
    "URN",
    "ArbitraryRNN",
    "expm_truncated",
    "expm",
    "PARAM_MASKS",
]

#: the URN's parameter-dropout masks (:class:`URN`'s ``param_mask``): per symbol, or shared by every symbol
PARAM_MASKS = ("symbol", "shared", "sequence")


def skew_size(n: int, k: int | None) -> int:
    """Number of free parameters of an n x n k-truncated skew-symmetric matrix.

    ``l = sum_{r=0}^{k-1} (n - 1 - r)``; ``k=None`` means full, ``n(n-1)/2``.

    Args:
        n: matrix size.
        k: number of non-zero rows, or ``None`` for the full upper triangle.
    """
    k = n - 1 if k is None else k
    return sum(n - 1 - r for r in range(k))


def skew_indices(n: int, k: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column indices of the free entries, strict upper triangle, row by row.

    Args:
        n: matrix size.
        k: number of non-zero rows (``None``: all ``n - 1``).

    Returns:
        ``(rows, cols)``, two long tensors of length :func:`skew_size`.
    """
    k = n - 1 if k is None else k
    rows, cols = torch.triu_indices(n, n, offset=1)
    keep = rows < k
    return rows[keep], cols[keep]


def _check_urn_shape(n: int, k: int | None) -> None:
    even = ("(units): a URN needs an even number of units >= 2 (paper 000 sec. 2 considers only even n: "
            "rotations act on n/2 planes)")
    check_int("n", n, minimum=2, message=even)
    if n % 2:
        raise ParameterError(f"n={n!r} {even}")
    if k is not None:
        check_int("k", k, minimum=1, maximum=n - 1, message=f"(truncation) is not allowed for n={n}: use an "
                  f"integer 1 <= k <= {n - 1}, or None for the full (untruncated) URN")


def _dropout_mask(shape, p: float, like: torch.Tensor) -> torch.Tensor:
    """Inverted-dropout mask: Bernoulli(1-p) / (1-p)."""
    return torch.empty(shape, dtype=like.dtype, device=like.device).bernoulli_(1 - p) / (1 - p)


class _MatrixRNN(nn.Module):
    """Shared body of the URN and its baseline: h_t = h_{t-1} @ M(x_t), softmax readout.

    Subclasses implement :meth:`matrices`, the ``(V, n, n)`` transition matrices for one batch
    (with parameter dropout applied when training), or those of a subset of the symbols.
    The readout has ``n_out`` outputs: ``vocab_size`` for a language model (the default), 2 for the
    agreement classifier of paper 000 sec. 4.
    """

    def __init__(self, vocab_size: int, n: int, *, dropout: float, state_dropout: bool,
                 n_out: int | None = None):
        super().__init__()
        check_int("vocab_size", vocab_size, minimum=1, message="must be a positive integer")
        n_out = vocab_size if n_out is None else n_out
        check_int("n_out", n_out, minimum=1, message="must be a positive number of output classes "
                  "(None: vocab_size)")
        if not 0.0 <= dropout < 1.0:
            raise ParameterError(f"dropout={dropout!r}: need 0 <= dropout < 1")
        self.vocab_size, self.n = vocab_size, n
        self.dropout, self.state_dropout = float(dropout), bool(state_dropout)
        self.register_buffer("h0", torch.eye(n)[0])  # e_0, paper 000 sec. 2
        self.readout = nn.Linear(n, n_out)  # dense layer + softmax (in the loss)
        nn.init.xavier_uniform_(self.readout.weight)  # reference-facts: Glorot-uniform readout
        nn.init.zeros_(self.readout.bias)

    def matrices(self, symbols: torch.Tensor | None = None) -> torch.Tensor:  # (V or len(symbols), n, n)
        raise NotImplementedError

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        """All states after each input symbol.

        Args:
            tokens: ``(B, T)`` long tensor of symbol indices.

        Returns:
            ``(B, T, n)``: ``h_1 ... h_T`` (``h_t`` has read ``tokens[:, :t]``).
        """
        dense = dense_applies(self.vocab_size, self.n, tokens, self.readout.weight.dtype)
        present = None if tokens.is_meta or dense else torch.bincount(tokens.reshape(-1),
                                                                       minlength=self.vocab_size)
        present = None if present is None else present > 0
        if present is not None and not bool(present.all()):  # only the symbols this batch reads
            M = self.matrices(present.nonzero().squeeze(1))  # (V', n, n), symbols in increasing order
            tokens = (torch.cumsum(present, 0) - 1)[tokens]  # their numbers among the symbols present
        else:
            M = self.matrices()  # (V, n, n): once per symbol per batch, never per token
        mask = None
        if self.training and self.state_dropout and self.dropout > 0:
            mask = _dropout_mask((tokens.shape[0], self.n), self.dropout, M)  # one mask per sequence
        return matrix_scan(M, self.h0, tokens, mask)  # grouped by symbol per step (models/scan.py)

    @torch.no_grad()
    def states_parallel(self, tokens: torch.Tensor, chunk: int | None = None) -> torch.Tensor:
        """The same states as :meth:`states` (evaluation mode), by a chunked parallel prefix product.

        For long sequences (10^4 symbols and more): the state after ``x_1 ... x_t`` is
        ``h_0 Q(x_1) ... Q(x_t)``, a product, so it can be computed in ``O(chunk + log(T / chunk))``
        sequential steps instead of ``T`` (see :func:`urnlib.models.scan.prefix_states`).
        """
        if self.training:
            raise ParameterError("states_parallel is an evaluation path: call model.eval() first")
        return prefix_states(self.matrices(), self.h0, tokens, chunk=chunk)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, V)`` for input symbols ``(B, T)``."""
        return F.linear(*self.readout_parts(tokens))

    def readout_parts(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(states, W, b)`` with the logits ``F.linear(states, W, b)``: the states after output dropout
        (training only; :mod:`urnlib.losses` applies the readout at the scored positions only)."""
        H = self.states(tokens)
        if self.training and self.dropout > 0:
            H = H * _dropout_mask((H.shape[0], 1, self.n), self.dropout, H)  # per sequence
        return H, self.readout.weight, self.readout.bias


class URN(_MatrixRNN):
    """k-truncated unitary-evolution RNN language model (k-TURN; Full URN when ``k=None``).

    ``Q(x) = expm(S(x))``, ``S = U - U^T`` with ``U`` holding the symbol's ``l`` parameters in
    the first ``k`` rows of its strict upper triangle. Parameter count (paper 001 Tables 1-2):
    ``V * l + (n + 1) * V``; with ``k=None``, ``V n(n-1)/2 + (n+1) V``.

    Args:
        vocab_size: V, number of input/output symbols.
        n: number of units (even).
        k: truncation (``None``: full).
        dropout: rate on parameters, state and output (paper 000 sec. 5: 0.05).
        state_dropout: apply dropout to the state (reference-facts: off for cross-serial).
        init_scale: embedding parameters ~ U(-init_scale, init_scale) (reference-facts: 0.05).
        n_out: readout size (``None``: V, a language model; 2: the agreement classifier).
        param_mask: the parameter-dropout mask of a batch: ``"symbol"``, one per symbol and parameter (the
            book's runs); ``"shared"``, one per parameter position, shared by every symbol, so that two
            symbols whose generators are exact negatives (a matched bracket pair composing to the identity)
            stay so under dropout, as under the authors' mask (one per sequence, shared by its symbols,
            ``orn_lm.py``), without their ``[B, V, n, n]`` exponentials; ``"sequence"``, the authors' mask:
            one per sequence and parameter position, shared by the symbols of that sequence, so that each
            sequence reads its own ``V`` matrices (``B V`` exponentials a batch, :meth:`sequence_states`).
    """

    def __init__(
        self,
        vocab_size: int,
        n: int,
        k: int | None = None,
        *,
        dropout: float = 0.05,
        state_dropout: bool = True,
        init_scale: float = 0.05,
        n_out: int | None = None,
        param_mask: str = "symbol",
    ):
        _check_urn_shape(n, k)
        check_choice("param_mask", param_mask, PARAM_MASKS)
        super().__init__(vocab_size, n, dropout=dropout, state_dropout=state_dropout, n_out=n_out)
        self.param_mask = param_mask
        self.k = k
        rows, cols = skew_indices(n, k)
        self.register_buffer("_rows", rows, persistent=False)
        self.register_buffer("_cols", cols, persistent=False)
        self.embedding = nn.Parameter(torch.empty(vocab_size, len(rows)))  # (V, l)
        nn.init.uniform_(self.embedding, -init_scale, init_scale)

    def generators(self, params: torch.Tensor | None = None) -> torch.Tensor:
        """Skew-symmetric generators ``S`` of shape ``(V, n, n)`` from ``(V, l)`` parameters."""
        U = self.embedding if params is None else params
        A = U.new_zeros(U.shape[0], self.n, self.n)
        A[:, self._rows, self._cols] = U
        return A - A.transpose(1, 2)

    def matrices(self, symbols: torch.Tensor | None = None) -> torch.Tensor:
        """``Q(x)`` of every symbol (or of ``symbols``): ``(V, n, n)``, orthogonal. In training with dropout,
        the batch's parameter-dropout mask applies (``param_mask`` ``"symbol"`` or ``"shared"``; the
        ``"sequence"`` masks are drawn by :meth:`sequence_states`, not here)."""
        U = self.embedding if symbols is None else self.embedding[symbols]
        if self.training and self.dropout > 0 and self.param_mask != "sequence":
            shape = U.shape if self.param_mask == "symbol" else (1, U.shape[1])  # per symbol, or shared
            U = U * _dropout_mask(shape, self.dropout, U)
        return self._exponentials(U)

    @property
    def _low_rank(self) -> bool:
        """Whether the exponentials go through the rank-2k form: a k-truncated URN with 2k <= n/2, where it
        is cheaper than the n x n exponential."""
        return self.k is not None and 4 * self.k <= self.n

    def _exponentials(self, U: torch.Tensor) -> torch.Tensor:
        """``expm(S)`` of every row of parameters ``U`` (``(m, l)`` -> ``(m, n, n)``)."""
        if self._low_rank:
            return expm_truncated(self.truncated_rows(U))
        return expm(self.generators(U))  # (m, n, n), orthogonal

    def states(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.training and self.dropout > 0 and self.param_mask == "sequence":
            return self.sequence_states(tokens)
        return super().states(tokens)

    def sequence_matrices(self, masks: torch.Tensor) -> torch.Tensor:
        """Each sequence's matrices under its parameter mask: ``masks`` ``(B, l)`` -> ``(B, V, n, n)``, row
        ``b`` holding ``Q(x)`` of every symbol with its parameters times ``masks[b]``."""
        V, size = self.embedding.shape
        U = (self.embedding[None] * masks[:, None, :]).reshape(-1, size)
        return self._exponentials(U).reshape(masks.shape[0], V, self.n, self.n)

    def sequence_states(self, tokens: torch.Tensor) -> torch.Tensor:
        """The states in training under the authors' parameter dropout (``param_mask="sequence"``): each
        sequence draws one mask over the ``l`` parameter positions, applied to every symbol's parameters, and
        reads its own ``V`` matrices (``(B, V, n, n)``: ``B V`` exponentials); the state mask as
        :meth:`_MatrixRNN.states` draws it. A plain loop over the steps: ``h_t = (h_{t-1} * mask) @
        Q_b(x_t)``, row ``b`` with its sequence's matrices."""
        B, T = tokens.shape
        masks = _dropout_mask((B, self.embedding.shape[1]), self.dropout, self.embedding)
        state_mask = None
        if self.state_dropout:
            state_mask = _dropout_mask((B, self.n), self.dropout, masks)  # one mask per sequence
        if self._low_rank:  # O(k n) a step, no n x n matrix
            step = self._low_rank_steps(masks)
        else:
            Q = self.sequence_matrices(masks)  # (B, V, n, n)
            every = torch.arange(B, device=tokens.device)

            def step(h, x):
                return torch.bmm(h.unsqueeze(1), Q[every, x]).squeeze(1)
        h, out = self.h0.to(masks.dtype).expand(B, self.n), []
        for t in range(T):
            h = step(h if state_mask is None else h * state_mask, tokens[:, t])
            out.append(h)
        return torch.stack(out, dim=1)

    def _low_rank_steps(self, masks: torch.Tensor):
        """One step ``h @ Q_b(x)`` of :meth:`sequence_states` for a k-truncated URN, through the factors of
        :func:`~urnlib.models.expm.truncated_factors`: ``h + ((h L) phi) R^T`` with ``h L = [h_{:k}, -R h]``
        and ``z R^T = z_{:k} R + [z_{k:}, 0]`` (each sequence's rows ``R``: the symbol's times its mask's)."""
        B, k, n = masks.shape[0], self.k, self.n
        symbol_rows, mask_rows = self.truncated_rows(self.embedding), self.truncated_rows(masks)  # (V|B,k,n)
        rows = symbol_rows[None] * mask_rows[:, None]  # (B, V, k, n): each sequence's rows of each symbol
        phi = truncated_factors(rows.reshape(-1, k, n))[1].reshape(B, -1, 2 * k, 2 * k)
        every = torch.arange(B, device=masks.device)

        def step(h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            R, ph = symbol_rows[x] * mask_rows, phi[every, x]  # (B, k, n), (B, 2k, 2k)
            # products of a few numbers each: sums of elementwise products beat batched matrix products here
            hL = torch.cat([h[:, :k], -(R * h[:, None, :]).sum(2)], dim=1)  # (B, 2k)
            z = (hL[:, :, None] * ph).sum(1)  # (B, 2k)
            return h + (z[:, :k, None] * R).sum(1) + F.pad(z[:, k:], (0, n - k))
        return step

    def truncated_rows(self, params: torch.Tensor | None = None) -> torch.Tensor:
        """The first ``k`` rows of the generators' upper part ``U`` (``S = U - U^T``): ``(V, k, n)``."""
        if self.k is None:
            raise ParameterError("truncated_rows needs a k-truncated URN (k is None: full URN)")
        P = self.embedding if params is None else params
        rows = P.new_zeros(P.shape[0], self.k, self.n)
        rows[:, self._rows, self._cols] = P
        return rows


class ArbitraryRNN(_MatrixRNN):
    """The "arbitrary embeddings" baseline of paper 000 sec. 5: same cell, any n x n matrix.

    ``h_t = h_{t-1} @ W(x_t)`` with ``W(x) = I + A(x)`` unconstrained. ``A`` starts at
    ``expm(S_0) - I`` for a skew ``S_0`` drawn like the URN's, so the baseline starts exactly where
    a URN would; dropout acts on ``A`` (the departure from the identity), mirroring the URN's dropout
    on ``S``. Parameter count ``V n^2 + (n + 1) V``.

    Args:
        vocab_size: V.
        n: number of units.
        dropout, state_dropout, init_scale, n_out: as :class:`URN`.
    """

    def __init__(
        self,
        vocab_size: int,
        n: int,
        *,
        dropout: float = 0.05,
        state_dropout: bool = True,
        init_scale: float = 0.05,
        n_out: int | None = None,
    ):
        check_int("n", n, minimum=1, message="(units) must be a positive integer")
        super().__init__(vocab_size, n, dropout=dropout, state_dropout=state_dropout, n_out=n_out)
        with torch.no_grad():
            rows, cols = skew_indices(n, None)
            A = torch.zeros(vocab_size, n, n)
            A[:, rows, cols] = torch.empty(vocab_size, len(rows)).uniform_(-init_scale, init_scale)
            start = torch.linalg.matrix_exp(A - A.transpose(1, 2)) - torch.eye(n)
        self.delta = nn.Parameter(start)  # (V, n, n)

    def matrices(self, symbols: torch.Tensor | None = None) -> torch.Tensor:
        A = self.delta if symbols is None else self.delta[symbols]
        if self.training and self.dropout > 0:
            A = A * _dropout_mask(A.shape, self.dropout, A)
        return torch.eye(self.n, dtype=A.dtype, device=A.device) + A


def urn_parameter_count(vocab_size: int, n: int, k: int | None = None, n_out: int | None = None) -> int:
    """Closed form ``V * l + (n + 1) * V`` (paper 001 Tables 1-2 with ``k=None``); with a readout of
    ``n_out`` classes, ``V * l + (n + 1) * n_out``."""
    return vocab_size * skew_size(n, k) + (n + 1) * (vocab_size if n_out is None else n_out)

