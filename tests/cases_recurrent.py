"""Cases for the recurrent cells' rows (chainrule.ops.recurrent), against the same gate
arithmetic written with PyTorch's ops, as its CPU cells compute it."""

from cases import Case
from hypothesis import strategies as st
from strategies import away_from_zero, reals


def _cell_shapes(gates: int, lead_max: int = 2):
    """(gates_x, gates_h, state) shapes: leading dims, then gates * H and H; sometimes the
    state without the leading dims (broadcast, as vmap gives an unbatched state)."""

    def build(draw):
        lead, size, broadcast = draw
        state = (size,) if broadcast else (*lead, size)
        return ((*lead, gates * size), (*lead, gates * size), state)

    lead = st.lists(st.integers(1, 3), min_size=1, max_size=lead_max).map(tuple)
    return st.tuples(lead, st.integers(1, 3), st.booleans()).map(build)


def _gru(gates_x, gates_h, h):
    from chainrule.ops.recurrent import gru_cell_update_row

    return gru_cell_update_row(gates_x, gates_h, h)


def _gru_torch(gates_x, gates_h, h):
    import torch

    size = h.shape[-1]
    r = torch.sigmoid(gates_h[..., :size] + gates_x[..., :size])
    z = torch.sigmoid(gates_h[..., size : 2 * size] + gates_x[..., size : 2 * size])
    n = torch.tanh(gates_x[..., 2 * size :] + gates_h[..., 2 * size :] * r)
    return (h - n) * z + n


def _lstm_state(gates_x, gates_h, c):
    from chainrule.ops.recurrent import lstm_cell_state_row

    return lstm_cell_state_row(gates_x + gates_h, c)


def _lstm_output(gates_x, gates_h, c):
    from chainrule.ops.recurrent import lstm_cell_output_row

    return lstm_cell_output_row(gates_x + gates_h, c)


def _lstm_torch(gates_x, gates_h, c, output: bool):
    import torch

    i, f, g, o = (gates_x + gates_h).chunk(4, -1)
    if output:
        return torch.sigmoid(o) * torch.tanh(c)
    return torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)


def _scan_shapes():
    """(gates_x, h0, c0, w_hh, b_hh) shapes of an LSTM layer: T steps, B sequences, H units."""
    sizes = st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2))
    return sizes.map(lambda s: ((s[0], s[1], 4 * s[2]), (s[1], s[2]), (s[1], s[2]),
                                (4 * s[2], s[2]), (4 * s[2],)))  # fmt: skip


def _scan(gates_x, h0, c0, w_hh, b_hh):
    from chainrule.ops.recurrent import lstm_scan_row

    return lstm_scan_row(gates_x, h0, c0, w_hh, b_hh)


def _scan_torch(gates_x, h0, c0, w_hh, b_hh):
    import torch

    h, c, steps = h0, c0, []
    for t in range(gates_x.shape[0]):
        i, f, g, o = (gates_x[t] + (h @ w_hh.T + b_hh)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        steps.append(torch.cat([h, c], -1))
    return torch.stack(steps)


def _rnn_shapes():
    """(gates_x, h0, w_hh, b_hh) shapes of an Elman RNN layer."""
    sizes = st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 3))
    return sizes.map(lambda s: ((s[0], s[1], s[2]), (s[1], s[2]), (s[2], s[2]), (s[2],)))


def _rnn(nonlinearity):
    def run(gates_x, h0, w_hh, b_hh):
        from chainrule.ops.recurrent import rnn_scan_row

        return rnn_scan_row(gates_x, h0, w_hh, b_hh, nonlinearity=nonlinearity)

    return run


def _rnn_torch(nonlinearity):
    def run(gates_x, h0, w_hh, b_hh):
        import torch

        act = torch.tanh if nonlinearity == "tanh" else torch.relu
        h, steps = h0, []
        for t in range(gates_x.shape[0]):
            h = act(gates_x[t] + (h @ w_hh.T + b_hh))
            steps.append(h)
        return torch.stack(steps)

    return run


CASES = {
    "rnn_scan": Case(_rnn("tanh"), _rnn_shapes(), torch_fn=_rnn_torch("tanh")),
    # Pre-activations kept away from relu's kink at 0: |h W + b| stays below 1.5.
    "rnn_scan[relu]": Case(_rnn("relu"), _rnn_shapes(), (away_from_zero(1.5, 3.0),
                           reals(-0.1, 0.1)), torch_fn=_rnn_torch("relu")),
    "lstm_scan": Case(_scan, _scan_shapes(), torch_fn=_scan_torch),
    "gru_cell_update": Case(_gru, _cell_shapes(3), torch_fn=_gru_torch),
    "lstm_cell_state": Case(_lstm_state, _cell_shapes(4),
                            torch_fn=lambda x, y, c: _lstm_torch(x, y, c, False)),
    "lstm_cell_output": Case(_lstm_output, _cell_shapes(4),
                             torch_fn=lambda x, y, c: _lstm_torch(x, y, c, True)),
}  # fmt: skip
