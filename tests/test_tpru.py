"""Tests for urnlib.models.tpru and urnlib.models.tpru_analysis: the TPRU of paper 002 (eqs. 2-6, sec. 4
Modifications I-III, Table 1, appendices A and E). The equations are written out here from the module's
named matrices, not taken from its forward."""

import pytest
import torch
import torch.nn.functional as F

from urnlib.models.tpru import (
    VARIANTS,
    TPRU,
    RecurrentStack,
    StackLM,
    TPRULanguageModel,
    bias_count,
    relu_square_normalise,
    table1_parameter_count,
    table1_time_complexity,
    weight_matrix_count,
)
from urnlib.models.tpru_analysis import (
    autograd_jacobians,
    candidate_jacobian,
    filler_jacobian,
    normalisation_jacobian,
    state_jacobian,
    step_terms,
)
from urnlib.params import ParameterError
from urnlib.train import TokenData, TrainConfig, fit

torch.set_num_threads(1)
f64 = torch.float64


def _by_hand(cell, x):
    """Eqs. 2-6 (with appendix E slices) for x (B, T, d'), one example and one step at a time."""
    s, d = cell.slices, cell.d
    ds = d // s
    U, R = cell.W_u @ cell.E, cell.W_r @ cell.E
    states, fillers = [], []
    for i in range(x.shape[0]):
        b = torch.zeros(d, dtype=x.dtype)
        bs, fs = [], []
        for t in range(x.shape[1]):
            vb, vx = cell.V_b @ b, cell.V_x @ x[i, t]
            b_tilde, f_all = [], []
            for k in range(s):
                rows = slice(k * ds, (k + 1) * ds)
                f_b, f_x = U[rows].T @ vb[rows], U[rows].T @ vx[rows]  # eq. 3
                ft = torch.clamp(f_b + cell.b_b, min=0) + torch.clamp(f_x + cell.b_x, min=0)  # eq. 5
                f = torch.exp(ft) / torch.exp(ft).sum() if cell.softmax else ft**2 / (ft**2).sum()  # eq. 4
                b_tilde.append(R[rows] @ f)  # eq. 6
                f_all.append(f)
            b_tilde = torch.cat(b_tilde)
            g = torch.sigmoid(cell.W_b @ b + cell.W_x @ x[i, t] + cell.gate_bias)  # eq. 2
            b = g * b_tilde + (1 - g) * b
            bs.append(b)
            fs.append(torch.stack(f_all) if s > 1 else f_all[0])
        states.append(torch.stack(bs))
        fillers.append(torch.stack(fs))
    return torch.stack(states), torch.stack(fillers)


def _random_cell(variant="tpru", slices=1, d_in=3, d=8, N=5, seed=0):
    torch.manual_seed(seed)
    cell = TPRU(d_in, d, N, variant=variant, slices=slices, seed=seed).double()
    with torch.no_grad():  # nonzero biases so every term is exercised
        cell.gate_bias.uniform_(-0.5, 0.5)
        cell.b_b.fill_(0.3)
        cell.b_x.fill_(-0.2)
    return cell


# --------------------------------------------------------------------------- #
# eqs. 2-6 and the normalisation (eq. 4)
# --------------------------------------------------------------------------- #
def test_normalisation_sums_to_one_and_is_sparse():
    f_tilde = torch.tensor([[0.0, 2.0, 0.0, 1.0], [0.0] * 4, [3.0, 0.0, 0.0, 0.0]], requires_grad=True)
    f = relu_square_normalise(f_tilde)
    assert torch.allclose(f[0], torch.tensor([0.0, 0.8, 0.0, 0.2]))
    assert torch.all(f[0][f_tilde[0] == 0] == 0)  # exactly 0 where f~ is 0
    assert torch.equal(f[1], torch.zeros(4))  # all f~ = 0: f = 0, not NaN
    assert torch.equal(f[2], torch.tensor([1.0, 0.0, 0.0, 0.0]))
    assert torch.allclose(f[[0, 2]].sum(-1), torch.ones(2))
    (f * torch.randn(3, 4)).sum().backward()
    assert torch.isfinite(f_tilde.grad).all() and torch.equal(f_tilde.grad[1], torch.zeros(4))


@pytest.mark.parametrize("softmax", [False, True])
def test_normalisation_jacobian_is_J_of_f_times_N(softmax):
    """d f / d f~ = J(f) N with J built from the normalised f (softmax: N = I), zeros of f~ included."""
    torch.manual_seed(0)
    f_tilde = torch.rand(6, dtype=f64) + 0.1
    f_tilde[[1, 4]] = 0.0
    norm = (lambda v: torch.softmax(v, -1)) if softmax else relu_square_normalise
    auto = torch.autograd.functional.jacobian(norm, f_tilde)
    assert torch.allclose(normalisation_jacobian(f_tilde, softmax), auto, atol=1e-14, rtol=0)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("slices", [1, 2])
def test_forward_follows_the_equations(variant, slices):
    cell = _random_cell(variant, slices)
    x = torch.randn(2, 4, 3, dtype=f64)
    with torch.no_grad():
        states, fillers = cell(x, return_fillers=True)
        want_b, want_f = _by_hand(cell, x)
    assert states.shape == (2, 4, 8)
    assert fillers.shape == ((2, 4, 5) if slices == 1 else (2, 4, slices, 5))
    assert torch.allclose(states, want_b, atol=1e-12)
    assert torch.allclose(fillers, want_f, atol=1e-12)
    assert torch.allclose(fillers.sum(-1), torch.ones_like(fillers.sum(-1)))
    assert torch.allclose(cell.fillers(x), fillers)


def test_relu_squared_fillers_are_sparse():
    torch.manual_seed(0)
    cell = TPRU(4, 16, 32, seed=0)
    with torch.no_grad():
        cell.b_b.fill_(-0.5)  # push part of f~ below 0
        cell.b_x.fill_(-0.5)
        f = cell.fillers(torch.randn(3, 6, 4))
    assert (f == 0).any()
    nonempty = f.sum(-1) > 0
    assert torch.allclose(f.sum(-1)[nonempty], torch.ones(int(nonempty.sum())))


def test_all_zero_f_tilde_gives_zero_candidate_and_no_nan():
    cell = TPRU(3, 6, 4, seed=0)
    with torch.no_grad():
        cell.b_b.fill_(-1e3)
        cell.b_x.fill_(-1e3)
    x = torch.randn(2, 5, 3)
    states, f = cell(x, return_fillers=True)
    assert torch.equal(f, torch.zeros_like(f))
    assert torch.equal(states, torch.zeros_like(states))  # b_0 = 0 and b~_t = 0: b_t = 0
    states.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in cell.parameters() if p.grad is not None)


def test_initial_state_and_step():
    cell = _random_cell()
    x, b0 = torch.randn(2, 3, 3, dtype=f64), torch.randn(2, 8, dtype=f64)
    with torch.no_grad():
        states = cell(x, b0=b0)
        out = cell.step(x[:, 0], b0)
    assert torch.allclose(states[:, 0], out.b)
    assert torch.allclose(out.b, out.g * out.b_tilde + (1 - out.g) * b0)


# --------------------------------------------------------------------------- #
# variants (sec. 4 Modifications I-III), basis E, training
# --------------------------------------------------------------------------- #
def test_variant_structure():
    cells = {v: TPRU(3, 6, 4, variant=v, seed=0) for v in VARIANTS}
    for v in ("mod1", "mod2"):
        assert torch.equal(cells[v].W_u, cells[v].W_r)  # W_r = W_u
    for v in ("tpru", "mod3"):
        assert not torch.equal(cells[v].W_u, cells[v].W_r)
    assert torch.equal(cells["mod1"].V_b, torch.eye(6))  # V_b = I
    assert not cells["mod1"].V_b.requires_grad
    assert [cells[v].softmax for v in VARIANTS] == [False, True, True, True]
    ours = cells["tpru"]
    U, R = ours.role_matrices()
    assert torch.allclose(U, ours.W_u @ ours.E) and torch.allclose(R, ours.W_r @ ours.E)


def test_basis_is_a_fixed_seeded_buffer():
    a, b, c = TPRU(3, 6, 4, seed=7), TPRU(3, 6, 4, seed=7), TPRU(3, 6, 4, seed=8)
    assert "E" in dict(a.named_buffers()) and "E" in a.state_dict()
    assert all(p is not a.E for p in a.parameters())
    assert a.E.shape == (6, 4) and not a.E.requires_grad
    assert torch.equal(a.E, b.E) and not torch.equal(a.E, c.E)
    g = torch.Generator().manual_seed(7)
    assert torch.equal(TPRU(3, 6, 4, generator=g).E, a.E)
    assert a.double().E.dtype == f64  # moves with the module
    stack = RecurrentStack("tpru", 3, 6, 2, n_roles=4, seed=7)
    assert torch.equal(stack.cells[0].E, a.E) and not torch.equal(stack.cells[1].E, a.E)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("slices", [1, 2])
def test_variants_train_without_nan(variant, slices):
    """A few Adam steps on a toy next-symbol task (the sequence 0 1 2 3 0 1 2 3 ...): finite, loss falls,
    and the basis E does not move."""
    torch.manual_seed(0)
    model = TPRULanguageModel(4, 8, 8, 6, variant=variant, slices=slices, seed=0)
    E = model.stack.cells[0].E.clone()
    tokens = (torch.arange(9)[None] + torch.arange(8)[:, None]) % 4  # (8, 9)
    x, y = tokens[:, :-1], tokens[:, 1:]
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(25):
        loss = F.cross_entropy(model(x).reshape(-1, 4), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(torch.isfinite(torch.tensor(losses)))
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert losses[-1] < 0.7 * losses[0]
    assert torch.equal(model.stack.cells[0].E, E)


# --------------------------------------------------------------------------- #
# Table 1: parameter counts and time complexity
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("d,d_in", [(8, 3), (16, 16), (6, 20)])
def test_parameter_counts_match_table1(d, d_in):
    assert table1_parameter_count("tpru", d, d_in) == 4 * d * d + 2 * d * d_in
    assert table1_parameter_count("lstm", d, d_in) == 4 * d * d + 4 * d * d_in
    assert table1_parameter_count("gru", d, d_in) == 3 * d * d + 3 * d * d_in
    count = table1_parameter_count
    for kind in ("lstm", "gru"):
        one = RecurrentStack(kind, d_in, d)
        assert weight_matrix_count(one) == count(kind, d, d_in)
        assert sum(p.numel() for p in one.parameters()) == count(kind, d, d_in) + bias_count(kind, d)
        two = RecurrentStack(kind, d_in, d, 2)
        assert weight_matrix_count(two) == count(kind, d, d_in) + count(kind, d, d)
    for variant in VARIANTS:
        for slices in (1, 2):
            cell = TPRU(d_in, d, 5, variant=variant, slices=slices)
            want = table1_parameter_count(variant, d, d_in)
            assert weight_matrix_count(cell) == want  # E (a buffer) and the biases are not counted
            assert sum(p.numel() for p in cell.parameters()) == want + bias_count(variant, d)
            assert weight_matrix_count(TPRU(d_in, d, 50, variant=variant, slices=slices)) == want  # any N
    two = RecurrentStack("tpru", d_in, d, 2, n_roles=5)
    assert weight_matrix_count(two) == count("tpru", d, d_in) + count("tpru", d, d)


def test_time_complexity_table1():
    assert table1_time_complexity("tpru", 64, 512) == 2 * 512 * 64 + 6 * 64**2
    assert table1_time_complexity("lstm", 64) == 8 * 64**2
    assert table1_time_complexity("gru", 64) == 6 * 64**2
    # TPRU lies between GRU and LSTM when N < d (sec. 4)
    gru, lstm = table1_time_complexity("gru", 64), table1_time_complexity("lstm", 64)
    assert gru < table1_time_complexity("tpru", 64, 32) < lstm


# --------------------------------------------------------------------------- #
# gradient analysis: appendix A and eqs. 7-8
# --------------------------------------------------------------------------- #
def _assert_psd_bounded(J, f):
    assert torch.allclose(J, J.T, atol=1e-15)
    eig = torch.linalg.eigvalsh(J)
    assert eig.min() >= -1e-12
    assert eig.max() <= f.max() + 1e-12


def test_J_is_psd_with_eigenvalues_at_most_max_f():
    torch.manual_seed(0)
    for variant in ("tpru", "mod3"):
        for seed in range(5):
            cell = _random_cell(variant, seed=seed, N=7)
            terms = step_terms(cell, torch.randn(3, dtype=f64), torch.randn(8, dtype=f64))
            _assert_psd_bounded(terms.J, terms.f)
    for f in (torch.distributions.Dirichlet(torch.full((9,), 0.3, dtype=f64)).sample((20,))):
        _assert_psd_bounded(filler_jacobian(f), f)
    one_hot = torch.eye(4, dtype=f64)[2]
    assert torch.equal(filler_jacobian(one_hot), torch.zeros(4, 4, dtype=f64))


def test_J_printed_from_f_b_need_not_be_psd():
    """Appendix A's proof needs a distribution; f_b (eq. 3) is not one."""
    f_b = torch.tensor([-1.0, 2.0], dtype=f64)
    assert torch.linalg.eigvalsh(filler_jacobian(f_b)).min() < 0
    cell = _random_cell(seed=3)
    terms = step_terms(cell, torch.randn(3, dtype=f64), torch.randn(8, dtype=f64))
    assert (terms.f_b < 0).any() and not torch.allclose(terms.f_b.sum(), torch.tensor(1.0, dtype=f64))


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("slices", [1, 2, 4])
def test_eq7_eq8_correct_forms_match_autograd(variant, slices):
    for seed in range(3):
        cell = _random_cell(variant, slices, seed=seed)
        x, b = torch.randn(3, dtype=f64), torch.randn(8, dtype=f64)
        auto_tilde, auto_b = autograd_jacobians(cell, x, b)
        assert torch.allclose(candidate_jacobian(cell, x, b), auto_tilde, atol=1e-12, rtol=0)
        assert torch.allclose(state_jacobian(cell, x, b), auto_b, atol=1e-12, rtol=0)


def test_eq8_by_hand_and_where_the_printed_form_differs():
    cell = _random_cell(seed=1)
    x, b = torch.randn(3, dtype=f64), torch.randn(8, dtype=f64)
    t = step_terms(cell, x, b)
    R, U = cell.W_r @ cell.E, cell.W_u @ cell.E
    auto_tilde, auto_b = autograd_jacobians(cell, x, b)
    J_f = torch.diag(t.f) - torch.outer(t.f, t.f)  # (J)_mn = f_m (delta_mn - f_n), f = normalised fillers
    N = torch.diag(torch.where(t.f_tilde > 0, 2 / t.f_tilde, 0.0))
    S = torch.diag((t.f_b + cell.b_b > 0).double())
    assert torch.allclose(R @ J_f @ N @ S @ U.T @ cell.V_b, auto_tilde, atol=1e-12)
    # as printed: J from f_b (eq. 3) and S without b_b; not the derivative
    J_fb = torch.diag(t.f_b) - torch.outer(t.f_b, t.f_b)
    printed = R @ J_fb @ N @ torch.diag((t.f_b > 0).double()) @ U.T @ cell.V_b
    assert torch.allclose(candidate_jacobian(cell, x, b, printed=True), printed, atol=1e-12)
    assert not torch.allclose(printed, auto_tilde, atol=1e-3)
    assert not torch.allclose(state_jacobian(cell, x, b, printed=True), auto_b, atol=1e-3)
    # eq. 7: Lambda_1 = diag((b~ - b_{t-1}) g (1 - g)); the printed diag(b~ g (1 - g)) misses -b_{t-1}
    L2db = t.Lambda2 @ auto_tilde + t.Lambda3
    assert torch.allclose(t.Lambda1 @ cell.W_b + L2db, auto_b, atol=1e-12)
    assert not torch.allclose(t.Lambda1_printed @ cell.W_b + L2db, auto_b, atol=1e-3)
    zero = torch.zeros(8, dtype=f64)  # at b_{t-1} = 0 the printed Lambda_1 is right
    t0 = step_terms(cell, x, zero)
    auto0_tilde, auto0_b = autograd_jacobians(cell, x, zero)
    printed = t0.Lambda1_printed @ cell.W_b + t0.Lambda2 @ auto0_tilde + t0.Lambda3
    assert torch.allclose(printed, auto0_b, atol=1e-12)


# --------------------------------------------------------------------------- #
# appendix E slices, stacks, language model
# --------------------------------------------------------------------------- #
def test_multi_slice_shapes_and_parameters():
    x = torch.randn(2, 3, 5)
    for s in (1, 2, 4, 8):
        cell = TPRU(5, 8, 6, slices=s, seed=0)
        states, f = cell(x, return_fillers=True)
        assert states.shape == (2, 3, 8)
        assert f.shape == ((2, 3, 6) if s == 1 else (2, 3, s, 6))
        assert torch.allclose(f.sum(-1), torch.ones(f.shape[:-1]))  # one distribution per slice
        assert sum(p.numel() for p in cell.parameters()) == sum(p.numel() for p in TPRU(5, 8, 6).parameters())


@pytest.mark.parametrize("kind", ["tpru", "gru", "lstm"])
def test_two_layer_stack(kind):
    torch.manual_seed(0)
    stack = RecurrentStack(kind, 5, 8, 2, n_roles=6, slices=2, seed=0).eval()
    x = torch.randn(3, 4, 5)
    out = stack(x)
    assert out.shape == (3, 4, 8) and torch.isfinite(out).all()
    if kind == "tpru":
        assert stack.cells[1].input_size == 8
        with torch.no_grad():
            assert torch.allclose(out, stack.cells[1](stack.cells[0](x)))
            states, f = stack(x, return_fillers=True)
            assert torch.allclose(f, stack.cells[1].fillers(stack.cells[0](x)))
        assert f.shape == (3, 4, 2, 6)
    else:
        assert isinstance(stack.rnn, getattr(torch.nn, kind.upper())) and stack.rnn.num_layers == 2


@pytest.mark.parametrize("kind", ["tpru", "gru", "lstm"])
def test_language_model_outputs(kind):
    torch.manual_seed(0)
    lm = StackLM(kind, 11, 6, 8, 2, n_roles=5, dropout=0.1, seed=0).eval()
    tokens = torch.randint(0, 11, (3, 7))
    logits = lm(tokens)
    assert logits.shape == (3, 7, 11)
    assert torch.allclose(logits.log_softmax(-1).exp().sum(-1), torch.ones(3, 7), atol=1e-6)
    if kind == "tpru":
        f = lm.fillers(tokens)
        assert f.shape == (3, 7, 5) and f.argmax(-1).shape == (3, 7)
    else:
        with pytest.raises(ParameterError, match="tpru"):
            lm.fillers(tokens)


def test_language_model_tied_and_fit():
    torch.manual_seed(0)
    lm = TPRULanguageModel(5, 8, 8, 4, tie_weights=True, seed=0)
    assert lm.readout.weight is lm.embedding.weight
    tokens = (torch.arange(7)[None] + torch.arange(16)[:, None]) % 5
    targets = tokens[:, 1:].clone()
    targets[:, -1] = -100  # ignored position
    data = TokenData(tokens[:, :-1], targets)
    history, _ = fit(lm, data, None, TrainConfig(epochs=2, batch_size=8, lr=0.01), desc="tpru-test")
    assert len(history.rows) == 2 and all(torch.isfinite(torch.tensor(history.column("train_loss"))))


# --------------------------------------------------------------------------- #
# bad arguments
# --------------------------------------------------------------------------- #
def test_bad_arguments_raise_helpful_errors():
    with pytest.raises(ParameterError, match="n_roles=0 must be >= 1"):
        TPRU(3, 8, 0)
    with pytest.raises(ParameterError, match=r"variant='mod4'.*one of \['tpru', 'mod1', 'mod2', 'mod3'\]"):
        TPRU(3, 8, 4, variant="mod4")
    with pytest.raises(ParameterError, match=r"slices=3 must divide d=8.*\[1, 2, 4, 8\]"):
        TPRU(3, 8, 4, slices=3)
    with pytest.raises(ParameterError, match="either seed or generator"):
        TPRU(3, 8, 4, seed=1, generator=torch.Generator())
    with pytest.raises(ParameterError, match="input_size=3"):
        TPRU(3, 8, 4)(torch.randn(2, 5, 4))
    with pytest.raises(ParameterError, match="pass n_roles=N"):
        RecurrentStack("tpru", 3, 8)
    with pytest.raises(ParameterError, match="kind='rnn'"):
        RecurrentStack("rnn", 3, 8)
    with pytest.raises(ParameterError, match="layers=0"):
        RecurrentStack("gru", 3, 8, 0)
    with pytest.raises(ParameterError, match="dropout"):
        RecurrentStack("gru", 3, 8, dropout=1.0)
    with pytest.raises(ParameterError, match="embedding_size == d"):
        StackLM("lstm", 10, 6, 8, tie_weights=True)
    with pytest.raises(ParameterError, match="n_out=2.*tie_weights=False"):
        StackLM("tpru", 10, 8, 8, n_roles=4, tie_weights=True, n_out=2)
    with pytest.raises(ParameterError, match="n_out"):
        StackLM("gru", 10, 8, 8, n_out=0)
    with pytest.raises(ParameterError, match="pass n_roles=N"):
        table1_time_complexity("tpru", 8)
    with pytest.raises(ParameterError, match="choose one of"):
        table1_parameter_count("rnn", 8, 8)
    with pytest.raises(ParameterError, match="one example"):
        step_terms(TPRU(3, 8, 4), torch.randn(2, 3), torch.randn(2, 8))


def test_stack_lm_with_n_out_is_a_classifier_over_each_position():
    """``n_out`` replaces the vocabulary readout by one of n_out classes (the zoo's agreement task); the
    default keeps the language model (same parameters, same first draws of the generator)."""
    torch.manual_seed(0)
    lm = StackLM("tpru", 11, 8, 8, n_roles=4, seed=0)
    torch.manual_seed(0)
    same = StackLM("tpru", 11, 8, 8, n_roles=4, seed=0, n_out=None)
    assert all(torch.equal(a, b) for a, b in zip(lm.state_dict().values(), same.state_dict().values()))
    classifier = StackLM("tpru", 11, 8, 8, n_roles=4, seed=0, n_out=2)
    tokens = torch.randint(0, 11, (3, 5))
    assert lm(tokens).shape == (3, 5, 11) and classifier(tokens).shape == (3, 5, 2)
    assert classifier.readout.weight.shape == (2, 8) and torch.equal(classifier.readout.bias, torch.zeros(2))


def test_the_scalar_biases_start_at_bias_init_and_default_to_one():
    """Eq. 5's b_b, b_x start at 1 (the original implementation) unless ``bias_init`` says otherwise (the
    initialisation ablation); the stored runs' specs have no ``bias_init``, so they build as before."""
    from urnlib.chapters.tpru.entailment import Architecture, build_classifier

    assert (TPRU(5, 8, 4).b_b.item(), TPRU(5, 8, 4).b_x.item()) == (1.0, 1.0)
    cell = TPRU(5, 8, 4, bias_init=0.1)
    assert cell.b_b.item() == pytest.approx(0.1) and cell.b_x.item() == pytest.approx(0.1)
    stack = RecurrentStack("tpru", 5, 8, 2, n_roles=4, bias_init=0.0)
    assert all(c.b_b.item() == 0.0 and c.b_x.item() == 0.0 for c in stack.cells)
    with pytest.raises(ParameterError, match="bias_init"):
        TPRU(5, 8, 4, bias_init="one")
    arch = Architecture(embedding_size=6, layers=1, hidden=8, dropout=0.0, permute=False)
    spec = {"kind": "tpru", "d": 8, "n_roles": 4, "slices": 1}
    stored = build_classifier(spec, arch, seed=3).state_dict()
    default = build_classifier({**spec, "bias_init": 1.0}, arch, seed=3).state_dict()
    assert stored.keys() == default.keys() and all(torch.equal(stored[k], default[k]) for k in stored)
    ablated = build_classifier({**spec, "bias_init": 0.0}, arch, seed=3).state_dict()
    assert torch.equal(ablated["encoder.cells.0.E"], stored["encoder.cells.0.E"])  # only the biases differ
    assert [k for k in stored if not torch.equal(stored[k], ablated[k])] == [
        "encoder.cells.0.b_b", "encoder.cells.0.b_x"]


@pytest.mark.parametrize("slices", [1, 4])
def test_a_score_scale_a_is_the_bias_b_over_a_at_every_step(slices):
    """Eq. 4 is invariant to a positive factor on f~, so scores times ``a`` with biases ``b`` give the fillers
    (and states) of scores times 1 with biases ``b / a``: the two ablations are one at initialisation."""
    torch.manual_seed(0)
    scaled = TPRU(5, 8, 4, slices=slices, seed=1, bias_init=1.0, score_scale=2.5)
    plain = TPRU(5, 8, 4, slices=slices, seed=1, bias_init=1.0 / 2.5)
    plain.load_state_dict({**scaled.state_dict(), "b_b": plain.b_b.data, "b_x": plain.b_x.data})
    x = torch.randn(3, 7, 5)
    states, f = scaled(x, return_fillers=True)
    states_plain, f_plain = plain(x, return_fillers=True)
    torch.testing.assert_close(f, f_plain)
    torch.testing.assert_close(states, states_plain)
    # and with zero biases the factor changes nothing
    zero = TPRU(5, 8, 4, slices=slices, seed=1, bias_init=0.0, score_scale=3.0)
    zero_plain = TPRU(5, 8, 4, slices=slices, seed=1, bias_init=0.0)
    zero_plain.load_state_dict(zero.state_dict())
    torch.testing.assert_close(zero(x), zero_plain(x))
    assert "score_scale=2.5" in repr(scaled) and "score_scale" not in repr(plain)


def test_the_score_scale_goes_through_the_scan_and_its_gradients():
    """The factor is folded into U before the scan, so the hand-written backward and the step-by-step
    definition agree on it (values and every parameter's gradient)."""
    torch.manual_seed(0)
    cell = TPRU(5, 8, 4, slices=2, seed=0, score_scale=1.7).double()
    x = torch.randn(2, 6, 5, dtype=torch.float64)
    grads = []
    for scan in (True, False):
        cell.scan = scan
        cell.zero_grad()
        out = cell(x)
        out.square().sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in cell.parameters()]))
    torch.testing.assert_close(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1], grads[1][1]):
        torch.testing.assert_close(a, b)
    with pytest.raises(ParameterError, match="score_scale"):
        TPRU(5, 8, 4, score_scale=0.0)
    stack = RecurrentStack("tpru", 5, 8, 2, n_roles=4, score_scale=2.0)
    assert [c.score_scale for c in stack.cells] == [2.0, 2.0]
