"""Device placement without a GPU: every tensor a model, loss or evaluator makes takes the device of its
inputs.

On a CUDA machine a tensor built on the CPU and used with the model's tensors stops the run ("Expected all
tensors to be on the same device"). These tests catch that on the CPU build of torch by running the code on a
*simulated second device*: :class:`Elsewhere`, a tensor subclass that holds a real CPU tensor but reports the
device ``lazy:0`` (a device type every torch build knows, whose autograd runs on the CPU's thread), and
:class:`OnElsewhere`, a dispatch mode that

* runs every aten operation on the CPU tensors inside, so values are real (data-dependent code - the
  matrix scan's layout, ``.item()``, boolean masks - runs as on a GPU, and results compare with the CPU's);
* refuses an operation that mixes an ``Elsewhere`` tensor with a plain CPU tensor of one or more dimensions
  (what CUDA refuses; ``copy_`` and ``_to_copy``, the transfers, may mix); 0-dim CPU tensors may mix, as CUDA
  allows CPU scalars in elementwise operations;
* makes a factory (``torch.zeros(..., device=...)``) or ``.to(device)`` naming the simulated device give an
  ``Elsewhere`` tensor, and ``.cpu()`` give a plain one.

What it catches: a tensor made without the device of the inputs (``torch.tensor``, ``torch.arange``,
``from_numpy`` without ``.to``), data left on the CPU by an evaluator, index tensors left behind (the
scan's layout), a CPU input fed to a model on a device. Non-CPU code paths run here (the grouped matrix
scan instead of the compiled CPU kernel; torch's generic RNN loop instead of oneDNN's).

What it cannot catch: anything particular to CUDA's kernels. cuDNN's requirements on the weights of its fused
RNN calls (contiguous, one chunk: the fault of the paper LSTM) are checked as a property instead
(:func:`test_fused_rnn_weights_are_one_contiguous_chunk`); CUDA's own numerics, launch errors, memory, and
mixing rules finer than "0-dim CPU tensors may mix" (CUDA refuses a 0-dim CPU index, this simulation does not)
need a GPU: ``tests/test_gpu.py``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing
from torch.utils._pytree import tree_flatten, tree_map

from urnlib.losses import cross_entropy, lm_loss, target_log_probs
from urnlib.models.registry import KINDS, build_model
from urnlib.testing import SAMPLE_SPECS

torch.set_num_threads(1)

OTHER = torch.device("lazy", 0)
#: the transfers: they may read one device and write the other
_TRANSFERS = {torch.ops.aten.copy_.default, torch.ops.aten._to_copy.default}


class Elsewhere(torch.Tensor):
    """A CPU tensor that says it lives on :data:`OTHER` (see the module docstring)."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        return torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
            layout=elem.layout, device=OTHER, requires_grad=elem.requires_grad)

    def __init__(self, elem: torch.Tensor):
        self.elem = elem

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __repr__(self):
        return f"Elsewhere({self.elem!r})"

    def tolist(self):  # a CUDA tensor's tolist copies to the host; torch refuses it for every subclass
        return self.elem.tolist()

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _dispatch(func, args, kwargs):
    flat, _ = tree_flatten((args, kwargs))
    there = any(isinstance(a, Elsewhere) for a in flat)
    here = [a for a in flat if type(a) is torch.Tensor and a.dim() > 0]
    if there and here and func not in _TRANSFERS:
        shapes = [tuple(a.shape) for a in here]
        raise RuntimeError(f"{func}: expected all tensors to be on the same device, found {OTHER} and cpu "
                           f"(CPU tensors of shapes {shapes})")
    device = kwargs.get("device")
    if not there and device is None:  # the CPU's own work
        return func(*args, **kwargs)
    to_other = device is not None and torch.device(device).type == OTHER.type
    if device is not None:
        kwargs = {**kwargs, "device": torch.device("cpu")}
    inner_args, inner_kwargs = tree_map(lambda a: a.elem if isinstance(a, Elsewhere) else a, (args, kwargs))
    out = func(*inner_args, **inner_kwargs)
    wrap = to_other or (there and device is None)
    out = tree_map(lambda t: Elsewhere(t) if wrap and type(t) is torch.Tensor else t, out)
    return return_and_correct_aliasing(func, args, kwargs, out)


class OnElsewhere(TorchDispatchMode):
    """Within the block, factories and transfers can name :data:`OTHER`, and mixing is refused."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


@pytest.fixture
def elsewhere():
    with OnElsewhere():
        yield OTHER


def test_the_simulation_refuses_mixing_and_moves_data(elsewhere):
    x = torch.arange(6.0).to(elsewhere)
    assert isinstance(x, Elsewhere) and x.device == OTHER
    assert torch.zeros(2, device=x.device).device == OTHER
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(6)
    with pytest.raises(RuntimeError, match="same device"):
        x.index_select(0, torch.tensor([0, 2]))
    assert (x * torch.tensor(2.0)).cpu().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # a CPU scalar may mix
    y = x.view(2, 3).transpose(0, 1)
    y.transpose_(0, 1)
    assert type(y.cpu()) is torch.Tensor and y.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


# ------------------------------------------------------------------------------------------------ models
V = 7
#: small specs of every registered kind (a kind registered without one there fails the test below)
SPECS = SAMPLE_SPECS
ALL_SPECS = [s for kind in SPECS.values() for s in kind]


def test_every_registered_kind_has_a_spec_here():
    assert set(SPECS) == set(KINDS), "add a small spec of each new model kind to SPECS"


def _batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, V, (5, 9), generator=g)
    targets = torch.randint(0, V, (5, 9), generator=g)
    targets[:, :2] = -100  # ignored positions, as a language model's warm-up
    return tokens, targets


def _objective(model, tokens, targets):
    """A scalar to differentiate, through the chapter's loss where the model has one."""
    if hasattr(model, "nll"):  # the matrix embeddings (paper 003): per-sentence likelihoods
        lengths = torch.arange(tokens.shape[1] - 4, tokens.shape[1] + 1, device=tokens.device)
        return model.nll(tokens, lengths).sum(), None
    out = model(tokens)
    return lm_loss(model, tokens, targets)[0] + out.double().square().mean(), out


def _pair(spec: str):
    torch.manual_seed(0)
    cpu = build_model(spec, V).double()
    return cpu, copy.deepcopy(cpu)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_model_on_another_device_equals_the_cpu(spec, elsewhere):
    """Eval mode, float64: the forward pass and every gradient on the simulated device equal the CPU's
    (other code paths: the grouped scan, torch's generic RNN loop)."""
    cpu, other = _pair(spec)
    tokens, targets = _batch()
    other.to(elsewhere).eval()
    cpu.eval()
    loss, out = _objective(cpu, tokens, targets)
    loss.backward()
    loss_o, out_o = _objective(other, tokens.to(elsewhere), targets.to(elsewhere))
    loss_o.backward()
    assert loss_o.device == OTHER
    torch.testing.assert_close(loss_o.cpu(), loss, rtol=1e-10, atol=1e-12)
    if out is not None:
        assert out_o.device == OTHER
        torch.testing.assert_close(out_o.cpu(), out, rtol=1e-10, atol=1e-12)
    for (name, p), p_o in zip(cpu.named_parameters(), other.parameters()):
        if p.grad is None:
            assert p_o.grad is None, name
            continue
        assert p_o.grad.device == OTHER, name
        torch.testing.assert_close(p_o.grad.cpu(), p.grad, rtol=1e-9, atol=1e-12, msg=name)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_model_trains_on_another_device_with_dropout(spec, elsewhere):
    """Training mode (dropout masks drawn where the states are): forward and backward stay on the device."""
    _, model = _pair(spec)
    for module in model.modules():
        if isinstance(getattr(module, "dropout", None), float):
            module.dropout = 0.25
    model.to(elsewhere).train()
    tokens, targets = _batch(1)
    loss, _ = _objective(model, tokens.to(elsewhere), targets.to(elsewhere))
    loss.backward()
    assert loss.device == OTHER and np.isfinite(float(loss.detach()))
    assert all(p.grad is None or p.grad.device == OTHER for p in model.parameters())


@pytest.mark.parametrize("spec", ["urn 4", "srn 4", "lstm 4 e3"])
def test_losses_on_another_device(spec, elsewhere):
    cpu, other = _pair(spec)
    cpu.eval(), other.to(elsewhere).eval()
    tokens, targets = _batch(2)
    expected = target_log_probs(cpu, tokens, targets)
    # target_log_probs reads batches where they are (the model's device) and gives numpy
    np.testing.assert_allclose(target_log_probs(other, tokens, targets), expected, rtol=1e-12)
    np.testing.assert_allclose(target_log_probs(other, tokens.to(elsewhere), targets.to(elsewhere)), expected,
                               rtol=1e-12)
    logits = torch.randn(6, V, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 3, 4, 5])
    torch.testing.assert_close(cross_entropy(logits.to(elsewhere), y.to(elsewhere)).cpu(),
                               cross_entropy(logits, y))


# ----------------------------------------------------------------------------------------- fused RNN calls
def _captured_weights(monkeypatch, name: str, model, tokens):
    seen = []
    fused = getattr(torch, name)

    def spy(*args):
        seen.append(list(args[2]))  # torch.lstm / torch.rnn_tanh: (input, hx, params, ...)
        return fused(*args)

    monkeypatch.setattr(torch, name, spy)
    model(tokens)
    assert seen, f"the model did not call torch.{name}"
    return seen[0]


@pytest.mark.parametrize("spec, fused, dropout", [("lstm 4 e3", "lstm", False), ("lstm 4 e3", "lstm", True),
                                                   ("srn 4", "rnn_tanh", False), ("srn 8", "rnn_tanh", False),
                                                   ("srn 4 e3", "rnn_tanh", False)])
def test_fused_rnn_weights_are_one_contiguous_chunk(monkeypatch, spec, fused, dropout):
    """cuDNN's fused RNN (``torch.lstm`` / ``torch.rnn_tanh`` on CUDA) reads its weights as one flat buffer;
    a weight that is not contiguous stops it (``view size is not compatible``: the paper LSTM on a GPU), and
    weights in separate blocks are copied on every call with a warning. ``nn.LSTM`` keeps them as
    consecutive views of one buffer in the order ``w_ih, w_hh, b_ih, b_hh`` (``flatten_parameters``); so
    must our models' derived weights. A property of the call, checked here on the CPU."""
    torch.manual_seed(0)
    model = build_model(spec, V)
    model.train(dropout)
    if dropout:
        model.dropout = 0.25
    weights = _captured_weights(monkeypatch, fused, model, _batch()[0])
    assert len(weights) == 4
    base = weights[0].untyped_storage()
    offset = 0
    for w in weights:
        contiguous, shared = w.is_contiguous(), w.untyped_storage().data_ptr() == base.data_ptr()
        assert contiguous, f"a weight of shape {tuple(w.shape)} is not contiguous"
        assert shared, "the weights are not one buffer"
        at = w.storage_offset()
        assert at == offset, f"weight at {at}, not {offset}: not consecutive as w_ih, w_hh, b_ih, b_hh"
        offset += w.numel()
    size = base.nbytes()
    assert size == offset * weights[0].element_size(), "the buffer holds more than the weights"


def test_paper_lstm_keeps_its_parameters_and_keys():
    """The chunk is made per call: the stored weights (and their state_dict keys) stay as they were."""
    model = build_model("lstm 16 e12", 10)
    assert list(model.state_dict()) == ["embedding.weight", "gates.weight", "gates.bias", "readout.weight",
                                        "readout.bias"]
    assert sum(p.numel() for p in model.parameters()) == 4 * (16 * 28 + 16) + 10 * 12 + 17 * 10


# ------------------------------------------------------------------------------------------------ evaluators
def _twins(spec: str, vocab_size: int, **context):
    """A float64 model on the CPU and its copy on the simulated device (call within the mode)."""
    torch.manual_seed(0)
    cpu = build_model(spec, vocab_size, **context).double().eval()
    return cpu, copy.deepcopy(cpu).to(OTHER)


def _same(a, b):
    """Equal results: numbers to 1e-9 relative, everything else exactly."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-12, nan_ok=True)
    else:
        assert a == b


def _dyck():
    from urnlib.tasks.dyck import VOCAB_SIZE, DyckTask, evaluate_closing, make_data

    data = make_data(DyckTask(n_pairs=4, train_size=8, test_size=24, train_max_depth=3, generator="walk",
                              seed=0))
    return VOCAB_SIZE, lambda m: evaluate_closing(m, data, batch_size=10)


def _cross_serial():
    from urnlib.languages.cross_serial import CrossSerialVocab
    from urnlib.tasks.cross_serial import CrossSerialTask, evaluate_strings, make_data

    task = CrossSerialTask(train_k=4, test_k=6, train_size=8, test_size=16, min_block=1, seed=0)
    data = make_data(task)
    return len(CrossSerialVocab()), lambda m: evaluate_strings(m, data, task)


def _anbn():
    from urnlib.tasks.anbn import AnbnTask, acceptance

    task = AnbnTask(max_train_n=3, copies=1, max_test_n=6, threshold=0.5, trace_n=2)
    return 5, lambda m: acceptance(m, task)


def _anbn_trace():
    from urnlib.chapters.primer.anbn import _trace

    return 5, lambda m: _trace(m, {"kind": "lstm" if type(m).__name__ == "PaperLSTM" else "srn"}, 3)


def _agreement():
    from urnlib.tasks.agreement import SyntheticTask, evaluate_agreement, make_data

    data = make_data(SyntheticTask(train_size=40, test_per_count=3, train_max_attractors=2, max_attractors=3,
                                   seed=0))
    return len(data.vocab), lambda m: evaluate_agreement(m, data, batch_size=5)


def _elman():
    from urnlib.chapters.primer import elman as pe

    stream, data, _ = pe.make_data(pe.ElmanTask(n_sentences=12, hidden=4, row_length=5, seed=0))
    return len(pe.vocabulary()), lambda m: (pe.mean_states(m, stream), pe._next_word_accuracy(m, data))


def _brown_rows():
    from urnlib.tasks.brown_lm import rows

    stream = torch.randint(0, 6, (40,), generator=torch.Generator().manual_seed(3)).tolist()
    return rows(stream, window=6, warmup=2, start_id=6)


def _brown():
    from urnlib.chapters.primer.lm import target_log_probs as primer_scores
    from urnlib.tasks.brown_lm import next_token_probs

    data = _brown_rows()
    return 7, lambda m: (next_token_probs(m, data, batch_size=3), primer_scores(m, data, batch_size=3))


def _tpru_roles():
    from urnlib.chapters.tpru.lm import selected_roles

    data = _brown_rows()
    return 7, lambda m: selected_roles(m, data, window=6, warmup=2, n_tokens=40, batch_size=3)


#: (evaluator, model specs): every chapter's evaluation of a trained model, at most one model kind per path
EVALUATORS = {
    "dyck": (_dyck, ["urn 4", "srn 4", "lstm 4 e3"]),
    "cross_serial": (_cross_serial, ["urn 4", "lstm 4 e3"]),
    "anbn": (_anbn, ["srn 4", "lstm 4 e3"]),
    "anbn_trace": (_anbn_trace, ["srn 4", "lstm 4 e3"]),
    "agreement": (_agreement, ["urn 4", "lstm 4 e3"]),
    "elman": (_elman, ["srn 4"]),
    "brown": (_brown, ["nnlm 3 5 4 direct", "lstm 4 e3"]),
    "tpru_roles": (_tpru_roles, ["tpru 8 N4", "tpru 8 N4 s2"]),
}


@pytest.mark.parametrize("name, spec", [(n, s) for n, (_, specs) in EVALUATORS.items() for s in specs])
def test_evaluator_reads_a_model_on_another_device(name, spec):
    """The chapter's evaluation of a model that trained on a device (its data stay on the CPU) gives what it
    gives for the same model on the CPU."""
    vocab_size, evaluate = EVALUATORS[name][0]()
    context = {"n_out": 2} if name == "agreement" else {}
    with OnElsewhere():
        cpu, other = _twins(spec, vocab_size, **context)
        expected = evaluate(cpu)
        _same(expected, evaluate(other))


def test_matrix_model_properties_on_another_device(elsewhere):
    from urnlib.chapters.matrix_embeddings.experiment import analogy_vectors, probabilistic_properties

    for spec in ("4.2 dense 3", "4.2 diagonal 3"):
        cpu, other = _twins(spec, 5)
        _same(probabilistic_properties(cpu, np.random.default_rng(0)),
              probabilistic_properties(other, np.random.default_rng(0)))
        _same(analogy_vectors(cpu), analogy_vectors(other))


def test_entailment_accuracy_on_another_device(elsewhere):
    from urnlib.models.entailment import EntailmentModel, TorchRNN, entailment_accuracy

    torch.manual_seed(0)
    cpu = EntailmentModel(12, 5, TorchRNN("gru", 5, 6, 1), 6, 7).double().eval()
    other = copy.deepcopy(cpu).to(elsewhere)
    x = torch.tensor([[2, 10, 3, 1, 3, 0, 0], [4, 1, 11, 5, 10, 6, 0], [1, 7, 0, 0, 0, 0, 0]])
    labels = torch.tensor([1, 0, 1])
    expected = entailment_accuracy(cpu, x, labels)
    assert entailment_accuracy(other, x, labels) == expected
    assert entailment_accuracy(other, x.to(elsewhere), labels) == expected


def test_analysis_reads_tensors_on_another_device(elsewhere):
    from urnlib.analysis import effect, signature

    torch.manual_seed(0)
    A = torch.randn(4, 4, dtype=torch.float64)
    Q = torch.linalg.matrix_exp(A - A.T)
    assert effect(Q.to(elsewhere)) == pytest.approx(effect(Q), rel=1e-12)
    np.testing.assert_allclose(signature(Q.to(elsewhere)), signature(Q))
