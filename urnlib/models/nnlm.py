"""Neural probabilistic language model of Bengio et al. (2003), the primer chapter (lecture 004).

The model sees the ``n - 1`` previous words through a shared embedding table ``C`` (``V x m``)::

    x = [C(w_{t-1}); C(w_{t-2}); ...; C(w_{t-n+1})]          ((n-1) m values, most recent first)
    y = b + W x + U tanh(d + H x)                            (V logits)
    P(w_t = i | context) = softmax(y)_i

``W`` (``V x (n-1)m``) are the optional *direct connections* from the embeddings to the output
(lecture 004's "direct" column); ``H`` (``h x (n-1)m``), ``d`` (``h``) and ``U`` (``V x h``) the
hidden layer (the ``h`` column; ``h = 0`` leaves only the direct connections, a log-linear model of
the embeddings). The "mix" column (interpolation with a trigram) happens outside the model: see
:func:`mix` and :func:`best_alpha`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

from urnlib.params import ParameterError, check_int

__all__ = ["BengioNNLM", "nnlm_parameter_count", "mix", "best_alpha", "ALPHA_GRID"]

#: Interpolation weights tried by :func:`best_alpha`: 0, 0.05, ..., 1.
ALPHA_GRID = np.round(np.linspace(0.0, 1.0, 21), 2)


def _check_sizes(vocab_size, order, embedding_size, hidden, direct) -> None:
    for name, value, minimum in (("vocab_size", vocab_size, 1), ("order", order, 2),
                                 ("embedding_size", embedding_size, 1), ("hidden", hidden, 0)):
        check_int(name, value, minimum=minimum, message=f"must be an integer >= {minimum}")
    if not isinstance(direct, bool):
        raise ParameterError(f"direct={direct!r}: need True or False")
    if hidden == 0 and not direct:
        raise ParameterError("hidden=0 with direct=False leaves no path from the context to the output; "
                             "use hidden >= 1 or direct=True")


def nnlm_parameter_count(vocab_size: int, order: int, embedding_size: int, hidden: int,
                         direct: bool = True) -> int:
    """Free parameters of :class:`BengioNNLM`.

    Summing ``b`` (V), ``d`` (h), ``W`` (V (n-1) m, if direct), ``U`` (V h), ``H`` (h (n-1) m) and
    ``C`` (V m)::

        direct:     |V| (1 + n m + h) + h (1 + (n-1) m)      (Bengio et al. 2003, sec. 2)
        no direct:  |V| (1 + m + h)   + h (1 + (n-1) m)

    Args:
        vocab_size: |V|.
        order: n (the model conditions on n - 1 words).
        embedding_size: m.
        hidden: h (0: no hidden layer; then ``direct`` must be True).
        direct: whether the direct connections ``W`` exist.
    """
    _check_sizes(vocab_size, order, embedding_size, hidden, direct)
    V, n, m, h = vocab_size, order, embedding_size, hidden
    return V * (1 + (n if direct else 1) * m + h) + h * (1 + (n - 1) * m)


class BengioNNLM(nn.Module):
    """Feed-forward n-gram language model ``y = b + W x + U tanh(d + H x)`` (Bengio et al. 2003).

    To fit :func:`urnlib.train.fit`, ``forward`` maps ``(B, T)`` tokens to ``(B, T, V)`` logits where
    position ``t`` predicts token ``t + 1`` from tokens ``t-n+2 .. t``; positions before the start
    of the sequence read ``start_id``. ``x`` concatenates the embeddings most recent word first
    (Bengio's ``(C(w_{t-1}), ..., C(w_{t-n+1}))``).

    Initialisation: ``C`` uniform in ``[-0.05, 0.05]``; ``H``, ``U``, ``W`` Glorot uniform; biases 0.

    Args:
        vocab_size: V.
        order: n >= 2 (lecture 004: 3 or 5).
        embedding_size: m (lecture 004: 30, 60 or 100).
        hidden: h >= 0 hidden units (lecture 004: 0, 50 or 100; 0 means no hidden layer).
        direct: keep the direct connections ``W`` (``False``: ``self.direct`` is ``None``).
        start_id: symbol that pads the context on the left, ``0 <= start_id < V``.
    """

    def __init__(self, vocab_size: int, order: int, embedding_size: int, hidden: int, *,
                 direct: bool = True, start_id: int = 0):
        super().__init__()
        _check_sizes(vocab_size, order, embedding_size, hidden, direct)
        check_int("start_id", start_id, minimum=0, maximum=vocab_size - 1,
                  message=f"must be an integer in [0, {vocab_size})")
        self.vocab_size, self.order = vocab_size, order
        self.embedding_size, self.hidden = embedding_size, hidden
        self.start_id = start_id
        k = (order - 1) * embedding_size
        self.embedding = nn.Embedding(vocab_size, embedding_size)  # C
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)
        self.bias = nn.Parameter(torch.zeros(vocab_size))  # b
        if hidden > 0:
            self.hidden_layer = nn.Linear(k, hidden)  # H, d
            nn.init.xavier_uniform_(self.hidden_layer.weight)
            nn.init.zeros_(self.hidden_layer.bias)
            self.readout = nn.Linear(hidden, vocab_size, bias=False)  # U
            nn.init.xavier_uniform_(self.readout.weight)
        else:
            self.hidden_layer = None
            self.readout = None
        if direct:
            self.direct = nn.Linear(k, vocab_size, bias=False)  # W
            nn.init.xavier_uniform_(self.direct.weight)
        else:
            self.direct = None

    def contexts(self, tokens: torch.Tensor) -> torch.Tensor:
        """Context windows ``(B, T, n-1)``: ``[..., t, j]`` is token ``t - j`` (``start_id`` before 0)."""
        if tokens.dim() != 2:
            raise ParameterError(f"tokens {tuple(tokens.shape)}: need (B, T)")
        B, T = tokens.shape
        pad = tokens.new_full((B, self.order - 2), self.start_id)
        padded = torch.cat([pad, tokens], dim=1)  # (B, T + n - 2)
        return padded.unfold(1, self.order - 1, 1).flip(-1)  # oldest-first windows, reversed

    def features(self, tokens: torch.Tensor) -> torch.Tensor:
        """``x``: the concatenated context embeddings ``(B, T, (n-1) m)``."""
        windows = self.contexts(tokens)
        return self.embedding(windows).flatten(-2)

    def readout_parts(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(f, A, b)`` with logits ``= f A^T + b``: ``W x + U tanh(d + H x)`` as one product, ``f`` the
        features ``[x, tanh(d + H x)]`` and ``A = [W, U]`` (whichever of the two parts the model has)."""
        x = self.features(tokens)
        features, weights = [], []
        if self.direct is not None:
            features.append(x)
            weights.append(self.direct.weight)
        if self.hidden_layer is not None:
            features.append(torch.tanh(self.hidden_layer(x)))
            weights.append(self.readout.weight)
        if len(features) == 1:
            return features[0], weights[0], self.bias
        return torch.cat(features, dim=-1), torch.cat(weights, dim=1), self.bias

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-symbol logits ``(B, T, V)``: ``b + W x + U tanh(d + H x)``, one product (see
        :meth:`readout_parts`)."""
        return F.linear(*self.readout_parts(tokens))


def _probabilities(name: str, p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ParameterError(f"{name}: need probabilities in [0, 1]")
    return p


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise ParameterError(f"alpha={alpha!r}: need a number in [0, 1]")
    if not 0.0 <= float(alpha) <= 1.0:
        raise ParameterError(f"alpha={alpha!r}: need 0 <= alpha <= 1")
    return float(alpha)


def mix(p_nnlm, p_ngram, alpha: float) -> np.ndarray:
    """Linear interpolation ``alpha p_nnlm + (1 - alpha) p_ngram`` (lecture 004's "mix" column).

    Args:
        p_nnlm: probabilities from the neural model (any shape; whole distributions or the
            probabilities of the actual next words).
        p_ngram: probabilities from the n-gram model, same shape.
        alpha: weight of the neural model, ``0 <= alpha <= 1``.
    """
    alpha = _check_alpha(alpha)
    a, b = _probabilities("p_nnlm", p_nnlm), _probabilities("p_ngram", p_ngram)
    if a.shape != b.shape:
        raise ParameterError(f"p_nnlm {a.shape} and p_ngram {b.shape} must have the same shape")
    return alpha * a + (1.0 - alpha) * b


def best_alpha(p_nnlm_valid, p_ngram_valid) -> float:
    """The ``alpha`` of :data:`ALPHA_GRID` (0, 0.05, ..., 1) maximising the validation
    log-likelihood ``sum_t log(alpha p_nnlm[t] + (1 - alpha) p_ngram[t])``; ties go to the smaller.

    Args:
        p_nnlm_valid: neural-model probabilities of the actual next words of the validation set.
        p_ngram_valid: n-gram probabilities of the same words.
    """
    a, b = _probabilities("p_nnlm_valid", p_nnlm_valid), _probabilities("p_ngram_valid", p_ngram_valid)
    if a.shape != b.shape or a.size == 0:
        raise ParameterError(f"p_nnlm_valid {a.shape} and p_ngram_valid {b.shape}: "
                             "need the same non-empty shape")
    with np.errstate(divide="ignore"):
        scores = [float(np.sum(np.log(mix(a, b, float(alpha))))) for alpha in ALPHA_GRID]
    return float(ALPHA_GRID[int(np.argmax(scores))])
