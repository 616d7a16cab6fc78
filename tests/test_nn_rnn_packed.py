"""Sequences of different lengths (chainrule.nn.utils.rnn) against PyTorch: padding and packing
round trips with their gradients, the errors PyTorch raises for bad lengths, and RNN, LSTM and
GRU run on a PackedSequence (outputs, each sequence's final state, gradients)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import rnn as R


def _pair(rng, *shape):
    """The same float64 values as a chainrule leaf and a PyTorch leaf."""
    import torch

    values = rng.standard_normal(shape)
    return cr.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)


def _close(ours, theirs, atol=1e-10):
    theirs = theirs.detach() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(np.asarray(ours.detach()), np.asarray(theirs), atol=atol)


def test_the_names_torch_nn_utils_rnn_has(torch):
    assert set(R.__all__) == set(torch.nn.utils.rnn.__all__)
    assert nn.utils.rnn is R


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[4, 2, 2, 1], [1, 4, 2, 3]])
def test_pack_and_pad_back_as_pytorch_with_gradients(torch, batch_first, lengths):
    rng = np.random.default_rng(0)
    shape = (4, 5, 3) if batch_first else (5, 4, 3)  # one step more than the longest
    ours_x, torch_x = _pair(rng, *shape)
    ours = R.pack_padded_sequence(ours_x, lengths, batch_first, enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(
        torch_x, torch.tensor(lengths), batch_first, enforce_sorted=False
    )
    _close(ours.data, theirs.data)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        assert getattr(ours, field).tolist() == getattr(theirs, field).tolist(), field
    padded, ours_lengths = R.pad_packed_sequence(ours, batch_first, -2.0, total_length=6)
    torch_padded, torch_lengths = torch.nn.utils.rnn.pad_packed_sequence(
        theirs, batch_first, -2.0, total_length=6
    )
    _close(padded, torch_padded)
    assert ours_lengths.dtype == cr.int64 and ours_lengths.tolist() == torch_lengths.tolist()
    weights = rng.standard_normal(padded.shape)
    (padded * cr.tensor(weights)).sum().backward()
    (torch_padded * torch.tensor(weights)).sum().backward()
    _close(ours_x.grad, torch_x.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_as_pytorch_with_gradients(torch, batch_first, padding_side):
    rng = np.random.default_rng(1)
    pairs = [_pair(rng, n, 2) for n in (2, 0, 3)]
    ours = R.pad_sequence([p[0] for p in pairs], batch_first, 1.5, padding_side)
    theirs = torch.nn.utils.rnn.pad_sequence([p[1] for p in pairs], batch_first, 1.5, padding_side)
    _close(ours, theirs)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    for ours_seq, torch_seq in pairs:
        _close(ours_seq.grad, torch_seq.grad)
    int_pad = R.pad_sequence([cr.tensor([1, 2]), cr.tensor([3])], padding_value=-1)
    assert int_pad.dtype == cr.int64 and int_pad.tolist() == [[1, 3], [2, -1]]


def test_pack_sequence_unpack_and_unpad_round_trip(torch):
    rng = np.random.default_rng(2)
    sequences = [cr.tensor(rng.standard_normal((n, 2))) for n in (2, 4, 1)]
    packed = R.pack_sequence(sequences, enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_sequence(
        [torch.tensor(s.numpy()) for s in sequences], enforce_sorted=False
    )
    _close(packed.data, theirs.data)
    for back, seq in zip(R.unpack_sequence(packed), sequences, strict=True):
        np.testing.assert_array_equal(back.numpy(), seq.numpy())
    padded = R.pad_sequence(sequences)
    for back, seq in zip(R.unpad_sequence(padded, cr.tensor([2, 4, 1])), sequences, strict=True):
        np.testing.assert_array_equal(back.numpy(), seq.numpy())
    assert padded.shape == (4, 3, 2)  # unpad_sequence leaves its input as it was
    assert R.invert_permutation(cr.tensor([2, 0, 3, 1])).tolist() == [1, 3, 0, 2]
    assert R.invert_permutation(None) is None


def test_packed_sequence_fields_and_conversions():
    packed = R.PackedSequence(cr.ones(3, 2), cr.tensor([2, 1]), cr.tensor([1, 0]))
    assert packed.unsorted_indices.tolist() == [1, 0]
    assert packed.to(cr.float32) is packed and not packed.is_cuda and not packed.is_pinned()
    double = packed.double()
    assert isinstance(double, R.PackedSequence) and double.data.dtype == cr.float64
    assert double.batch_sizes is packed.batch_sizes and packed.long().data.dtype == cr.int64
    assert R.PackedSequence((cr.ones(3), cr.tensor([2, 1]))).batch_sizes.tolist() == [2, 1]
    data, batch_sizes, sorted_indices, unsorted_indices = packed  # a 4-tuple, as PyTorch's
    assert data is packed.data


@pytest.mark.parametrize(
    "call",
    [
        lambda R, x: R.pack_padded_sequence(x, [2, 3, 1]),  # not sorted
        lambda R, x: R.pack_padded_sequence(x, [3, 2, 0]),  # a zero length
        lambda R, x: R.pack_padded_sequence(x, [3, 0, 2], enforce_sorted=False),
        lambda R, x: R.pack_padded_sequence(x, [3, 2]),  # one length short
        lambda R, x: R.pad_sequence([]),
        lambda R, x: R.pad_sequence(5),
        lambda R, x: R.pad_sequence([x[0], x[:, :, 0]]),  # trailing dims differ
        lambda R, x: R.pad_sequence([x[0]], padding_side="up"),
    ],
)
def test_bad_input_raises_what_pytorch_raises(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch.nn.utils.rnn, torch.zeros(4, 3, 2))
    with pytest.raises(type(theirs.value)):
        call(R, cr.zeros(4, 3, 2))


def test_pad_packed_sequence_refuses_a_short_total_length(torch):
    x = cr.zeros(4, 2, 1)
    with pytest.raises(ValueError, match="total_length=2"):
        R.pad_packed_sequence(R.pack_padded_sequence(x, [3, 1]), total_length=2)
    with pytest.raises(RuntimeError, match="exceeds"):  # PyTorch reads past the end here
        R.pack_padded_sequence(x, [5, 1])


def _modules(torch, mode, **kwargs):
    """A PyTorch module and chainrule's, both float64 with the same weights."""
    theirs = getattr(torch.nn, mode)(3, 4, **kwargs).double()
    ours = getattr(nn, mode)(3, 4, **kwargs).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("given_state", [False, True])
def test_rnns_on_packed_sequences_match_pytorch(torch, mode, enforce_sorted, given_state):
    rng = np.random.default_rng(3)
    ours, theirs = _modules(torch, mode, num_layers=2, bidirectional=True, batch_first=True)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    ours_x, torch_x = _pair(rng, 4, 5, 3)  # batch_first plays no part in packed input
    ours_in = R.pack_padded_sequence(ours_x, lengths, True, enforce_sorted)
    torch_in = torch.nn.utils.rnn.pack_padded_sequence(torch_x, lengths, True, enforce_sorted)
    states = [_pair(rng, 4, 4, 4) for _ in range(2 if mode == "LSTM" else 1)]
    ours_hx = theirs_hx = None
    if given_state:
        ours_hx, theirs_hx = [s[0] for s in states], [s[1] for s in states]
        if mode != "LSTM":
            ours_hx, theirs_hx = ours_hx[0], theirs_hx[0]
    ours_out, ours_h = ours(ours_in, ours_hx)
    torch_out, torch_h = theirs(torch_in, theirs_hx)
    assert isinstance(ours_out, R.PackedSequence)
    assert ours_out.batch_sizes.tolist() == torch_out.batch_sizes.tolist()
    ours_h = ours_h if mode == "LSTM" else (ours_h,)
    torch_h = torch_h if mode == "LSTM" else (torch_h,)
    ours_loss, torch_loss = 0, 0
    for ours_t, torch_t in [(ours_out.data, torch_out.data), *zip(ours_h, torch_h)]:
        _close(ours_t, torch_t)
        weights = rng.standard_normal(ours_t.shape)
        ours_loss = ours_loss + (ours_t * cr.tensor(weights)).sum()
        torch_loss = torch_loss + (torch_t * torch.tensor(weights)).sum()
    ours_loss.backward()
    torch_loss.backward()
    _close(ours_x.grad, torch_x.grad)
    theirs_params = theirs.named_parameters()
    for (name, ours_p), (torch_name, torch_p) in zip(ours.named_parameters(), theirs_params):
        assert name == torch_name
        _close(ours_p.grad, torch_p.grad)
    if given_state:
        for ours_s, torch_s in states:
            _close(ours_s.grad, torch_s.grad)


def test_packed_output_pads_back_to_the_padded_run_for_full_lengths(torch):
    """A packed batch whose sequences all have the full length runs as the padded batch."""
    ours, _ = _modules(torch, "GRU", bidirectional=True)
    x = cr.tensor(np.random.default_rng(4).standard_normal((3, 2, 3)))
    packed_out, packed_h = ours(R.pack_padded_sequence(x, [3, 3]))
    out, h = ours(x)
    _close(R.pad_packed_sequence(packed_out)[0], out.detach())
    _close(packed_h, h.detach())


def test_rnn_refuses_packed_data_of_the_wrong_size(torch):
    ours, theirs = _modules(torch, "LSTM")
    bad = R.PackedSequence(cr.ones(3, 5, dtype=cr.float64), cr.tensor([2, 1]))
    with pytest.raises(RuntimeError, match="input_size"):
        ours(bad)
    with pytest.raises(RuntimeError):
        theirs(torch.nn.utils.rnn.PackedSequence(torch.ones(3, 5).double(), torch.tensor([2, 1])))
    packed = R.pack_padded_sequence(cr.ones(3, 2, 3, dtype=cr.float64), [3, 1])
    with pytest.raises(RuntimeError, match="h_0"):
        ours(packed, (cr.zeros(1, 3, 4, dtype=cr.float64), cr.zeros(1, 3, 4, dtype=cr.float64)))
