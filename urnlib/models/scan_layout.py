"""Bookkeeping for :func:`urnlib.models.scan.matrix_scan`: the grouped row layout of a batch, and a pool
of scratch buffers.

**Layout.** At step ``t`` the sequences reading symbol ``v`` (``k_{t,v}`` of them) occupy one *block*
of rows, so one batched product applies every symbol's matrix at once. A batched product needs blocks
of equal height, so blocks are padded; padding to the step's largest count wastes rows when counts
differ (on Dyck strings, opening and closing brackets alternate: half the symbols of a step are read
by about 80 sequences, the other half by about 25). The symbols of a step are therefore sorted into
*classes* by count (powers of two: ``(2^(i-1), 2^i]``, then neighbouring classes merged when the extra
padding costs less than a product call, ``_CALL_ROWS`` rows); each class is one batched product with
its own block height. The rows of all steps, classes and blocks follow each other in one flat buffer:
``B`` rows for the initial states first, one zero row (``zero``, the source of every padding row)
last. A class whose blocks are all ``V`` symbols in order multiplies ``M`` in place; every other
block's matrix is gathered once per batch (``blk_sym``).

Computed with NumPy on the host (a few dozen operations on ``T x B`` integers: far cheaper there than
as small tensor operations), then moved to the tokens' device.

**Pool.** A multi-megabyte tensor allocated afresh for every batch is returned to the operating
system when freed, and its pages fault in again on first use: measured on the benchmark machine, that
cost as much as the products the buffer holds. The scan takes its large buffers from :data:`POOL` and
gives them back when no autograd graph can use them any more (:class:`Lease`).
"""

from __future__ import annotations

import numpy as np
import torch

_CALL_ROWS = 64  # one more batched product costs about as much as this many rows of products
IN_PLACE_ONLY = False  # tests: one class of all V symbols per step, M in place (the layout before classes)


class Pool:
    """Scratch buffers reused from batch to batch (at most ``keep`` held)."""

    def __init__(self, keep: int = 10):
        self.keep, self.free = keep, []

    def take(self, rows: int, n: int, like: torch.Tensor) -> torch.Tensor:
        need = rows * n
        best = None
        for i, b in enumerate(self.free):
            if b.dtype == like.dtype and b.device == like.device and b.numel() >= need:
                if best is None or b.numel() < self.free[best].numel():
                    best = i
        flat = self.free.pop(best) if best is not None else like.new_empty(need + need // 4)
        return flat[:need].view(rows, n)

    def give(self, *views: torch.Tensor | None) -> None:
        for v in views:
            if v is not None:
                self.free.append(v._base if v._base is not None else v)
        if len(self.free) > self.keep:
            self.free.sort(key=torch.Tensor.numel)
            del self.free[: len(self.free) - self.keep]


POOL = Pool()


class Lease:
    """Gives buffers back to :data:`POOL` when the object holding it (an autograd node) is freed."""

    def __init__(self, *views: torch.Tensor | None):
        self.views = views

    def __del__(self):
        POOL.give(*self.views)


def _classes(t_idx: np.ndarray, k: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """The class of every present ``(step, symbol)`` pair (``t_idx``, its count ``k``): ``(class number
    within its step, 0 = largest; block height of each pair's class)``."""
    if IN_PLACE_ONLY:
        height = np.zeros(T, dtype=np.int64)
        np.maximum.at(height, t_idx, k)
        return np.zeros_like(k), height[t_idx]
    level = np.frexp(k - 1)[1]  # ceil(log2 k): classes (2^(i-1), 2^i]
    L = int(level.max()) + 1
    tl = t_idx * L + level
    n_sym = np.bincount(tl, minlength=T * L).reshape(T, L)
    top = np.zeros(T * L, dtype=np.int64)
    np.maximum.at(top, tl, k)
    top = top.reshape(T, L)
    cls = np.zeros((T, L), dtype=np.int64)
    lead = np.zeros((T, L), dtype=np.int64)  # block height of the class each level joins
    n_cls = np.full(T, -1)
    height = np.zeros(T, dtype=np.int64)
    for lv in range(L - 1, -1, -1):  # from the largest counts down; every step at once
        here = n_sym[:, lv] > 0
        new = here & ((n_cls < 0) | (n_sym[:, lv] * (height - top[:, lv]) > _CALL_ROWS))
        n_cls = n_cls + new
        height = np.where(new, top[:, lv], height)
        cls[:, lv], lead[:, lv] = n_cls, height
    return cls[t_idx, level], lead[t_idx, level]


class Layout:
    """Row bookkeeping for one batch of ``tokens`` ``(B, T)`` over ``V`` symbols.

    Attributes:
        steps: per step ``(lo, hi, classes)``: its rows ``lo:hi`` and its classes
            ``(lo, hi, blocks, height, k)``, ``k`` the first block in ``blk_sym`` (``-1``: ``M`` in place).
        rows, zero, widest: buffer rows, the zero row, the most rows of one step.
        pos: ``(T, B)`` the row of sequence ``b``'s state after step ``t``.
        fetch: ``(rows,)`` the row whose state row ``r`` multiplies (``zero`` for padding).
        blk_sym: the symbol of every gathered block, or ``None``.
    """

    def __init__(self, tokens: torch.Tensor, V: int):
        B, T = tokens.shape
        self.B, self.T, self.device = B, T, tokens.device
        tok = np.ascontiguousarray(tokens.detach().cpu().numpy().T)  # (T, B)
        if tok.size and (tok.min() < 0 or tok.max() >= V):
            raise IndexError(f"matrix_scan: symbols outside [0, {V}): {int(tok.min())} .. {int(tok.max())}")
        counts = np.bincount((tok + V * np.arange(T)[:, None]).ravel(), minlength=T * V).reshape(T, V)
        # the (step, symbol) pairs present, by step then symbol (all of them: every matrix in place)
        t_idx, v_idx = np.nonzero(np.ones_like(counts) if IN_PLACE_ONLY else counts)
        cls, height = _classes(t_idx, counts[t_idx, v_idx], T)
        order = np.lexsort((v_idx, cls, t_idx))  # blocks in row order: by step, class, symbol
        t_idx, v_idx, cls, height = t_idx[order], v_idx[order], cls[order], height[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (t_idx[1:] != t_idx[:-1]) | (cls[1:] != cls[:-1])
        first = np.flatnonzero(new)  # first block of each class
        G = np.diff(np.append(first, len(order)))  # blocks per class
        c = height[first]
        in_place = G == V
        lo_cls = B + np.cumsum(G * c) - G * c
        within = np.arange(len(order)) - np.repeat(first, G)
        sym_row = np.zeros((T, V), dtype=np.int64)  # first row of (t, v)'s block
        sym_row[t_idx, v_idx] = np.repeat(lo_cls, G) + within * height
        gathered = ~np.repeat(in_place, G)
        self.blk_sym = torch.from_numpy(v_idx[gathered]).to(self.device) if gathered.any() else None
        k_cls = np.cumsum(np.where(in_place, 0, G)) - np.where(in_place, 0, G)
        per_step = [[] for _ in range(T)]
        for tc, lo, g, cc, ip, kk in zip(t_idx[first].tolist(), lo_cls.tolist(), G.tolist(), c.tolist(),
                                         in_place.tolist(), k_cls.tolist()):
            per_step[tc].append((lo, lo + g * cc, g, cc, -1 if ip else kk))
        self.steps = [(cl[0][0], cl[-1][1], cl) for cl in per_step]
        self.zero = B + int((G * c).sum())
        self.rows = self.zero + 1
        self.widest = max(hi - lo for lo, hi, _ in self.steps)
        # each sequence's rank among those reading the same symbol at the same step (the order of a
        # stable sort), hence its row
        by_sym = np.argsort(tok.astype(np.uint16) if V <= 1 << 16 else tok, axis=1, kind="stable")
        sorted_tok = np.take_along_axis(tok, by_sym, 1)
        before = np.cumsum(counts, 1) - counts  # sequences of smaller symbols at the same step
        rows_t = np.arange(T)[:, None]
        row = sym_row[rows_t, sorted_tok] + np.arange(B) - before[rows_t, sorted_tok]
        pos = np.empty_like(row)
        pos[rows_t, by_sym] = row
        self._pos = pos
        fetch = np.full(self.rows, self.zero, dtype=np.int64)
        fetch[pos[0]] = np.arange(B)
        fetch[pos[1:].ravel()] = pos[:-1].ravel()
        self.pos = torch.from_numpy(pos).to(self.device)
        self.fetch = torch.from_numpy(fetch).to(self.device)

    def output_rows(self) -> torch.Tensor:
        """The rows of ``h_1 .. h_T`` in ``(b, t)`` order."""
        return torch.from_numpy(np.ascontiguousarray(self._pos.T).ravel()).to(self.device)

    def sequence_rows(self) -> torch.Tensor:
        """Row ``r``'s sequence (``B`` for padding), to spread a per-sequence mask over the rows."""
        src = np.full(self.rows, self.B, dtype=np.int64)
        src[self._pos.ravel()] = np.tile(np.arange(self.B), self.T)
        return torch.from_numpy(src).to(self.device)

    def backward_rows(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``back[r]``: the row, counted from the first row of step ``t+1``, that read row ``r``'s state
        (its gradient comes from there; ``widest``, a zero row, after the last step and for padding);
        ``dh[r]``: row ``r``'s row of ``dH`` in ``(b, t)`` order (``0`` for padding: a padding row's
        input is zero, so what its gradient holds is never used, only finite)."""
        B, T, pos = self.B, self.T, self._pos
        starts = np.array([lo for lo, _, _ in self.steps])
        back = np.full(self.rows, self.widest, dtype=np.int64)
        back[pos[:-1].ravel()] = (pos[1:] - starts[1:, None]).ravel()
        dh = np.zeros(self.rows, dtype=np.int64)
        dh[pos.ravel()] = (np.arange(B)[None, :] * T + np.arange(T)[:, None]).ravel()
        return torch.from_numpy(back).to(self.device), torch.from_numpy(dh).to(self.device)
