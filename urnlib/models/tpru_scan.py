"""The TPRU recurrence over a whole sequence as one autograd node, with its backward written by hand.

:meth:`urnlib.models.tpru_cell.TPRU.forward` runs eqs. 2-6 for every step; through autograd that is about
twenty graph nodes a step, each with its own bookkeeping, and the products that accumulate the weights'
gradients are taken one step at a time. :class:`TPRUScan` runs the same steps without a graph, keeps what the
backward pass needs, and in the backward pass runs the steps in reverse with a few tensor operations each;
the gradients of the weight matrices are summed over all steps by one product each after the loop.

Per step (``P = sN + d`` columns: fillers then gate, as :meth:`TPRU._prepare` lays them out)::

    hb = b_{t-1} M_b;  a1 = hb[:, :sN] + b_b;  a2 = hx_t[:, :sN] + b_x
    f~ = relu(a1) + relu(a2);  f = normalise(f~) per slice (relu-squared, or softmax)
    b~ = R f (slice by slice);  g = sigmoid(hb[:, sN:] + hx_t[:, sN:]);  b_t = b_{t-1} + g (b~ - b_{t-1})

and backward, from ``G = dL/db_t``::

    dg = G (b~ - b_{t-1});  db~ = G g;  dz = dg g (1 - g)
    df = R^T db~ (slice by slice);  df~ = dq 2 f~, dq = (df - <df, f>) / S   (relu-squared, S = sum f~^2)
                                    df~ = f (df - <df, f>)                  (softmax)
    da1 = df~ [a1 > 0];  da2 = df~ [a2 > 0]
    dL/db_{t-1} = G (1 - g) + [da1 | dz] M_b^T,   dL/dhx_t = [da2 | dz]

and after the loop ``dM_b = sum_t b_{t-1}^T [da1 | dz]_t``, ``dR^{(k)} = sum_t db~^{(k)T}_t f^{(k)}_t``,
``db_b = sum da1``, ``db_x = sum da2``. ``tests/test_tpru_scan.py`` compares values and gradients with the
autograd loop in float64 (both normalisations, one and several slices, the all-zero case of eq. 4).
"""

from __future__ import annotations

import functools

import torch

from urnlib.models import graphs

__all__ = ["TPRUScan", "scan"]


def _normalise(ft: torch.Tensor, softmax: bool, out: torch.Tensor, q: torch.Tensor | None) -> None:
    """Eq. 4 (or softmax) over the last axis, written into ``out``; for eq. 4 also ``q = f~ / S`` (twice it is
    what the backward pass multiplies by), with the sums S raised to the smallest normal number where they are
    0 (there every f~ is 0, so f = 0 / S = 0 and q = 0: no 0/0 and no overflow)."""
    if softmax:
        torch.softmax(ft, dim=-1, out=out)
        return
    total = ft.square().sum(dim=-1, keepdim=True).clamp_(min=torch.finfo(ft.dtype).tiny)
    torch.div(ft, total, out=q)  # f~ / S (the caller doubles it: q = 2 f~ / S)
    torch.mul(q, ft, out=out)  # f = f~^2 / S


class TPRUScan(torch.autograd.Function):
    """Forward and backward of the module docstring. Every per-step quantity the backward pass reads is
    written into one buffer of all steps as it is computed (no list stacked afterwards), in the layout its
    consumer reads without a copy; the relu masks are kept as 0/1 in the values' dtype. What does not depend
    on the step before (the inputs' parts, the masks, ``1 - g``, ``g (1 - g)``, ``b~ - b_{t-1}``) is formed
    for all steps at once outside the loops, each value by the same operations as in the step (the float32
    results and gradients were compared bitwise with the form that took them step by step when it changed)."""

    @staticmethod
    def forward(ctx, hx, M_b, R_s, b_b, b_x, b0, softmax: bool):
        B, T, P = hx.shape
        s, ds, N = R_s.shape
        sN, d = s * N, P - s * N
        Rt = R_s.transpose(1, 2)  # (s, N, ds): b~^{(k)} = f^{(k)} R^{(k)T}
        fx = (hx[:, :, :sN] + b_x).clamp_(min=0)  # (B, T, sN): relu(a2) of every step at once
        new = hx.new_empty
        fx_t = fx.transpose(0, 1).contiguous().unbind(0)  # step-major, each step's rows contiguous
        gx_t = hx[:, :, sN:].transpose(0, 1).contiguous().unbind(0)
        states, f_all = new(T + 1, B, d), new(T, B, s, N)
        q_all = None if softmax else new(T, B, s, N)
        a1_all = new(T, B, sN)  # a1 of every step: its mask [a1 > 0] is taken after the loop
        bt_all, g_all = new(T, B, d), new(T, B, d)
        states[0] = b0
        b = b0
        ft = new(B, sN)
        ft3 = ft.view(B, s, N)
        steps = zip(fx_t, gx_t, a1_all.unbind(0), f_all.unbind(0), bt_all.unbind(0), g_all.unbind(0),
                    states[1:].unbind(0), q_all.unbind(0) if q_all is not None else [None] * T)
        for fx_s, gx_s, a1, f, bt, g, b_next, q in steps:
            hb = b @ M_b  # (B, sN + d): [f_b | W_b b]
            torch.add(hb[:, :sN], b_b, out=a1)
            torch.clamp(a1, min=0, out=ft).add_(fx_s)
            _normalise(ft3, softmax, f, q)
            if s == 1:
                torch.mm(f[:, 0], Rt[0], out=bt)
            else:
                bt.view(B, s, ds).copy_(torch.bmm(f.transpose(0, 1), Rt).transpose(0, 1))
            torch.sigmoid(hb[:, sN:].add_(gx_s), out=g)
            b = torch.addcmul(b, g, bt - b, out=b_next)
        m1_all = torch.gt(a1_all, 0).to(hx.dtype)  # [a1 > 0] as 0/1 (a product with a bool mask is 5x slower)
        if q_all is not None:
            q_all.mul_(2.0)  # q = 2 f~ / S
        ctx.softmax = softmax
        ctx.save_for_backward(fx, M_b, R_s, states, f_all, m1_all, bt_all, g_all,
                              f_all if softmax else q_all)
        return states[1:].transpose(0, 1), f_all.transpose(0, 1)

    @staticmethod
    def backward(ctx, grad_states, grad_f):
        fx, M_b, R_s, states, f_all, m1_all, bt_all, g_all, q_all = ctx.saved_tensors
        softmax = ctx.softmax
        T, B, s, N = f_all.shape
        sN = s * N
        d = states.shape[2]
        ds = d // s
        M1T, M2T = M_b[:, :sN].T, M_b[:, sN:].T  # (sN, d), (d, d)
        dhb_all = states.new_empty(T, B, sN + d)  # [da1 | dz] per step
        dft_all = states.new_empty(T, B, sN)  # df~ per step (da2 = df~ [a2 > 0], formed after the loop)
        dbt_all = states.new_empty(T, B, d)
        keep = 1 - g_all  # 1 - g, g (1 - g) and b~ - b_{t-1} of every step
        slope = g_all * keep
        delta = bt_all - states[:-1]
        grads = grad_states.transpose(0, 1).unbind(0) if grad_states is not None else [None] * T
        grads_f = grad_f.transpose(0, 1).unbind(0) if grad_f is not None else [None] * T
        G = states.new_zeros(B, d)
        R0 = R_s[0]
        # each step's views, taken once (a view per tensor per step costs as much as a small product)
        per_step = zip(grads, grads_f, g_all.unbind(0), dbt_all.unbind(0), dhb_all[:, :, :sN].unbind(0),
                       dhb_all[:, :, sN:].unbind(0), delta.unbind(0), slope.unbind(0), f_all.unbind(0),
                       dft_all.unbind(0), dft_all.view(T, B, s, N).unbind(0),
                       (f_all if softmax else q_all).unbind(0), m1_all.unbind(0), keep.unbind(0))
        for grad, grad_f_t, g, dbt, da1, dz, delta_t, slope_t, f, dft_flat, dft, q, m1, keep_t in reversed(
                list(per_step)):
            if grad is not None:
                G = G + grad
            torch.mul(G, g, out=dbt)
            torch.mul(G, delta_t, out=dz).mul_(slope_t)
            if s == 1:
                df = (dbt @ R0).view(B, 1, N)
            else:
                df = torch.bmm(dbt.view(B, s, ds).transpose(0, 1), R_s).transpose(0, 1)  # (B, s, N)
            if grad_f_t is not None:
                df = df + grad_f_t
            inner = (df * f).sum(dim=-1, keepdim=True)
            torch.sub(df, inner, out=dft)
            dft.mul_(q)  # softmax: f (df - <df, f>); eq. 4: (df - <df, f>) 2 f~ / S
            torch.mul(dft_flat, m1, out=da1)
            G = torch.addmm(G * keep_t, da1, M1T).addmm_(dz, M2T)
        hb_all = dhb_all.view(T * B, sN + d)
        d_M_b = states[:-1].reshape(T * B, d).T @ hb_all
        if s == 1:
            d_R = (dbt_all.view(T * B, d).T @ f_all.view(T * B, N)).unsqueeze(0)
        else:
            d_R = torch.bmm(dbt_all.view(T * B, s, ds).permute(1, 2, 0),
                            f_all.view(T * B, s, N).transpose(0, 1))  # (s, ds, N), no copy
        d_b_b = dhb_all[:, :, :sN].sum()
        dhx = states.new_empty(B, T, sN + d)  # batch first, as hx
        m2 = torch.gt(fx, 0, out=torch.empty_like(fx))  # [a2 > 0] as 0/1
        torch.mul(dft_all.transpose(0, 1), m2, out=dhx[:, :, :sN])  # da2
        dhx[:, :, sN:] = dhb_all[:, :, sN:].transpose(0, 1)  # dz
        d_b_x = dhx[:, :, :sN].sum()
        return dhx, d_M_b, d_R, d_b_b, d_b_x, G, None


def scan(hx: torch.Tensor, M_b: torch.Tensor, R_s: torch.Tensor, b_b: torch.Tensor, b_x: torch.Tensor,
         b0: torch.Tensor, softmax: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """States ``(B, T, d)`` and fillers ``(B, T, s, N)`` of a TPRU layer (see the module docstring).

    Args:
        hx: ``x_t M_x + [0 | c]`` for every step, ``(B, T, sN + d)``.
        M_b: ``(d, sN + d)``; R_s: ``(s, d/s, N)``; b_b, b_x: the scalars of eq. 5; b0: ``(B, d)``.
        softmax: normalise with softmax instead of eq. 4.
    """
    return graphs.replayed(functools.partial(_apply, softmax=softmax), (hx, M_b, R_s, b_b, b_x, b0),
                           ("tpru-scan", softmax))


def _apply(hx, M_b, R_s, b_b, b_x, b0, softmax: bool):
    return TPRUScan.apply(hx, M_b, R_s, b_b, b_x, b0, softmax)
