"""Matrix embeddings of words: the three language models of paper 003 (Borbély, "Language modeling with
matrix embeddings"), sec. 4.1-4.3.

Every word w is a d x d matrix M_w; a phrase is the ordered product of its words' matrices, scored by a
bilinear form ``v^T M_{w1} ... M_{wn} w`` (sec. 4). States are *row* vectors (as in
:mod:`urnlib.models.unitary`).

* :class:`NeuralMatrixLM` (4.1):
  ``P(w | before, after) = softmax_v 1^T (prod M_before) M_v (prod M_after) 1``.
* :class:`ProbabilisticMatrixLM` (4.2): ``M_w >= 0`` and ``M_* = sum_w M_w`` right-stochastic, so
  ``P(w_1..w_n) = (1/d) 1^T M_{w1} ... M_{wn} 1`` sums to 1 over the strings of each length n.
* :class:`WFSAMatrixLM` (4.3): each M_w right-stochastic, emission R (d, V) with rows summing to 1;
  ``P(w_t | w_<t) = v_{t-1} . R[:, w_t]``, ``v_0 = (1/d) 1^T``, ``v_t = v_{t-1} M_{w_t}``.

The matrices live in an algebra (sec. 3), a set of matrices closed under sum and product, so that a
sentence embedding is in the same space as its words: see :data:`ALGEBRAS`. Only the algebra's free
entries are stored, as a ``(V, n_free)`` parameter (``n_free`` = d^2, d, d(d+1)/2): the paper's diagonal
setting (d = 100) as a dense (V, d, d) tensor would be 100 times larger. The constraints of 4.2 and 4.3
hold by construction (softmax parametrisations), for every parameter value, so plain Adam keeps them.

``lengths_or_mask`` is ``None`` (all tokens), ``(B,)`` lengths, or a ``(B, T)`` bool mask; positions
outside it are skipped (they act as the identity matrix).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from urnlib.params import ParameterError, check_int

__all__ = [
    "ALGEBRAS", "check_algebra", "algebra_mask", "free_entry_count",
    "NeuralMatrixLM", "ProbabilisticMatrixLM", "WFSAMatrixLM",
]

#: matrix algebras a model may use (each contains the identity and is closed under product).
ALGEBRAS = {
    "dense": "all d x d matrices (paper 003 sec. 5: 10 x 10)",
    "diagonal": "diagonal d x d matrices, the commutative algebra "
                "(paper: 100 x 100, 'a fallback to word vectors')",
    "upper": "upper-triangular d x d matrices, a non-commutative sub-algebra closed under product",
}
#: well-known matrix sets that are *not* closed under product, refused with an explanation.
_NOT_CLOSED = {"symmetric": "symmetric", "skew": "skew-symmetric"}


def check_algebra(name: str) -> str:
    """Return ``name`` if it is one of :data:`ALGEBRAS`, else raise :class:`ParameterError` saying why."""
    if name in ALGEBRAS:
        return name
    if name in _NOT_CLOSED:
        kind = _NOT_CLOSED[name]
        raise ParameterError(
            f"algebra={name!r} is not closed under matrix product: the product of two {kind} matrices is in "
            f"general not {kind}, so sentence embeddings (products of word matrices) would leave the set; "
            f"choose one of {list(ALGEBRAS)}")
    raise ParameterError(f"algebra={name!r} is unknown; choose one of {list(ALGEBRAS)}")


def _check_positive(name: str, value) -> int:
    return check_int(name, value, minimum=1, message="must be a positive integer")


def algebra_mask(name: str, d: int) -> torch.Tensor:
    """``(d, d)`` bool mask of the entries a matrix of the algebra may have non-zero.

    Args:
        name: one of :data:`ALGEBRAS`.
        d: matrix size (paper 003: 10 dense, 100 diagonal).
    """
    check_algebra(name)
    _check_positive("d", d)
    ones = torch.ones(d, d, dtype=torch.bool)
    return {"dense": ones, "diagonal": torch.eye(d, dtype=torch.bool), "upper": ones.triu()}[name]


def free_entry_count(name: str, d: int) -> int:
    """Numbers stored per word: d^2 (dense), d (diagonal), d(d+1)/2 (upper)."""
    return int(algebra_mask(name, d).sum())


def _lookup(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``table[ids]`` along dim 0 (``(n, k)``, ``(...)`` ids -> ``(..., k)``), with a deterministic backward.

    ``table[ids]`` backpropagates through ``index_put_(accumulate=True)``, which on CPU adds float32
    gradients with atomic adds from several threads once the gradient has >= 32768 elements (ATen's
    GRAIN_SIZE): repeated ids (every frequent word) are then summed in a thread-dependent order, and the
    same seed gives different last bits. ``index_select`` backpropagates through ``index_add_``, which sums
    in the order of ``ids`` whatever the thread count.
    """
    return table.index_select(0, ids.reshape(-1)).reshape(*ids.shape, *table.shape[1:])


def _as_mask(tokens: torch.Tensor, lengths_or_mask) -> torch.Tensor:
    B, T = tokens.shape
    if lengths_or_mask is None:
        return torch.ones(B, T, dtype=torch.bool, device=tokens.device)
    m = torch.as_tensor(lengths_or_mask, device=tokens.device)
    if m.dtype == torch.bool and m.shape == (B, T):
        return m
    if m.dtype != torch.bool and m.shape == (B,):
        return torch.arange(T, device=tokens.device) < m[:, None]
    raise ParameterError(f"lengths_or_mask of shape {tuple(m.shape)} ({m.dtype}): pass None, ({B},) lengths "
                         f"or a ({B}, {T}) bool mask for tokens of shape ({B}, {T})")


class _MatrixEmbedding(nn.Module):
    """Shared body: vocabulary, algebra, free-entry bookkeeping, vector-matrix products."""

    def __init__(self, vocab_size: int, d: int, algebra: str):
        super().__init__()
        self.vocab_size, self.d = _check_positive("vocab_size", vocab_size), _check_positive("d", d)
        self.algebra = check_algebra(algebra)
        mask = algebra_mask(algebra, d)
        rows, cols = mask.nonzero(as_tuple=True)  # row-major order; diagonal: rows == cols == arange(d)
        for name, buf in (("mask", mask), ("rows", rows), ("cols", cols)):
            self.register_buffer(name, buf, persistent=False)
        self.n_free = len(rows)
        self.elementwise = algebra == "diagonal"  # diagonal products are elementwise: no d x d matmuls

    @property
    def parameter_count(self) -> int:
        """Stored numbers: V * n_free word entries (+ d * V emissions for 4.3)."""
        return sum(p.numel() for p in self.parameters())

    def free_entries(self) -> torch.Tensor:
        """``(V, n_free)`` values of the allowed entries of every M_w (4.2, 4.3: exp of
        :meth:`log_free_entries`)."""
        return self.log_free_entries().exp()

    def matrices(self) -> torch.Tensor:
        """``(V, d, d)`` word matrices, exactly 0 outside the algebra (for inspection; memory V d^2)."""
        return self._dense(self.free_entries())

    def _dense(self, free: torch.Tensor) -> torch.Tensor:  # (..., n_free) -> (..., d, d)
        out = free.new_zeros(*free.shape[:-1], self.d, self.d)
        out[..., self.rows, self.cols] = free
        return out

    def _operators(self, free: torch.Tensor) -> torch.Tensor:  # what _vecmat / _matvec take
        return free if self.elementwise else self._dense(free)

    def _vecmat(self, v: torch.Tensor, op: torch.Tensor) -> torch.Tensor:  # (B, d) row vectors times M
        return v * op if self.elementwise else torch.bmm(v.unsqueeze(1), op).squeeze(1)

    def _matvec(self, op: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # M times (B, d) column vectors
        return op * b if self.elementwise else torch.bmm(op, b.unsqueeze(2)).squeeze(2)

    def _row_logsumexp(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., n_free) -> (..., d)``: logsumexp over the allowed entries of each row."""
        idx = self.rows.expand_as(x)
        m = (x.detach().new_full((*x.shape[:-1], self.d), -math.inf)
             .scatter_reduce(-1, idx, x.detach(), "amax"))
        s = torch.zeros_like(m).scatter_add(-1, idx, (x - m.gather(-1, idx)).exp())
        return m + s.log()

    def forward(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B,)`` log-probabilities of the sentences (4.2, 4.3)."""
        return self.log_prob(tokens, lengths_or_mask)

    def nll(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B,)`` per-sentence negative log-likelihood (the training loss; KL up to a constant)."""
        return -self.log_prob(tokens, lengths_or_mask)


class NeuralMatrixLM(_MatrixEmbedding):
    """Model 4.1: softmax over the vocabulary of ``1^T (prod M_before) M_v (prod M_after) 1``.

    Initialisation near the identity: ``M_w = I + init_scale * G / sqrt(n_free)``, G standard normal on the
    allowed entries, so the random part has Frobenius norm about ``init_scale`` (0.1) in every algebra. Every
    score starts near ``1^T I 1 = d`` (predictions near uniform) and long products neither explode nor vanish:
    measured for d = 10, products of 50 word matrices keep their singular values within [0.5, 2]. (A per-entry
    scale of ``0.1 / sqrt(d)`` already spreads them over [0.15, 6].)

    Args:
        vocab_size: V.
        d: matrix size.
        algebra: one of :data:`ALGEBRAS`.
        window: context words on each side of the centre word used by :meth:`nll`.
        pad_id: token id meaning "no word" in a context (the identity matrix, the empty product).
        init_scale: size of the random part of the initialisation (see above).
    """

    def __init__(self, vocab_size: int, d: int = 10, algebra: str = "dense", *, window: int = 2,
                 pad_id: int = -1, init_scale: float = 0.1):
        super().__init__(vocab_size, d, algebra)
        self.window, self.pad_id = _check_positive("window", window), int(pad_id)
        if 0 <= self.pad_id < vocab_size:
            raise ParameterError(f"pad_id={pad_id} is a word of the vocabulary; "
                                 f"use a negative id or >= {vocab_size}")
        eye = (self.rows == self.cols).float()
        self.register_buffer("eye_free", eye, persistent=False)
        self.weight = nn.Parameter(eye + init_scale / math.sqrt(self.n_free)
                                   * torch.randn(vocab_size, self.n_free))

    def free_entries(self) -> torch.Tensor:
        return self.weight

    def _context_ops(self, ctx: torch.Tensor) -> torch.Tensor:  # (B, L) ids -> operators, pad -> identity
        pad = ctx == self.pad_id
        words = _lookup(self.weight, ctx.masked_fill(pad, 0))
        free = torch.where(pad[..., None], self.eye_free.to(self.weight.dtype), words)
        return self._operators(free)

    def scores(self, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """``(B, V)`` scores ``a^T M_v b`` with ``a^T = 1^T prod M_before``, ``b = prod M_after 1``.

        Args:
            before, after: ``(B, L_b)`` and ``(B, L_a)`` context ids (``pad_id`` = empty slot), in sentence
                order.
        """
        B = before.shape[0]
        a = self.weight.new_ones(B, self.d)
        b = self.weight.new_ones(B, self.d)
        ops_b, ops_a = self._context_ops(before), self._context_ops(after)
        for t in range(before.shape[1]):
            a = self._vecmat(a, ops_b[:, t])
        for t in reversed(range(after.shape[1])):
            b = self._matvec(ops_a[:, t], b)
        # a^T M_v b = sum over allowed (i, j) of a_i M_v[i, j] b_j: one (B, n_free) x (n_free, V) product
        # (index_select, not a[:, self.rows]: a deterministic backward, see _lookup)
        return (a.index_select(1, self.rows) * b.index_select(1, self.cols)) @ self.weight.t()

    def forward(self, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """``(B, V)`` log P(centre word = v | context)."""
        return torch.log_softmax(self.scores(before, after), dim=-1)

    def context_nll(self, before: torch.Tensor, centre: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """``(B,)`` -log P(centre | before, after)."""
        return -self.forward(before, after).gather(1, centre[:, None]).squeeze(1)

    def token_log_probs(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B, T)`` log P(w_t | ``window`` words each side, within the sentence); 0 outside the mask."""
        mask = _as_mask(tokens, lengths_or_mask)
        B, T, w = *tokens.shape, self.window
        padded = nn.functional.pad(tokens.masked_fill(~mask, self.pad_id), (w, w), value=self.pad_id)
        win = padded.unfold(1, 2 * w + 1, 1).reshape(B * T, 2 * w + 1)
        centre = tokens.masked_fill(~mask, 0).reshape(-1)
        per_word = -self.context_nll(win[:, :w], centre, win[:, w + 1:]).reshape(B, T)
        return per_word * mask

    def nll(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B,)`` sum over the sentence's words of -log P(w_t | ``window`` words each side, within the
        sentence)."""
        return -self.token_log_probs(tokens, lengths_or_mask).sum(1)


class ProbabilisticMatrixLM(_MatrixEmbedding):
    """Model 4.2: ``P(w_1..w_n) = (1/d) 1^T M_{w1} ... M_{wn} 1`` with ``M_w >= 0``, ``sum_w M_w``
    right-stochastic.

    Parametrisation: ``M_w[i, j] = exp(theta_w[i, j]) / sum_{w', j'} exp(theta_{w'}[i, j'])`` over the allowed
    entries (a softmax over (word, column) for each row i); the original stored log2 entries and renormalised.

    Numerics of :meth:`log_prob`: the row vector ``v_t = v_{t-1} M_{w_t}`` is renormalised to sum 1 at every
    step and the log of the factor accumulated, so ``log P = sum_t log(v_{t-1} M_{w_t} 1)``; each gathered
    ``M_{w_t}`` is also divided by its largest entry (added back in log space), so a rare word's tiny matrix
    cannot underflow. A 60-word sentence over V = 20,000 has P ~ e^-600, far below float32's range.

    Placeholder (sec. 4.2): ``M_*`` in any slot gives the probability of the skip-gram with *anything* there,
    and appended at the end changes nothing (``M_* 1 = 1``); the paper's "no matter where it is inserted"
    holds only where ``M_* = I`` (the diagonal algebra) - prepending it would need ``1^T M_* = 1^T`` as well.

    Args:
        vocab_size: V.
        d: matrix size.
        algebra: one of :data:`ALGEBRAS`.
        init_scale: standard deviation of theta at initialisation (0: M_w = M_* / V, all words alike).
    """

    def __init__(self, vocab_size: int, d: int = 10, algebra: str = "dense", *, init_scale: float = 0.01):
        super().__init__(vocab_size, d, algebra)
        self.theta = nn.Parameter(init_scale * torch.randn(vocab_size, self.n_free))

    def log_free_entries(self) -> torch.Tensor:
        """``(V, n_free)`` log M_w[i, j] on the allowed entries."""
        log_norm = self._row_logsumexp(torch.logsumexp(self.theta, dim=0))  # (d,): over words, then the row
        return self.theta - log_norm.index_select(0, self.rows)

    def m_star(self) -> torch.Tensor:
        """``(d, d)`` placeholder ``M_* = sum_w M_w`` (right-stochastic)."""
        return self._dense(self.free_entries().sum(0))

    def token_log_probs(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B, T)`` log P(w_t | w_<t) = log (v_{t-1} M_{w_t} 1) with v normalised: the sentence's
        log-probability is their sum (``M_*`` row-stochastic makes the prefix probability the marginal over
        continuations)."""
        mask = _as_mask(tokens, lengths_or_mask)
        log_free = _lookup(self.log_free_entries(), tokens.masked_fill(~mask, 0))  # (B, T, n_free)
        shift = log_free.amax(-1)  # (B, T): log of each gathered matrix's largest entry
        ops = self._operators((log_free - shift[..., None]).exp())
        v = log_free.new_full((tokens.shape[0], self.d), 1.0 / self.d)
        out = []
        for t in range(tokens.shape[1]):
            u = self._vecmat(v, ops[:, t])
            c = u.sum(-1)
            keep = mask[:, t]
            v = torch.where(keep[:, None], u / c[:, None], v)
            out.append(torch.where(keep, c.log() + shift[:, t], 0.0))
        return torch.stack(out, 1) if out else log_free.new_zeros(tokens.shape)

    def log_prob(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B,)`` natural log of ``(1/d) 1^T M_{w1} ... M_{wn} 1`` for each sentence (empty sentence: 0)."""
        return self.token_log_probs(tokens, lengths_or_mask).sum(1)


class WFSAMatrixLM(_MatrixEmbedding):
    """Model 4.3, a continuous WFSA: right-stochastic transitions M_w, emissions R (d, V) with rows summing
    to 1.

    ``M_w[i, :]`` is a softmax of ``theta_w[i, :]`` over row i's allowed entries; ``R[i, :]`` a softmax over
    the vocabulary. With the ``"diagonal"`` algebra every M_w is the identity (one allowed entry per row): the
    state never moves and the model is a fixed mixture of d unigram distributions.

    Args:
        vocab_size: V.
        d: number of states (matrix size).
        algebra: one of :data:`ALGEBRAS`.
        init_scale: standard deviation of the logits at initialisation.
    """

    def __init__(self, vocab_size: int, d: int = 10, algebra: str = "dense", *, init_scale: float = 0.01):
        super().__init__(vocab_size, d, algebra)
        self.theta = nn.Parameter(init_scale * torch.randn(vocab_size, self.n_free))
        self.emission = nn.Parameter(init_scale * torch.randn(d, vocab_size))

    def log_free_entries(self) -> torch.Tensor:
        """``(V, n_free)`` log M_w[i, j]: each row normalised over its own allowed entries."""
        return self.theta - self._row_logsumexp(self.theta).gather(1, self.rows.expand_as(self.theta))

    def emission_matrix(self) -> torch.Tensor:
        """``(d, V)`` R, rows summing to 1."""
        return torch.softmax(self.emission, dim=-1)

    def _run(self, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log P(tokens), final state v_T)``; per-word emission columns rescaled by their max (as in
        4.2)."""
        idx = tokens.masked_fill(~mask, 0)
        ops = self._operators(_lookup(self.free_entries(), idx))
        log_emit = _lookup(torch.log_softmax(self.emission, dim=-1).t(), idx)  # (B, T, d): log R[:, w_t]
        shift = log_emit.amax(-1)
        emit = (log_emit - shift[..., None]).exp()
        v = log_emit.new_full((tokens.shape[0], self.d), 1.0 / self.d)
        out = []
        for t in range(tokens.shape[1]):
            keep = mask[:, t]
            p = (v * emit[:, t]).sum(-1)
            out.append(torch.where(keep, p.log() + shift[:, t], 0.0))
            u = self._vecmat(v, ops[:, t])
            # a distribution; renormalised for rounding
            v = torch.where(keep[:, None], u / u.sum(-1, keepdim=True), v)
        return (torch.stack(out, 1) if out else log_emit.new_zeros(tokens.shape)), v

    def token_log_probs(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B, T)`` log(v_{t-1} . R[:, w_t]); 0 outside the mask."""
        return self._run(tokens, _as_mask(tokens, lengths_or_mask))[0]

    def log_prob(self, tokens: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``(B,)`` ``sum_t log(v_{t-1} . R[:, w_t])``."""
        return self.token_log_probs(tokens, lengths_or_mask).sum(1)

    def next_word_distribution(self, prefix: torch.Tensor, lengths_or_mask=None) -> torch.Tensor:
        """``P(next word | prefix) = v_T R``: ``(B, V)`` for ``(B, T)`` prefixes, ``(V,)`` for one ``(T,)``
        prefix."""
        single = prefix.dim() == 1
        prefix = prefix[None] if single else prefix
        _, v = self._run(prefix, _as_mask(prefix, lengths_or_mask))  # noqa
        dist = v @ self.emission_matrix()
        return dist[0] if single else dist

