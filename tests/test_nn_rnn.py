"""Recurrent layers against PyTorch: each module is built in both libraries, PyTorch's float64
weights are loaded into ours, and outputs, input and parameter gradients must agree. Also
parameter names and shapes, initialisation, reprs, dropout between layers and error messages."""

import math

import numpy as np
import pytest
from nn_checks import assert_module_matches
from nn_checks import uniform_bound_check as _uniform_bound_check

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, DTypeError, ShapeError

RNG = np.random.default_rng(7)


def normal(*shape):
    return RNG.normal(size=shape)


def _flat(outs):
    """(output, (h_n, c_n)) -> (output, h_n, c_n): the comparison wants a flat tuple."""
    if not isinstance(outs, tuple):
        return outs
    return tuple(item for out in outs for item in (out if isinstance(out, tuple) else (out,)))


def _call(m, *xs):
    return _flat(m(*xs))


def _call_pair(m, x, h, c):
    return _flat(m(x, (h, c)))


SEQ = normal(5, 2, 3)  # (L, N, input_size)
H2 = normal(2, 4)  # (N, hidden_size)
STATE = normal(4, 2, 4)  # (num_layers * 2 directions, N, hidden_size)

# name -> (a lambda building the module from a library, the inputs, how to call it).
CASES = {
    "RNNCell": (lambda lib: lib.nn.RNNCell(3, 4), [SEQ[0], H2], _call),
    "RNNCell_relu_unbatched": (lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"),
                               [SEQ[0, 0]], _call),
    "RNNCell_no_bias": (lambda lib: lib.nn.RNNCell(3, 4, bias=False), [SEQ[0]], _call),
    "LSTMCell": (lambda lib: lib.nn.LSTMCell(3, 4), [SEQ[0], H2, normal(2, 4)], _call_pair),
    "LSTMCell_unbatched": (lambda lib: lib.nn.LSTMCell(3, 4, bias=False), [SEQ[0, 1]], _call),
    "GRUCell": (lambda lib: lib.nn.GRUCell(3, 4), [SEQ[0], H2], _call),
    "GRUCell_unbatched": (lambda lib: lib.nn.GRUCell(3, 4), [SEQ[0, 0], H2[0]], _call),
    "GRUCell_no_bias": (lambda lib: lib.nn.GRUCell(3, 4, bias=False), [SEQ[0]], _call),
    "RNN_deep_bidirectional": (
        lambda lib: lib.nn.RNN(3, 4, num_layers=2, bidirectional=True), [SEQ, STATE], _call),
    "RNN_relu_batch_first": (
        lambda lib: lib.nn.RNN(3, 4, 1, "relu", batch_first=True), [SEQ.transpose(1, 0, 2)],
        _call),
    "RNN_unbatched": (lambda lib: lib.nn.RNN(3, 4, bias=False), [SEQ[:, 0], H2[:1]], _call),
    "LSTM": (lambda lib: lib.nn.LSTM(3, 4), [SEQ], _call),
    "LSTM_deep_bidirectional_batch_first": (
        lambda lib: lib.nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True),
        [SEQ.transpose(1, 0, 2), STATE, normal(4, 2, 4)], _call_pair),
    "LSTM_unbatched_no_bias": (lambda lib: lib.nn.LSTM(3, 4, num_layers=2, bias=False),
                               [SEQ[:, 1]], _call),
    "LSTM_eval_ignores_dropout": (lambda lib: lib.nn.LSTM(3, 4, 2, dropout=0.5).eval(),
                                  [SEQ], _call),
    "GRU_deep_bidirectional": (
        lambda lib: lib.nn.GRU(3, 4, num_layers=2, bidirectional=True), [SEQ, STATE], _call),
    "GRU_batch_first_no_bias": (lambda lib: lib.nn.GRU(3, 4, bias=False, batch_first=True),
                                [SEQ.transpose(1, 0, 2)], _call),
    "GRU_unbatched_bidirectional": (lambda lib: lib.nn.GRU(3, 4, bidirectional=True),
                                    [SEQ[:, 0], STATE[:2, 0]], _call),
    # Dropout 1 zeroes the first layer's output in both libraries: deterministic, and it
    # shows the last layer's output is not dropped.
    "GRU_train_dropout_between_layers": (lambda lib: lib.nn.GRU(3, 4, 2, dropout=1.0),
                                         [SEQ], _call),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_layer_matches_torch(torch, name):
    make, inputs, call = CASES[name]
    assert_module_matches(torch, make(chainrule), make(torch), inputs, call)


@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_repr_matches_torch(torch, name):
    make, _, _ = CASES[name]
    assert repr(make(chainrule)) == repr(make(torch))


@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_float32_stays_float32(name):
    make, inputs, call = CASES[name]
    tensors = [chainrule.tensor(np.asarray(x, np.float32)) for x in inputs]
    for out in call(make(chainrule), *tensors):
        assert out.dtype == np.float32


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_parameter_names_and_shapes_match_torch(torch, kind):
    options = dict(num_layers=3, bias=False, bidirectional=True)
    ours = getattr(nn, kind)(5, 6, **options)
    theirs = getattr(torch.nn, kind)(5, 6, **options)
    assert [(name, p.shape) for name, p in ours.named_parameters()] == [
        (name, tuple(p.shape)) for name, p in theirs.named_parameters()
    ]
    assert [[p.shape for p in group] for group in ours.all_weights] == [
        [tuple(p.shape) for p in group] for group in theirs.all_weights
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.RNN(10, 100, num_layers=2),
        lambda: nn.LSTM(10, 100),
        lambda: nn.GRUCell(10, 100),
        lambda: nn.RNNCell(10, 100),
    ],
)
def test_init_is_uniform_in_one_over_sqrt_hidden(make):  # fmt: skip
    chainrule.manual_seed(4)
    module = make()
    for param in module.parameters():
        assert param.dtype == np.float32
    values = np.concatenate([p.data.ravel() for p in module.parameters()])
    _uniform_bound_check(values, 1 / math.sqrt(100))


def test_state_dict_from_torch_float32_round_trip(torch):
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = SEQ.astype(np.float32)
    mine, (h, c) = ours(chainrule.tensor(x))
    expected, (h_t, c_t) = theirs(torch.tensor(x))
    for a, b in ((mine, expected), (h, h_t), (c, c_t)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6)


def test_dropout_between_layers_in_training_is_seeded():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5).double()
    x = chainrule.tensor(SEQ)
    chainrule.manual_seed(1)
    first, _ = lstm(x)
    chainrule.manual_seed(1)
    second, _ = lstm(x)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    evaluated, _ = lstm.eval()(x)
    assert not np.allclose(first.detach().numpy(), evaluated.detach().numpy())


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match=r"GRU: dropout=0.2 applies between layers only"):
        nn.GRU(3, 4, dropout=0.2)


def test_cell_matches_one_step_of_the_layer():
    chainrule.manual_seed(0)
    gru, cell = nn.GRU(3, 4), nn.GRUCell(3, 4)
    cell.load_state_dict({k.removesuffix("_l0"): v for k, v in gru.state_dict().items()})
    x = chainrule.tensor(SEQ[:1], dtype=chainrule.float32)
    h0 = chainrule.tensor(H2[None], dtype=chainrule.float32)
    output, h_n = gru(x, h0)
    np.testing.assert_allclose(cell(x[0], h0[0]).detach().numpy(), h_n[0].detach().numpy())


def test_recurrent_errors():
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = chainrule.zeros(5, 2, 3)
    with pytest.raises(DomainError, match=r"LSTM: proj_size=2 is not supported"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(DTypeError, match=r"LSTM: expected a Tensor input, got tuple"):
        lstm((x, [5, 5]))
    with pytest.raises(ShapeError, match=r"LSTM: expected a 2-D \(unbatched\) or 3-D \(batched\)"
                                         r" input, got shape \(5,\)"):  # fmt: skip
        lstm(chainrule.zeros(5))
    with pytest.raises(ShapeError, match=r"input has shape \(5, 2, 2\); its last dim must be "
                                         r"input_size = 3"):  # fmt: skip
        lstm(chainrule.zeros(5, 2, 2))
    with pytest.raises(ShapeError, match=r"LSTM: expected h_0 of shape \(2, 2, 4\), got "
                                         r"\(1, 2, 4\)"):  # fmt: skip
        lstm(x, (chainrule.zeros(1, 2, 4), chainrule.zeros(2, 2, 4)))
    with pytest.raises(DTypeError, match=r"LSTM: hx must be a pair \(h_0, c_0\), got Tensor"):
        lstm(x, chainrule.zeros(2, 2, 4))
    with pytest.raises(DTypeError, match=r"GRU: input dtype float64 does not match the "
                                         r"weights' dtype float32"):  # fmt: skip
        nn.GRU(3, 4)(chainrule.zeros(5, 3, dtype=chainrule.float64))
    with pytest.raises(ShapeError, match=r"RNN: the sequence is empty"):
        nn.RNN(3, 4)(chainrule.zeros(0, 2, 3))
    with pytest.raises(DomainError, match=r"RNN: unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(DomainError, match=r"RNNCell: unknown nonlinearity 'gelu'"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(DomainError, match=r"GRU: hidden_size must be at least 1, got 0"):
        nn.GRU(3, 0)
    with pytest.raises(DomainError, match=r"RNN: dropout must be a probability"):
        nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(ShapeError, match=r"GRUCell: expected a 1-D \(unbatched\) or 2-D"):
        nn.GRUCell(3, 4)(x)
    with pytest.raises(ShapeError, match=r"GRUCell: expected hx of shape \(2, 4\), got \(4,\)"):
        nn.GRUCell(3, 4)(x[0], chainrule.zeros(4))
    with pytest.raises(DTypeError, match=r"LSTMCell: hx must be a pair"):
        nn.LSTMCell(3, 4)(x[0], chainrule.zeros(2, 4))
