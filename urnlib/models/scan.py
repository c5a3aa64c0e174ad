"""Fast exact recurrence ``h_t = (h_{t-1} * mask) @ M[x_t]`` for a small table of matrices.

Every matrix-embedding cell in urnlib (the URN, its arbitrary-matrix baseline) multiplies the state by
the matrix of the current symbol and does nothing else. Written as a Python loop with autograd, each
step has to pick every sequence's own matrix: either a ``(B, n, n)`` gather (memory-bound) or one GEMM
against all ``V`` matrices side by side (``V`` times the arithmetic needed). :func:`matrix_scan` does
the same products two faster ways, both with a hand-written backward (no autograd graph in the loop):

* **the compiled kernel** (:mod:`urnlib.models.scan_kernel`, on CPU where a C++ compiler is): per
  step the sequences are counting-sorted by symbol and multiplied six rows at a time by their
  symbol's matrix, reading the previous states (and mask) in place and writing the output directly;
  no padding, no layout buffers, parallel over row tiles;
* **the grouped layout** (:class:`_MatrixScan`, any device): the rows reading symbol ``v`` at step
  ``t`` sit together in a block, blocks of similar height form a *class*
  (:mod:`urnlib.models.scan_layout`), and one ``bmm`` per class applies its symbols' matrices. Per
  step, forward: a row gather, the mask, one ``bmm`` per class; backward: a gather, an ``addcmul``
  (next gradient times the mask plus the step's own output gradient), one ``bmm`` per class with the
  transposed matrices and one for the matrix gradient. Large buffers come from a pool.

:func:`matrix_scan_reference` is the plain formulation, kept as the definition the tests compare
against (values and gradients in float64). :func:`prefix_states` reads long sequences by a chunked
parallel prefix product (compositional evaluation).
"""

from __future__ import annotations

import math

import torch

from urnlib.models import graphs
from urnlib.models.scan_kernel import kernel
from urnlib.models.scan_layout import POOL, Layout, Lease
from urnlib.params import check_int

__all__ = ["matrix_scan", "matrix_scan_reference", "prefix_states", "dense_applies"]


def matrix_scan_reference(
    M: torch.Tensor, h0: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Straightforward loop: ``h_t = (h_{t-1} * mask) @ M[tokens[:, t]]``; returns ``(B, T, n)``."""
    B, T = tokens.shape
    h = h0.expand(B, M.shape[-1])  # (n,) or (B, n)
    out = []
    for t in range(T):
        if mask is not None:
            h = h * mask
        h = torch.bmm(h.unsqueeze(1), M[tokens[:, t]]).squeeze(1)
        out.append(h)
    return torch.stack(out, dim=1)


class _MatrixScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, M, h0, tokens, mask):
        B, _ = tokens.shape
        V, n, _ = M.shape
        lay = Layout(tokens, V)
        H = POOL.take(lay.rows, n, M)  # states after each step, in the grouped layout
        H[:B] = h0
        H[lay.zero] = 0
        keep = ctx.needs_input_grad[0]
        X = POOL.take(lay.rows, n, M) if keep else None  # the (masked) state each row multiplies
        mask_rows = None
        if mask is not None:
            mask_rows = POOL.take(lay.rows, n, M)
            torch.index_select(torch.cat([mask, mask.new_zeros(1, n)]), 0, lay.sequence_rows(), out=mask_rows)
        M_blk = None if lay.blk_sym is None else M.index_select(0, lay.blk_sym)
        tmp = None if keep else POOL.take(lay.widest, n, M)
        for lo, hi, classes in lay.steps:
            xt = X[lo:hi] if keep else tmp[: hi - lo]
            torch.index_select(H, 0, lay.fetch[lo:hi], out=xt)
            if mask_rows is not None:
                xt.mul_(mask_rows[lo:hi])
            for a, b, G, c, k in classes:
                x = xt[a - lo:b - lo].view(G, c, n)
                torch.bmm(x, M if k < 0 else M_blk[k:k + G], out=H[a:b].view(G, c, n))
        out = H.index_select(0, lay.output_rows()).view(B, -1, n)
        POOL.give(H, tmp)
        if keep:
            ctx.save_for_backward(M, M_blk)
            ctx.layout, ctx.X, ctx.mask_rows, ctx.lease = lay, X, mask_rows, Lease(X, mask_rows)
        else:
            POOL.give(mask_rows)
        return out

    @staticmethod
    def backward(ctx, dH):
        M, M_blk = ctx.saved_tensors
        lay, X, mask_rows = ctx.layout, ctx.X, ctx.mask_rows
        B, T, n = dH.shape
        back, dh_row = lay.backward_rows()
        g = POOL.take(lay.rows, n, dH)  # dL/d(state), all steps
        torch.index_select(dH.reshape(B * T, n), 0, dh_row, out=g)
        w = lay.widest
        nxt = POOL.take(w, n, dH)  # the next step's contribution, gathered
        gx = [POOL.take(w + 1, n, dH), POOL.take(w + 1, n, dH)]  # dL/d(masked input) of two steps
        gx[1][w] = 0
        Mt = M.transpose(1, 2)
        Mt_blk = None if M_blk is None else M_blk.transpose(1, 2)
        dM = torch.zeros_like(M)
        dM_blk = None if M_blk is None else torch.empty_like(M_blk)
        for t in range(T - 1, -1, -1):
            lo, hi, classes = lay.steps[t]
            gt = g[lo:hi]
            if t < T - 1:
                nt = torch.index_select(gx[(t + 1) % 2], 0, back[lo:hi], out=nxt[: hi - lo])
                if mask_rows is None:
                    gt += nt
                else:
                    gt.addcmul_(nt, mask_rows[lo:hi])
            out = gx[t % 2]
            out[w] = 0
            for a, b, G, c, k in classes:
                xv, gv = X[a:b].view(G, c, n), g[a:b].view(G, c, n)
                if k < 0:
                    dM.baddbmm_(xv.transpose(1, 2), gv)
                else:
                    torch.bmm(xv.transpose(1, 2), gv, out=dM_blk[k:k + G])
                if t > 0:  # the initial state is a constant: nothing to send further back
                    torch.bmm(gv, Mt if k < 0 else Mt_blk[k:k + G], out=out[a - lo:b - lo].view(G, c, n))
        if dM_blk is not None:
            dM.index_add_(0, lay.blk_sym, dM_blk)
        POOL.give(g, nxt, *gx)
        return dM, None, None, None


class _DenseScan(torch.autograd.Function):
    """The recurrence with every step one product against all ``V`` matrices side by side (the GPU path).

    Per step, forward: ``Y = (h * mask) [M_0 | ... | M_{V-1}]`` (``B x Vn``), then each row keeps the block of
    its own symbol (a gather). Backward, from ``g = dL/dh_t``: ``g`` scattered into the block of its row's
    symbol (zero elsewhere), the state gradient ``(G [M_0 | ...]^T) * mask``, and after the loop
    ``dM = X^T G`` over all steps in one product. ``V`` times the arithmetic the recurrence needs, but no
    host-side bookkeeping, no synchronisation and fixed shapes: a few kernels a step, which a CUDA graph
    (:mod:`urnlib.models.graphs`) replays with one launch. For small vocabularies (``V`` up to
    :data:`DENSE_MAX_SYMBOLS`).
    """

    @staticmethod
    def forward(ctx, M, h0, tokens, mask):
        B, T = tokens.shape
        V, n, _ = M.shape
        Mcat = M.permute(1, 0, 2).reshape(n, V * n)  # column block v is M[v]
        idx = tokens.t().reshape(T, B, 1, 1).expand(T, B, 1, n)
        X = M.new_empty(T, B, n)  # the (masked) state each step multiplies
        H = M.new_empty(T, B, n)
        Y = M.new_empty(B, V * n)
        h = h0.to(M.dtype).expand(B, n)
        for t in range(T):
            if mask is None:
                X[t].copy_(h)
            else:
                torch.mul(h, mask, out=X[t])
            torch.mm(X[t], Mcat, out=Y)
            torch.gather(Y.view(B, V, n), 1, idx[t], out=H[t].view(B, 1, n))
            h = H[t]
        ctx.save_for_backward(Mcat, X, tokens, mask)
        return H.transpose(0, 1).contiguous()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dH):
        Mcat, X, tokens, mask = ctx.saved_tensors
        T, B, n = X.shape
        V = Mcat.shape[1] // n
        idx = tokens.t().reshape(T, B, 1, 1).expand(T, B, 1, n)
        dHt = dH.transpose(0, 1)
        G = dH.new_zeros(T, B, V, n)  # dL/dY of every step: each row's gradient in its symbol's block
        McatT = Mcat.t()
        carry = None
        for t in range(T - 1, -1, -1):
            g = dHt[t] if carry is None else dHt[t] + carry
            G[t].scatter_(1, idx[t], g.view(B, 1, n))
            if t > 0:  # the initial state is a constant: nothing to send further back
                carry = G[t].view(B, V * n) @ McatT
                if mask is not None:
                    carry = carry * mask
        dMcat = X.reshape(T * B, n).t() @ G.view(T * B, V * n)  # (n, Vn)
        return dMcat.view(n, V, n).permute(1, 0, 2), None, None, None


#: the dense path (:class:`_DenseScan`) serves vocabularies up to this size ...
DENSE_MAX_SYMBOLS = 64
#: ... whose step gradients (``T x B x V x n``) fit in this many bytes
DENSE_MAX_BYTES = 512 << 20


def _dense_fits(M: torch.Tensor, tokens: torch.Tensor) -> bool:
    V, n, _ = M.shape
    return _fits(V, n, tokens.numel(), M.element_size())


def _fits(V: int, n: int, steps: int, itemsize: int) -> bool:
    return V <= DENSE_MAX_SYMBOLS and steps * V * n * itemsize <= DENSE_MAX_BYTES


def _dense(M, h0, tokens, mask):
    return _DenseScan.apply(M, h0, tokens, mask)


class _KernelScan(torch.autograd.Function):
    """The same recurrence by the compiled kernel (:mod:`urnlib.models.scan_kernel`)."""

    @staticmethod
    def forward(ctx, M, h0, tokens, mask):
        K = kernel()
        H = K.scan_forward(M, h0, tokens, mask)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(M, h0, tokens, mask, H)
        return H

    @staticmethod
    def backward(ctx, dH):
        M, h0, tokens, mask, H = ctx.saved_tensors
        return kernel().scan_backward(M, h0, tokens, mask, H, dH), None, None, None


def _use_kernel(M: torch.Tensor, tokens: torch.Tensor) -> bool:
    return (M.device.type == "cpu" and tokens.device.type == "cpu"
            and M.dtype in (torch.float32, torch.float64)
            and kernel() is not None)


def matrix_scan(
    M: torch.Tensor, h0: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor | None = None,
    *, method: str = "auto",
) -> torch.Tensor:
    """All states of ``h_t = (h_{t-1} * mask) @ M[tokens[:, t]]``.

    Exact (the same products as :func:`matrix_scan_reference`, only arranged differently); the gradient
    flows to ``M`` only (``h0`` and ``mask`` are constants in every urnlib model).

    Args:
        M: ``(V, n, n)`` one matrix per symbol.
        h0: ``(n,)`` initial state shared by all sequences, or ``(B, n)``, one per sequence.
        tokens: ``(B, T)`` long symbol indices in ``[0, V)``.
        mask: optional ``(B, n)`` multiplier on the state entering every step (state dropout).
        method: ``"kernel"`` (the compiled CPU kernel), ``"grouped"`` (the grouped layout, any device),
            ``"dense"`` (:class:`_DenseScan`, any device, from CUDA graphs on a GPU in training), or
            ``"auto"``:
            the kernel where it is available (CPU, float32/64, built), dense on a GPU for a small vocabulary,
            else grouped.

    Returns:
        ``(B, T, n)``: ``h_1 ... h_T``.
    """
    if method not in ("auto", "kernel", "grouped", "dense"):
        raise ValueError(f"method={method!r}: use 'auto', 'kernel', 'grouped' or 'dense'")
    if tokens.numel() == 0:  # no steps or no sequences: nothing to compute, a zero gradient
        return M.new_zeros(*tokens.shape, M.shape[-1]) + 0 * M.sum()
    if tokens.device.type == "meta":  # shape-only tensors: the layout needs the symbols' values
        return matrix_scan_reference(M, h0, tokens, mask)
    if method == "kernel" or (method == "auto" and _use_kernel(M, tokens)):
        if kernel() is None:
            raise RuntimeError("matrix_scan: the compiled kernel is unavailable "
                               "(see urnlib.models.scan_kernel)")
        return _KernelScan.apply(M, h0.to(M.dtype), tokens.long(), mask)
    if method == "dense" or (method == "auto" and _gpu(M) and _dense_fits(M, tokens)):
        return graphs.replayed(_dense, (M, h0, tokens.long(), mask), "urn-dense-scan")
    return _MatrixScan.apply(M, h0, tokens, mask)


def dense_applies(V: int, n: int, tokens: torch.Tensor, dtype: torch.dtype) -> bool:
    """Whether ``method="auto"`` takes the dense path for ``V`` matrices of size ``n`` on ``tokens`` (the
    URN then reads every symbol's matrix, not only those the batch holds: no host synchronisation to find
    them)."""
    return _gpu(tokens) and _fits(V, n, tokens.numel(), torch.empty((), dtype=dtype).element_size())


def _gpu(t: torch.Tensor) -> bool:
    """Whether ``t`` is on a GPU, where ``method="auto"`` prefers the dense path (tests on the CPU patch
    it)."""
    return t.is_cuda


def _word_length(V: int, n: int, B: int, T: int) -> int:
    """Symbols per *word* in :func:`prefix_states`: the longest ``L <= 4`` whose ``(V + 1)^L`` word
    matrices cost at most an eighth of the chunk products they save and fit in 64 MB (float32)."""
    L = 1
    while L < 4 and (V + 1) ** (L + 1) <= B * T / 8 and (V + 1) ** (L + 1) * n * n * 4 <= 64 << 20:
        L += 1
    return L


@torch.no_grad()
def prefix_states(
    M: torch.Tensor, h0: torch.Tensor, tokens: torch.Tensor, chunk: int | None = None
) -> torch.Tensor:
    """States of ``h_t = h_{t-1} @ M[tokens[:, t]]`` by a chunked parallel prefix product (no dropout).

    Compositional evaluation for long sequences. The state after ``t`` symbols is
    ``h_0 M(x_1) ... M(x_t)``, so it need not be computed one step after another:

    1. cut each sequence into ``T / C`` chunks of ``C`` symbols and form every chunk's product, all
       chunks of all sequences at once. The products are taken a *word* of ``L`` symbols at a time:
       the ``(V + 1)^L`` products of ``L`` matrices (the identity is symbol ``V``, the padding of the
       last chunk) are formed once, so each chunk needs ``C / L`` batched products, not ``C``;
    2. the state entering each chunk, ``h_0 P_1 ... P_{c-1}``: a scan over the chunk products
       (:func:`matrix_scan` with one "symbol" per chunk: ``T / C`` matrix-vector steps);
    3. the ``C`` steps inside all chunks at once (:func:`matrix_scan`, batched over sequences x chunks).

    Sequential depth about ``C / L + T / C + C`` instead of ``T`` (``C`` about ``sqrt(T)`` by default),
    at the price of ``T / L`` matrix-matrix products (``n^3`` each) on top of the matrix-vector
    products of the plain loop: a trade that pays where per-step overhead, not arithmetic, limits it.

    Args:
        M: ``(V, n, n)``.
        h0: ``(n,)`` initial state.
        tokens: ``(B, T)``.
        chunk: ``C`` (rounded up to a whole number of words); default about ``sqrt(T)``.

    Returns:
        ``(B, T, n)``, equal to :func:`matrix_scan` up to rounding.
    """
    B, T = tokens.shape
    V, n, _ = M.shape
    if T == 0:
        return M.new_zeros(B, 0, n)
    if chunk is not None:
        check_int("chunk", chunk, minimum=1, message="must be a positive integer")
    L = _word_length(V, n, B, T)
    C = chunk if chunk is not None else math.ceil(math.sqrt(T))
    C = -(-C // L) * L
    nC = -(-T // C)
    # the identity is symbol V: it pads the last chunk
    M_ext = torch.cat([M, torch.eye(n, dtype=M.dtype, device=M.device).unsqueeze(0)])
    tok = torch.full((B, nC * C), V, dtype=torch.long, device=tokens.device)
    tok[:, :T] = tokens
    tok = tok.view(B * nC, C)
    # 1. chunk products, a word at a time: word (x_1 .. x_L) is number x_1 (V+1)^(L-1) + ... + x_L
    fast = _use_kernel(M, tokens)
    words = M_ext
    for _ in range(L - 1):  # words of one more symbol: (shorter word) @ (symbol)
        pairs = torch.cartesian_prod(torch.arange(len(words)), torch.arange(V + 1)).to(tokens.device)
        if fast:
            words = kernel().chunk_products(torch.cat([M_ext, words]), pairs + torch.tensor([V + 1, 0]))
        else:
            words = torch.bmm(words.index_select(0, pairs[:, 0]), M_ext.index_select(0, pairs[:, 1]))
    w = tok.view(B * nC, C // L, L)
    word = w[..., 0]
    for i in range(1, L):
        word = word * (V + 1) + w[..., i]
    if fast:  # each chunk's product in the first-level cache, no gathers
        P = kernel().chunk_products(words, word)
    else:
        P = words.index_select(0, word[:, 0])
        step, nxt = torch.empty_like(P), torch.empty_like(P)
        for j in range(1, C // L):
            torch.index_select(words, 0, word[:, j], out=step)
            torch.bmm(P, step, out=nxt)
            P, nxt = nxt, P
    # 2. the state entering each chunk: h0, h0 P_1, h0 P_1 P_2, ...
    ids = torch.arange(B * nC, device=tokens.device).view(B, nC)
    ends = matrix_scan(P, h0, ids[:, :-1]) if nC > 1 else M.new_zeros(B, 0, n)
    starts = torch.cat([h0.expand(B, 1, n), ends], dim=1)  # (B, nC, n)
    # 3. the C steps inside all chunks together
    inner = matrix_scan(M_ext, starts.reshape(B * nC, n), tok)  # (B * nC, C, n)
    return inner.reshape(B, nC * C, n)[:, :T]
