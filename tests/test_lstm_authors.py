"""The authors' TypedFlow LSTM as an option of PaperLSTM (paper 001's code, XDep.hs / LSTMUtils.hs): each
gate's recurrent block initialised orthogonal and its input block Glorot, the state mask on h_{t-1} entering
the next step only, and a readout mask of its own. Defaults leave the chapter's LSTM as it was."""

import pytest
import torch

from urnlib.models.recurrent import PaperLSTM, lstm_parameter_count
from urnlib.params import ParameterError


def test_typedflow_init_makes_every_gates_recurrent_block_orthogonal_and_keeps_the_biases():
    torch.manual_seed(0)
    m = PaperLSTM(10, 8, 5, init="typedflow")
    W = m.gates.weight.detach()
    for gate in range(4):
        block = W[gate * 8:(gate + 1) * 8, :8]
        assert torch.allclose(block @ block.T, torch.eye(8), atol=1e-5)
        limit = (6 / (8 + 5)) ** 0.5  # Glorot uniform of one gate's (8, 5) input block
        assert W[gate * 8:(gate + 1) * 8, 8:].abs().max() <= limit
    assert torch.equal(m.gates.bias[:8], torch.ones(8)) and torch.equal(m.gates.bias[8:], torch.zeros(24))
    assert sum(p.numel() for p in m.parameters()) == lstm_parameter_count(10, 8, 5)
    with pytest.raises(ParameterError, match="init"):
        PaperLSTM(10, 8, 5, init="orthogonal")


def test_the_output_mask_changes_nothing_without_dropout_or_in_eval_mode():
    torch.manual_seed(1)
    a = PaperLSTM(7, 6, 4, dropout=0.1)
    b = PaperLSTM(7, 6, 4, dropout=0.1, output_mask=True)
    b.load_state_dict(a.state_dict())
    x = torch.randint(0, 7, (3, 9))
    a.eval(), b.eval()
    assert torch.allclose(a(x), b(x), atol=1e-6)


def test_in_training_the_state_mask_drops_only_the_recurrence_and_the_readout_has_its_own_mask():
    torch.manual_seed(2)
    m = PaperLSTM(7, 6, 4, dropout=0.5, output_mask=True).train()
    x = torch.randint(0, 7, (4, 5))
    torch.manual_seed(3)
    states, W, b = m.readout_parts(x)
    # by hand, with the masks drawn in the same order: input, state, then the readout's
    torch.manual_seed(3)
    emb, kept, scale = m._inputs(x)
    out_mask = torch.empty(4, 1, 6).bernoulli_(0.5) * scale
    h, c, hs = torch.zeros(4, 6), torch.zeros(4, 6), []
    Wh, Wx = m.gates.weight[:, :6], m.gates.weight[:, 6:]
    for t in range(5):
        g = emb[t] @ Wx.T + m.gates.bias + (h * kept * scale) @ Wh.T
        f, i, o = torch.sigmoid(g[:, :18]).split(6, dim=1)
        c = f * c + i * torch.tanh(g[:, 18:])
        h = o * torch.tanh(c)
        hs.append(h)
    assert torch.allclose(states, torch.stack(hs, 1) * out_mask, atol=1e-6)
    # the two masks are not the same draw (one unit dropped in the recurrence is read by the readout)
    assert not torch.equal(kept.unsqueeze(1), (out_mask > 0).float())
    states.sum().backward()
    assert m.gates.weight.grad is not None and m.gates.weight.grad.abs().sum() > 0
