"""The recurrent cells' gate arithmetic as rows: one GRU step, and an LSTM step's new cell
state and output, each one node instead of the dozen a cell's chain of slices, sigmoids,
tanhs, products and sums records (`chainrule.nn.modules.rnn` runs them at every time step).

The forwards compute what PyTorch's cells compute on the CPU, in the same order and dtype,
so the values are the chain's, bit for bit; the rules are the chain's derivatives, written
with `chainrule.xp` so that second derivatives follow. Each gate's activation is kept from
the forward (residuals), as PyTorch's fused cells keep theirs.

A GRU step takes the input's projection ``gates_x`` = x Wᵢᵀ + bᵢ and the state's
``gates_h`` = h Wₕᵀ + bₕ, both (..., 3H) with gates r, z, n in that order:
r = σ(xᵣ + hᵣ), z = σ(x_z + h_z), n = tanh(xₙ + r hₙ), h' = (h - n) z + n.
An LSTM step takes ``gates`` = x Wᵢᵀ + bᵢ + h Wₕᵀ + bₕ, (..., 4H) with gates i, f, g, o:
c' = σ(f) c + σ(i) tanh(g), then h' = σ(o) tanh(c').
"""

from __future__ import annotations

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..op import Loops, Op, PerSeed, batch_elementwise
from .shape import cat, stack

__all__: list[str] = []


def _gate(gates, k: int, count: int):
    """Gate k of ``count`` (3 for a GRU, 4 for an LSTM): the last dim split in equal parts."""
    size = gates.shape[-1] // count
    return gates[..., k * size : (k + 1) * size]


def _cat(parts: list):
    """Arrays or Tensors side by side along the last dim (gates' gradients as the gates lie);
    arrays whose leading dims differ are broadcast to one leading shape first."""
    if any(isinstance(p, Tensor) for p in parts):
        return cat(parts, -1)
    if len({p.shape[:-1] for p in parts}) > 1:
        lead = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        parts = [np.broadcast_to(p, (*lead, p.shape[-1])) for p in parts]
    return np.concatenate(parts, -1)


# GRU.


def _gru_gates(gates_x, gates_h):
    """(r, z, n): the reset, update and new gates (r and z in one sigmoid: they lie side by
    side)."""
    size = gates_x.shape[-1] // 3
    rz = xp.sigmoid(gates_h[..., : 2 * size] + gates_x[..., : 2 * size])
    r, z = rz[..., :size], rz[..., size:]
    n = xp.tanh(_gate(gates_x, 2, 3) + _gate(gates_h, 2, 3) * r)
    return r, z, n


def _gru_saving(gates_x, gates_h, h):
    r, z, n = _gru_gates(gates_x, gates_h)
    out = h - n
    out *= z
    out += n
    return out, {"r": r, "z": z, "n": n}


def _gru_partials(g, gates_h, h, r, z, n):
    """The gradient at the gates' sums, before their activations: (d r, d z, d n)."""
    dn = g * (1 - z) * (1 - n * n)
    dz = g * (h - n) * (z * (1 - z))
    dr = dn * _gate(gates_h, 2, 3) * (r * (1 - r))
    return dr, dz, dn


def _gru_grad_x(g, gates_h, h, r, z, n):
    return _cat(list(_gru_partials(g, gates_h, h, r, z, n)))


def _gru_grad_h_gates(g, gates_h, h, r, z, n):
    dr, dz, dn = _gru_partials(g, gates_h, h, r, z, n)
    return _cat([dr, dz, dn * r])  # r gates the state's n part


def _gru_tangent(tangent, gates_h, h, r, z, n, from_state: bool):
    """The output's tangent from a tangent of gates_x (or of gates_h: ``from_state``)."""
    dn = (1 - z) * (1 - n * n)
    dr = dn * _gate(gates_h, 2, 3) * (r * (1 - r))
    n_part = _gate(tangent, 2, 3) * r if from_state else _gate(tangent, 2, 3)
    return dr * _gate(tangent, 0, 3) + (h - n) * (z * (1 - z)) * _gate(tangent, 1, 3) + dn * n_part


gru_cell_update_row = Op(
    "gru_cell_update", lambda gates_x, gates_h, h: _gru_saving(gates_x, gates_h, h)[0],
    inputs=("gates_x", "gates_h", "h"),
    vjp=(_gru_grad_x, _gru_grad_h_gates, lambda g, z: g * z),
    jvp=(lambda dgates_x, gates_h, h, r, z, n: _gru_tangent(dgates_x, gates_h, h, r, z, n, False),
         lambda dgates_h, gates_h, h, r, z, n: _gru_tangent(dgates_h, gates_h, h, r, z, n, True),
         lambda dh, z: dh * z),
    residuals={"r": lambda gates_x, gates_h: _gru_gates(gates_x, gates_h)[0],
               "z": lambda gates_x, gates_h: _gru_gates(gates_x, gates_h)[1],
               "n": lambda gates_x, gates_h: _gru_gates(gates_x, gates_h)[2]},
    forward_saving=_gru_saving,
    kind="cell",
    batch=batch_elementwise,  # the gates are split along the last dim; leading dims broadcast
    doc="One GRU step from the gates' projections: (h - n) * z + n.",
)  # fmt: skip


# LSTM.


def _lstm_state_saving(gates, c):
    size = gates.shape[-1] // 4
    both = xp.sigmoid(gates[..., : 2 * size])  # i and f, side by side
    i, f = both[..., :size], both[..., size:]
    cell = xp.tanh(_gate(gates, 2, 4))  # the gate PyTorch calls g (g is a gradient here)
    out = f * c
    out += i * cell
    return out, {"i": i, "f": f, "cell": cell}


def _lstm_state_grad_gates(g, gates, c, i, f, cell):
    zeros = xp.zeros_like(_gate(gates, 3, 4))
    return _cat([g * cell * (i * (1 - i)), g * c * (f * (1 - f)), g * i * (1 - cell * cell),
                  zeros])  # fmt: skip


def _lstm_state_tangent(dgates, c, i, f, cell):
    return (_gate(dgates, 0, 4) * (i * (1 - i)) * cell + _gate(dgates, 1, 4) * (f * (1 - f)) * c
            + _gate(dgates, 2, 4) * (1 - cell * cell) * i)  # fmt: skip


lstm_cell_state_row = Op(
    "lstm_cell_state", lambda gates, c: _lstm_state_saving(gates, c)[0],
    inputs=("gates", "c"),
    vjp=(lambda g, gates, c, i, f, cell: _lstm_state_grad_gates(g, gates, c, i, f, cell),
         lambda g, f: g * f),
    jvp=(lambda dgates, c, i, f, cell: _lstm_state_tangent(dgates, c, i, f, cell),
         lambda dc, f: dc * f),
    residuals={"i": lambda gates: xp.sigmoid(_gate(gates, 0, 4)),
               "f": lambda gates: xp.sigmoid(_gate(gates, 1, 4)),
               "cell": lambda gates: xp.tanh(_gate(gates, 2, 4))},
    forward_saving=_lstm_state_saving,
    kind="cell",
    batch=batch_elementwise,  # the gates are split along the last dim; leading dims broadcast
    doc="An LSTM step's new cell state from its gates: sigmoid(f) * c + sigmoid(i) * tanh(g).",
)  # fmt: skip


def _lstm_output_saving(gates, c):
    o = xp.sigmoid(_gate(gates, 3, 4))
    t = xp.tanh(c)
    return o * t, {"o": o, "t": t}


def _lstm_output_grad_gates(g, gates, o, t):
    zeros = xp.zeros_like(_gate(gates, 0, 4))
    return _cat([zeros, zeros, zeros, g * t * (o * (1 - o))])


lstm_cell_output_row = Op(
    "lstm_cell_output", lambda gates, c: _lstm_output_saving(gates, c)[0],
    inputs=("gates", "c"),
    vjp=(lambda g, gates, o, t: _lstm_output_grad_gates(g, gates, o, t),
         lambda g, o, t: g * o * (1 - t * t)),
    jvp=(lambda dgates, o, t: _gate(dgates, 3, 4) * (o * (1 - o)) * t,
         lambda dc, o, t: dc * o * (1 - t * t)),
    residuals={"o": lambda gates: xp.sigmoid(_gate(gates, 3, 4)), "t": lambda c: xp.tanh(c)},
    forward_saving=_lstm_output_saving,
    kind="cell",
    batch=batch_elementwise,  # the gates are split along the last dim; leading dims broadcast
    doc="An LSTM step's output from its gates and new cell state: sigmoid(o) * tanh(c).",
)  # fmt: skip


# A whole LSTM layer's scan over time: one node for the sequence.


def _stack(parts: list, dim: int = 0):
    """Arrays or Tensors stacked along a new dim."""
    if any(isinstance(p, Tensor) for p in parts):
        return stack(parts, dim)
    return np.stack(parts, dim)


class ScanTape(PerSeed):
    """What a scan keeps from its forward for its backward. An LSTM's: each step's gate
    activations ``acts`` (T, B, 4H: sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)) and
    ``tanh_c``, tanh of each step's cell state (T, B, H); an Elman RNN's: nothing (its output
    is all its backward reads). Its rules share one backward through time (`PerSeed`)."""

    __slots__ = ("acts", "tanh_c")

    def __init__(self, acts, tanh_c) -> None:
        super().__init__()
        self.acts, self.tanh_c = acts, tanh_c


def _lstm_scan(gates_x, h0, c0, w_hh, b_hh):
    """(out, tape): out (T, B, 2H) holds each step's h and c side by side. Each step is the
    cell's arithmetic as PyTorch's CPU LSTM does it: gates = (h Wₕᵀ + bₕ) + gates_x[t]."""
    if all(type(a) is np.ndarray for a in (gates_x, h0, c0, w_hh, b_hh)):
        return _lstm_scan_arrays(gates_x, h0, c0, w_hh, b_hh)
    size = h0.shape[-1]
    w_t = xp.transpose(w_hh, 0, 1)
    w_t = w_t.contiguous() if isinstance(w_t, Tensor) else np.ascontiguousarray(w_t)
    h, c = h0, c0
    hs, cs, acts, tanh_cs = [], [], [], []
    for t in range(gates_x.shape[0]):
        gates = h @ w_t + b_hh + gates_x[t]
        sigmoids = xp.sigmoid(gates)  # all four, as `_lstm_scan_arrays`; g's is replaced
        cell = xp.tanh(gates[..., 2 * size : 3 * size])
        i, f, o = sigmoids[..., :size], sigmoids[..., size : 2 * size], sigmoids[..., 3 * size :]
        c = f * c + cell * i
        tanh_c = xp.tanh(c)
        h = o * tanh_c
        hs.append(h), cs.append(c), tanh_cs.append(tanh_c)
        acts.append(_cat([sigmoids[..., : 2 * size], cell, o]))
    return _cat([_stack(hs), _stack(cs)]), ScanTape(_stack(acts), _stack(tanh_cs))


def _lstm_scan_arrays(gates_x, h0, c0, w_hh, b_hh):
    """`_lstm_scan` on arrays: the same arithmetic in the same order (so the same bits), each
    step written into arrays made once for the sequence (a step is a dozen NumPy calls on
    small arrays: their count is its cost)."""
    steps, size = gates_x.shape[0], h0.shape[-1]
    dtype = np.result_type(gates_x, h0, c0, w_hh, b_hh)
    batch = np.broadcast_shapes(gates_x.shape[1:-1], h0.shape[:-1], c0.shape[:-1])
    out = np.empty((steps, *batch, 2 * size), dtype)
    acts = np.empty((steps, *batch, 4 * size), dtype)
    tanh_c = np.empty((steps, *batch, size), dtype)
    w_t = np.ascontiguousarray(w_hh.T)  # BLAS multiplies by a row-major matrix fastest
    h, c = h0, c0
    for t in range(steps):
        a = acts[t]
        np.matmul(h, w_t, out=a)
        a += b_hh
        a += gates_x[t]  # (h Wᵀ + b) + gates_x[t]: the sum's order does not change its bits
        cell = np.tanh(a[..., 2 * size : 3 * size])
        np.negative(a, out=a)  # sigmoid in place, as `xp.sigmoid` computes it
        np.exp(a, out=a)
        a += 1
        np.reciprocal(a, out=a)
        a[..., 2 * size : 3 * size] = cell
        c_new, h_new, tc = out[t, ..., size:], out[t, ..., :size], tanh_c[t]
        np.multiply(a[..., size : 2 * size], c, out=c_new)
        cell *= a[..., :size]
        c_new += cell
        np.tanh(c_new, out=tc)
        np.multiply(a[..., 3 * size :], tc, out=h_new)
        h, c = h_new, c_new
    return out, ScanTape(acts, tanh_c)


def _lstm_scan_backward(g, out, h0, c0, w_hh, acts, tanh_c):
    """The gradients of (gates_x, h0, c0, w_hh, b_hh) from g (T, B, 2H), through time. What
    does not depend on the gradient flowing back in time is worked out for all steps at once
    before the loop (each gate's derivative times what it multiplies, and o (1 - tanh(c)²)), so
    a step is a few calls. On arrays or Tensors alike, with the same arithmetic: a compiled
    step records this on Tensors and replays it on arrays, and gets eager's bits."""
    steps, size = out.shape[0], h0.shape[-1]
    state_shape = (*out.shape[1:-1], size)
    h_prev = _stack([xp.expand(h0, state_shape), *(out[t][..., :size] for t in range(steps - 1))])
    c_prev = _stack([xp.expand(c0, state_shape), *(out[t][..., size:] for t in range(steps - 1))])
    i, f = acts[..., :size], acts[..., size : 2 * size]
    cell, o = acts[..., 2 * size : 3 * size], acts[..., 3 * size :]
    slopes = (1 - acts) * acts  # s (1 - s), for the sigmoids i, f and o
    # d/di = g i (1 - i), d/df = c_prev f (1 - f), d/dg = i (1 - g²): gates i, f, g take dc.
    by_dc = _stack([slopes[..., :size] * cell, slopes[..., size : 2 * size] * c_prev,
                    (1 - cell * cell) * i], -2)  # fmt: skip
    by_dh = slopes[..., 3 * size :] * tanh_c  # d/do = tanh(c) o (1 - o): gate o takes dh
    through = (1 - tanh_c * tanh_c) * o  # what reaches c from h
    flat = (*out.shape[1:-1], 3 * size)
    d_steps = [None] * steps
    dh_next = dc_next = None
    for t in range(steps - 1, -1, -1):
        dh, dc = g[t][..., :size], g[t][..., size:]
        if dh_next is not None:
            dh, dc = dh + dh_next, dc + dc_next
        dc = dc + dh * through[t]
        d = _cat([(by_dc[t] * xp.unsqueeze(dc, -2)).reshape(flat), by_dh[t] * dh])
        d_steps[t] = d
        dh_next, dc_next = d @ w_hh, dc * f[t]
    d_gates = _stack(d_steps)
    rows = d_gates.reshape((-1, 4 * size))
    d_w = xp.transpose(rows, 0, 1) @ h_prev.reshape((-1, size))
    return d_gates, dh_next, dc_next, d_w, xp.sum(rows, 0)


def _lstm_scan_grads(g, out, h0, c0, w_hh, tape):
    return tape.once(g, lambda: _lstm_scan_backward(g, out, h0, c0, w_hh, tape.acts,
                                                    tape.tanh_c))  # fmt: skip


def _scan_rule(k: int):
    """The rule for input k of the scan: its part of the gradients worked out once."""

    def rule(g, out, h0, c0, w_hh, tape):
        return _lstm_scan_grads(g, out, h0, c0, w_hh, tape)[k]

    return rule


def _lstm_scan_tangent(out, h0, c0, w_hh, tape, dgates_x=None, dh0=None, dc0=None, dw_hh=None,
                       db_hh=None):  # fmt: skip
    """The output's tangent (T, B, 2H) from the given inputs' tangents (None: zero)."""
    size = h0.shape[-1]
    dh = xp.zeros_like(h0) if dh0 is None else dh0
    dc = xp.zeros_like(c0) if dc0 is None else dc0
    w_t = xp.transpose(w_hh, 0, 1)
    dw_t = None if dw_hh is None else xp.transpose(dw_hh, 0, 1)
    parts = []
    for t in range(out.shape[0]):
        h_prev = out[t - 1][..., :size] if t else h0
        c_prev = out[t - 1][..., size:] if t else c0
        da = dh @ w_t
        if dw_t is not None:
            da = da + h_prev @ dw_t
        if db_hh is not None:
            da = da + db_hh
        if dgates_x is not None:
            da = da + dgates_x[t]
        a, tc = tape.acts[t], tape.tanh_c[t]
        i, f = a[..., :size], a[..., size : 2 * size]
        cell, o = a[..., 2 * size : 3 * size], a[..., 3 * size :]
        di, df = da[..., :size] * (i * (1 - i)), da[..., size : 2 * size] * (f * (1 - f))
        dcell, do = (
            da[..., 2 * size : 3 * size] * (1 - cell * cell),
            da[..., 3 * size :] * (o * (1 - o)),
        )
        dc = df * c_prev + f * dc + di * cell + i * dcell
        dh = do * tc + o * (1 - tc * tc) * dc
        parts.append(_cat([dh, dc]))
    return _stack(parts)


lstm_scan_row = Op(
    "lstm_scan", lambda gates_x, h0, c0, w_hh, b_hh: _lstm_scan(gates_x, h0, c0, w_hh, b_hh)[0],
    inputs=("gates_x", "h0", "c0", "w_hh", "b_hh"),
    vjp=tuple(_scan_rule(k) for k in range(5)),
    jvp=(lambda dgates_x, out, h0, c0, w_hh, tape:
         _lstm_scan_tangent(out, h0, c0, w_hh, tape, dgates_x=dgates_x),
         lambda dh0, out, h0, c0, w_hh, tape: _lstm_scan_tangent(out, h0, c0, w_hh, tape, dh0=dh0),
         lambda dc0, out, h0, c0, w_hh, tape: _lstm_scan_tangent(out, h0, c0, w_hh, tape, dc0=dc0),
         lambda dw_hh, out, h0, c0, w_hh, tape:
         _lstm_scan_tangent(out, h0, c0, w_hh, tape, dw_hh=dw_hh),
         lambda db_hh, out, h0, c0, w_hh, tape:
         _lstm_scan_tangent(out, h0, c0, w_hh, tape, db_hh=db_hh)),
    residuals={"tape": lambda gates_x, h0, c0, w_hh, b_hh:
               _lstm_scan(gates_x, h0, c0, w_hh, b_hh)[1]},
    forward_saving=lambda gates_x, h0, c0, w_hh, b_hh: _scan_saving(gates_x, h0, c0, w_hh, b_hh),
    kind="cell",
    batch=Loops("the recurrence runs once per example under vmap"),
    doc="An LSTM layer over time: each step's h and c side by side, (T, B, 2H).",
)  # fmt: skip


def _scan_saving(gates_x, h0, c0, w_hh, b_hh):
    out, tape = _lstm_scan(gates_x, h0, c0, w_hh, b_hh)
    return out, {"tape": tape}


# A whole Elman RNN layer's scan: h_t = act(gates_x[t] + h W_hh^T + b_hh), one node.


def _contiguous_transpose(w):
    w_t = xp.transpose(w, 0, 1)
    return w_t.contiguous() if isinstance(w_t, Tensor) else np.ascontiguousarray(w_t)


def _rnn_scan(gates_x, h0, w_hh, b_hh, nonlinearity: str):
    """Every step's h, (T, B, H), as PyTorch's CPU RNN computes a step: act((h Wₕᵀ + bₕ) +
    gates_x[t]) with act tanh or relu."""
    w_t = _contiguous_transpose(w_hh)
    if all(type(a) is np.ndarray for a in (gates_x, h0, w_hh, b_hh)):
        batch = np.broadcast_shapes(gates_x.shape[1:-1], h0.shape[:-1])
        out = np.empty((gates_x.shape[0], *batch, h0.shape[-1]), np.result_type(gates_x, h0))
        h = h0
        for t in range(gates_x.shape[0]):
            a = out[t]
            np.matmul(h, w_t, out=a)
            a += b_hh
            a += gates_x[t]
            if nonlinearity == "tanh":
                np.tanh(a, out=a)
            else:
                np.maximum(a, 0, out=a)
            h = a
        return out
    h, steps = h0, []
    for t in range(gates_x.shape[0]):
        a = h @ w_t + b_hh + gates_x[t]
        h = xp.tanh(a) if nonlinearity == "tanh" else xp.maximum(a, 0)
        steps.append(h)
    return _stack(steps)


def _rnn_slopes(out, nonlinearity: str):
    """The activation's derivative at every step, from its output."""
    if nonlinearity == "tanh":
        return 1 - out * out
    positive = out > 0  # relu: 1 where the output is positive, as PyTorch's threshold
    return positive.to(out.dtype) if isinstance(positive, Tensor) else positive.astype(out.dtype)


def _rnn_scan_backward(g, out, h0, w_hh, nonlinearity: str):
    """The gradients of (gates_x, h0, w_hh, b_hh) from g (T, B, H), through time."""
    steps, size = out.shape[0], h0.shape[-1]
    slopes = _rnn_slopes(out, nonlinearity)
    d_steps = [None] * steps
    dh_next = None
    for t in range(steps - 1, -1, -1):
        dh = g[t] if dh_next is None else g[t] + dh_next
        d = dh * slopes[t]
        d_steps[t] = d
        dh_next = d @ w_hh
    d_gates = _stack(d_steps)
    h_prev = _stack([xp.expand(h0, out.shape[1:]), *(out[t] for t in range(steps - 1))])
    rows = d_gates.reshape((-1, size))
    d_w = xp.transpose(rows, 0, 1) @ h_prev.reshape((-1, size))
    return d_gates, dh_next, d_w, xp.sum(rows, 0)


def _rnn_scan_rule(k: int):
    """The rule for input k of the scan: its part of the gradients worked out once."""

    def rule(g, out, h0, w_hh, nonlinearity, tape):
        return tape.once(g, lambda: _rnn_scan_backward(g, out, h0, w_hh, nonlinearity))[k]

    return rule


def _rnn_scan_tangent(out, h0, w_hh, nonlinearity, dgates_x=None, dh0=None, dw_hh=None,
                      db_hh=None):  # fmt: skip
    """The output's tangent (T, B, H) from the given inputs' tangents (None: zero)."""
    slopes = _rnn_slopes(out, nonlinearity)
    w_t = xp.transpose(w_hh, 0, 1)
    dh = xp.zeros_like(h0) if dh0 is None else dh0
    parts = []
    for t in range(out.shape[0]):
        da = dh @ w_t
        if dw_hh is not None:
            da = da + (out[t - 1] if t else h0) @ xp.transpose(dw_hh, 0, 1)
        if db_hh is not None:
            da = da + db_hh
        if dgates_x is not None:
            da = da + dgates_x[t]
        dh = da * slopes[t]
        parts.append(dh)
    return _stack(parts)


rnn_scan_row = Op(
    "rnn_scan", lambda gates_x, h0, w_hh, b_hh, nonlinearity:
    _rnn_scan(gates_x, h0, w_hh, b_hh, nonlinearity),
    inputs=("gates_x", "h0", "w_hh", "b_hh"),
    vjp=tuple(_rnn_scan_rule(k) for k in range(4)),
    jvp=(lambda dgates_x, out, h0, w_hh, nonlinearity:
         _rnn_scan_tangent(out, h0, w_hh, nonlinearity, dgates_x=dgates_x),
         lambda dh0, out, h0, w_hh, nonlinearity:
         _rnn_scan_tangent(out, h0, w_hh, nonlinearity, dh0=dh0),
         lambda dw_hh, out, h0, w_hh, nonlinearity:
         _rnn_scan_tangent(out, h0, w_hh, nonlinearity, dw_hh=dw_hh),
         lambda db_hh, out, h0, w_hh, nonlinearity:
         _rnn_scan_tangent(out, h0, w_hh, nonlinearity, db_hh=db_hh)),
    residuals={"tape": lambda: ScanTape(None, None)},
    forward_saving=lambda gates_x, h0, w_hh, b_hh, nonlinearity: (
        _rnn_scan(gates_x, h0, w_hh, b_hh, nonlinearity), {"tape": ScanTape(None, None)}),
    kind="cell",
    batch=Loops("the recurrence runs once per example under vmap"),
    doc="An Elman RNN layer over time (tanh or relu): each step's h, (T, B, H).",
)  # fmt: skip
