"""Fast exact recurrence ``h_t = (h_{t-1} * mask) @ M[x_t]`` for a small table of matrices.

Every matrix-embedding cell in urnlib (the URN, its arbitrary-matrix baseline) multiplies the state by
the matrix of the current symbol and does nothing else. Written as a Python loop with autograd, each
step has to pick every sequence's own matrix: either a ``(B, n, n)`` gather (memory-bound) or one GEMM
against all ``V`` matrices side by side (``V`` times the arithmetic needed). The side-by-side
GEMM with autograd took 1.35x the time of ``torch.nn.LSTM`` per epoch at n = 50 and 2.9x at n = 128
(``benchmarks/urn_speed.py``); this module takes 0.76x and 1.58x for the Full URN.

:func:`matrix_scan` instead groups the batch **by symbol at every step**: the rows reading symbol ``v``
at step ``t`` sit together in a padded block, so one ``bmm`` of ``(G, c_t, n) @ (G, n, n)`` applies all
``G`` symbols present (``c_t`` = the largest group). Moving the state from step ``t``'s grouping to step
``t+1``'s is one row gather with an index computed once per batch, vectorised. The backward pass is
written by hand with the same layout (one gather, one ``bmm`` for the state gradient and one
``baddbmm`` for the matrix gradient per step), so no autograd graph is built inside the loop.
Per step: 3 tensor operations forward, 5 backward, whatever ``B`` and ``V``.

:func:`matrix_scan_reference` is the plain formulation, kept as the definition the tests compare
against (values and gradients in float64).
"""

from __future__ import annotations

import math

import torch

__all__ = ["matrix_scan", "matrix_scan_reference", "prefix_states"]


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


class _Layout:
    """Row bookkeeping for the grouped layout of one batch (vectorised, computed once per batch).

    One flat buffer holds, for every step ``t``, a block of ``G_t * c_t`` rows (group ``g`` of step
    ``t`` occupies rows ``g * c_t ... g * c_t + count - 1``; the rest of the group is padding) followed
    by one zero row, the source of every padding row. Before block 0 sit ``B`` rows for the initial
    state and their zero row.
    """

    def __init__(self, tokens: torch.Tensor, V: int):
        B, T = tokens.shape
        dev = tokens.device
        tok = tokens.t().contiguous()  # (T, B)
        counts = torch.zeros(T, V, dtype=torch.long, device=dev)
        counts.scatter_add_(1, tok, torch.ones_like(tok))
        present = counts > 0
        n_groups = present.sum(1)  # G_t
        cap = counts.max(1).values  # c_t
        group_of = torch.cumsum(present.long(), 1) - 1  # group number of each present symbol
        slot = _slots(tok, counts, group_of, cap)  # (T, B): row of sequence b in step t's block
        sizes = n_groups * cap  # rows of step t's block, without its zero row
        base = torch.cumsum(sizes + 1, 0) - (sizes + 1) + (B + 1)  # first row of each block
        rows = int(base[-1] + sizes[-1] + 1)
        pos = base.unsqueeze(1) + slot  # (T, B): absolute row of b's state after step t
        zero_rows = torch.cat([torch.tensor([B], device=dev), base + sizes])  # (T + 1,)
        # for every row: its step, and the sequence whose state it holds (B: padding or zero row)
        step = torch.repeat_interleave(torch.arange(-1, T, device=dev),
                                       torch.cat([torch.tensor([B + 1], device=dev), sizes + 1]))
        src = torch.full((rows,), B, dtype=torch.long, device=dev)
        src[pos.reshape(-1)] = torch.arange(B, device=dev).repeat(T)
        src[:B] = torch.arange(B, device=dev)
        real = src < B
        b = src.clamp(max=B - 1)
        prev_pos = torch.cat([torch.arange(B, device=dev).unsqueeze(0), pos])  # (T + 1, B), row 0: init
        # fetch[r]: row whose state row r multiplies (the previous step's state of the same sequence)
        self.fetch = torch.where(real, prev_pos.view(-1)[step.clamp(min=0) * B + b],
                                 zero_rows[step.clamp(min=0)])
        # back[r]: row of the next step that read the state in row r (its gradient comes from there)
        nxt = (step + 1).clamp(max=T - 1)
        has_next = real & (step >= 0) & (step < T - 1)
        self.back = torch.where(has_next, pos.view(-1)[nxt * B + b], zero_rows[-1])
        # row of dH (in (t, b) order, plus one zero row at B * T) that belongs to row r
        self.dh_row = torch.where(real & (step >= 0), step.clamp(min=0) * B + b, B * T)
        self.src, self.pos, self.rows, self.zero_rows = src, pos, rows, zero_rows
        base_l, size_l, groups_l, cap_l = base.tolist(), sizes.tolist(), n_groups.tolist(), cap.tolist()
        self.steps = []
        for t in range(T):
            syms = present[t].nonzero().squeeze(1)
            self.steps.append((base_l[t], base_l[t] + size_l[t], groups_l[t], cap_l[t], syms,
                               groups_l[t] == V))


def _slots(tok: torch.Tensor, counts: torch.Tensor, group_of: torch.Tensor,
           cap: torch.Tensor) -> torch.Tensor:
    """Row of each entry of ``tok`` (per row of ``tok``) in a layout of groups of ``cap`` rows.

    An entry's row is its group's first row plus its rank among the earlier entries with the same
    symbol. Small tables rank with a cumulative sum over a one-hot code (no sort); large vocabularies
    use a stable argsort.
    """
    V = counts.shape[1]
    if tok.numel() * V <= _ONE_HOT_LIMIT:
        one_hot = torch.zeros(*tok.shape, V, dtype=torch.int32, device=tok.device)
        one_hot.scatter_(2, tok.unsqueeze(2), 1)
        rank = one_hot.cumsum_(1).gather(2, tok.unsqueeze(2)).squeeze(2).long() - 1
    else:
        order = torch.argsort(tok, dim=1, stable=True)
        first = torch.cumsum(counts, 1) - counts
        ranked = (torch.arange(tok.shape[1], device=tok.device).expand_as(tok)
                  - first.gather(1, tok.gather(1, order)))
        rank = torch.empty_like(ranked).scatter_(1, order, ranked)
    return group_of.gather(1, tok) * cap.unsqueeze(1) + rank


_ONE_HOT_LIMIT = 1 << 21


class _MatrixScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, M, h0, tokens, mask):
        B, _ = tokens.shape
        V, n, _ = M.shape
        lay = _Layout(tokens, V)
        out = M.new_empty(lay.rows, n)  # states after each step, in the grouped layout
        out[:B] = h0
        out[lay.zero_rows] = 0
        x = M.new_empty(lay.rows, n)  # the (masked) state each row multiplies
        mask_rows = None
        if mask is not None:
            mask_rows = torch.cat([mask, mask.new_zeros(1, n)]).index_select(0, lay.src)
        for lo, hi, G, c, syms, all_syms in lay.steps:
            xt = x[lo:hi]
            torch.index_select(out, 0, lay.fetch[lo:hi], out=xt)
            if mask_rows is not None:
                xt.mul_(mask_rows[lo:hi])
            torch.bmm(xt.view(G, c, n), M if all_syms else M.index_select(0, syms),
                      out=out[lo:hi].view(G, c, n))
        x[lay.zero_rows] = 0
        ctx.save_for_backward(M, x, mask_rows)
        ctx.layout = lay
        return out.index_select(0, lay.pos.t().reshape(-1)).view(B, -1, n)

    @staticmethod
    def backward(ctx, dH):
        M, x, mask_rows = ctx.saved_tensors
        lay = ctx.layout
        B, T, n = dH.shape
        dH_flat = torch.cat([dH.transpose(0, 1).reshape(-1, n), dH.new_zeros(1, n)])
        g = dH.new_empty(lay.rows, n)  # gradient w.r.t. each state
        g_in = dH.new_empty(lay.rows, n)  # gradient w.r.t. each (unmasked) state read by the next step
        g_in[lay.zero_rows] = 0
        Mt = M.transpose(1, 2)
        dM = torch.zeros_like(M)
        for t in range(T - 1, -1, -1):
            lo, hi, G, c, syms, all_syms = lay.steps[t]
            gt = g[lo:hi]
            torch.index_select(dH_flat, 0, lay.dh_row[lo:hi], out=gt)
            gt += g_in.index_select(0, lay.back[lo:hi])
            gv = gt.view(G, c, n)
            if all_syms:
                dM.baddbmm_(x[lo:hi].view(G, c, n).transpose(1, 2), gv)
            else:
                dM.index_add_(0, syms, torch.bmm(x[lo:hi].view(G, c, n).transpose(1, 2), gv))
            if t == 0:
                break  # the initial state is a constant: nothing to send further back
            gx = g_in[lo:hi]
            torch.bmm(gv, Mt if all_syms else Mt.index_select(0, syms), out=gx.view(G, c, n))
            if mask_rows is not None:
                gx.mul_(mask_rows[lo:hi])
        return dM, None, None, None


def matrix_scan(
    M: torch.Tensor, h0: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """All states of ``h_t = (h_{t-1} * mask) @ M[tokens[:, t]]``, grouped by symbol per step.

    Exact (the same products as :func:`matrix_scan_reference`, only arranged differently); the gradient
    flows to ``M`` only (``h0`` and ``mask`` are constants in every urnlib model).

    Args:
        M: ``(V, n, n)`` one matrix per symbol.
        h0: ``(n,)`` initial state shared by all sequences, or ``(B, n)``, one per sequence.
        tokens: ``(B, T)`` long symbol indices in ``[0, V)``.
        mask: optional ``(B, n)`` multiplier on the state entering every step (state dropout).

    Returns:
        ``(B, T, n)``: ``h_1 ... h_T``.
    """
    if tokens.shape[1] == 0:
        return M.new_zeros(tokens.shape[0], 0, M.shape[-1])
    if tokens.device.type == "meta":  # shape-only tensors: the layout needs the symbols' values
        return matrix_scan_reference(M, h0, tokens, mask)
    return _MatrixScan.apply(M, h0, tokens, mask)


@torch.no_grad()
def prefix_states(
    M: torch.Tensor, h0: torch.Tensor, tokens: torch.Tensor, chunk: int | None = None
) -> torch.Tensor:
    """States of ``h_t = h_{t-1} @ M[tokens[:, t]]`` by a chunked parallel prefix product (no dropout).

    Compositional evaluation for long sequences. The state after ``t`` symbols is
    ``h_0 M(x_1) ... M(x_t)``, so it need not be computed one step after another:

    1. cut each sequence into ``T / C`` chunks of ``C`` symbols and form every chunk's product
       (``C`` steps, each one batched matrix product over all chunks of all sequences);
    2. turn the chunk products into prefix products by a Hillis-Steele scan
       (``ceil(log2(T / C))`` rounds of batched matrix products);
    3. give each chunk its starting state ``h_0 P_1 ... P_{c-1}`` and run the ``C`` steps inside all
       chunks at once (:func:`matrix_scan`, batched over sequences x chunks).

    Sequential depth ``2C + log2(T / C)`` instead of ``T`` (``C = ceil(sqrt(T))`` by default), at the
    price of ``T`` matrix-matrix products (``n^3`` each) on top of the ``T`` matrix-vector products of
    the plain loop: a trade that pays where per-step overhead, not arithmetic, limits the loop.

    Args:
        M: ``(V, n, n)``.
        h0: ``(n,)`` initial state.
        tokens: ``(B, T)``.
        chunk: ``C``; default ``ceil(sqrt(T))``.

    Returns:
        ``(B, T, n)``, equal to :func:`matrix_scan` up to rounding.
    """
    B, T = tokens.shape
    V, n, _ = M.shape
    if T == 0:
        return M.new_zeros(B, 0, n)
    C = chunk if chunk is not None else math.ceil(math.sqrt(T))
    if not isinstance(C, int) or C < 1:
        raise ValueError(f"chunk={chunk!r}: need a positive integer")
    nC = -(-T // C)
    # pad with an identity "symbol" V so every chunk has C symbols
    M_ext = torch.cat([M, torch.eye(n, dtype=M.dtype, device=M.device).unsqueeze(0)])
    tok = torch.full((B, nC * C), V, dtype=tokens.dtype, device=tokens.device)
    tok[:, :T] = tokens
    tok = tok.view(B * nC, C)
    # 1. chunk products, all chunks at once
    P = M_ext[tok[:, 0]].clone()
    for j in range(1, C):
        P = torch.bmm(P, M_ext[tok[:, j]])
    # 2. inclusive prefix products over chunks (Hillis-Steele), per sequence
    P = P.view(B, nC, n, n)
    shift = 1
    while shift < nC:
        P = torch.cat([P[:, :shift], torch.matmul(P[:, :-shift], P[:, shift:])], dim=1)
        shift *= 2
    # 3. starting state of each chunk, then the C steps inside all chunks together
    starts = torch.cat([h0.expand(B, 1, n), torch.matmul(h0, P[:, :-1])], dim=1)  # (B, nC, n)
    inner = _MatrixScan.apply(M_ext, starts.reshape(B * nC, n), tok, None)  # (B*nC, C, n)
    return inner.reshape(B, nC * C, n)[:, :T]
