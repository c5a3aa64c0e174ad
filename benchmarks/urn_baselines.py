"""The formulations ``urn_speed.py`` compares with urnlib's URN: the authors' per-token exponential,
urnlib's URN with the grouped layout, the previous autograd loop, and ``torch.nn.LSTM``."""

from __future__ import annotations

import torch
from torch import nn

from urnlib.languages import dyck
from urnlib.models import URN
from urnlib.models.scan import matrix_scan
from urnlib.models.unitary import _dropout_mask

V = len(dyck.DyckVocab())


class PerTokenURN(URN):
    """The authors' design: Q(x_t) = expm(S(x_t)) computed for every sequence at every step (with a
    per-sequence parameter-dropout mask, the reason that design needs it)."""

    def states(self, tokens):
        B, T = tokens.shape
        h = self.h0.expand(B, self.n)
        pmask = _dropout_mask((B, self.embedding.shape[1]), self.dropout, h) if self.training else None
        smask = _dropout_mask((B, self.n), self.dropout, h) if self.training else None
        out = []
        for t in range(T):
            P = self.embedding[tokens[:, t]]
            if pmask is not None:
                P, h = P * pmask, h * smask
            Q = torch.linalg.matrix_exp(self.generators(P))  # (B, n, n)
            h = torch.bmm(h.unsqueeze(1), Q).squeeze(1)
            out.append(h)
        return torch.stack(out, 1)


class GroupedURN(URN):
    """urnlib's URN with the recurrence by the grouped layout (what runs where no compiler is)."""

    def states(self, tokens):
        present = torch.bincount(tokens.reshape(-1), minlength=self.vocab_size) > 0
        M = self.matrices(present.nonzero().squeeze(1))
        tokens = (torch.cumsum(present, 0) - 1)[tokens]
        mask = _dropout_mask((tokens.shape[0], self.n), self.dropout, M) if self.training else None
        return matrix_scan(M, self.h0, tokens, mask, method="grouped")


class AutogradLoopURN(URN):
    """The previous urnlib formulation: one GEMM against all V matrices side by side, then each row
    picks its symbol's block; autograd records every step."""

    def states(self, tokens):
        B, T = tokens.shape
        M = self.matrices()
        h = self.h0.expand(B, self.n)
        mask = _dropout_mask((B, self.n), self.dropout, M) if self.training else None
        M_cat = M.transpose(0, 1).reshape(self.n, -1)
        rows = torch.arange(B)
        out = []
        for t in range(T):
            if mask is not None:
                h = h * mask
            h = (h @ M_cat).view(B, -1, self.n)[rows, tokens[:, t]]
            out.append(h)
        return torch.stack(out, 1)


class TorchLSTM(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.embed = nn.Embedding(V, 12)
        self.lstm = nn.LSTM(12, n, batch_first=True)
        self.readout = nn.Linear(n, V)

    def forward(self, x):
        return self.readout(self.lstm(self.embed(x))[0])
