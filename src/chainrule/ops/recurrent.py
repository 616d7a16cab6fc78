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
from ..op import Op, batch_elementwise
from .shape import cat

__all__: list[str] = []


def _third(gates, k: int):
    """Gate k of three (GRU), the last dim split in equal parts."""
    size = gates.shape[-1] // 3
    return gates[..., k * size : (k + 1) * size]


def _quarter(gates, k: int):
    """Gate k of four (LSTM)."""
    size = gates.shape[-1] // 4
    return gates[..., k * size : (k + 1) * size]


def _join(parts: list):
    """The gradients of the gates side by side along the last dim, as the gates lie."""
    if any(isinstance(p, Tensor) for p in parts):
        return cat(parts, -1)
    return np.concatenate(np.broadcast_arrays(*parts), -1)


# GRU.


def _gru_gates(gates_x, gates_h):
    """(r, z, n): the reset, update and new gates (r and z in one sigmoid: they lie side by
    side)."""
    size = gates_x.shape[-1] // 3
    rz = xp.sigmoid(gates_h[..., : 2 * size] + gates_x[..., : 2 * size])
    r, z = rz[..., :size], rz[..., size:]
    n = xp.tanh(_third(gates_x, 2) + _third(gates_h, 2) * r)
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
    dr = dn * _third(gates_h, 2) * (r * (1 - r))
    return dr, dz, dn


def _gru_grad_x(g, gates_h, h, r, z, n):
    return _join(list(_gru_partials(g, gates_h, h, r, z, n)))


def _gru_grad_h_gates(g, gates_h, h, r, z, n):
    dr, dz, dn = _gru_partials(g, gates_h, h, r, z, n)
    return _join([dr, dz, dn * r])  # r gates the state's n part


def _gru_tangent(tangent, gates_h, h, r, z, n, from_state: bool):
    """The output's tangent from a tangent of gates_x (or of gates_h: ``from_state``)."""
    dn = (1 - z) * (1 - n * n)
    dr = dn * _third(gates_h, 2) * (r * (1 - r))
    n_part = _third(tangent, 2) * r if from_state else _third(tangent, 2)
    return dr * _third(tangent, 0) + (h - n) * (z * (1 - z)) * _third(tangent, 1) + dn * n_part


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
    cell = xp.tanh(_quarter(gates, 2))  # the gate PyTorch calls g (g is a gradient here)
    out = f * c
    out += i * cell
    return out, {"i": i, "f": f, "cell": cell}


def _lstm_state_grad_gates(g, gates, c, i, f, cell):
    zeros = xp.zeros_like(_quarter(gates, 3))
    return _join([g * cell * (i * (1 - i)), g * c * (f * (1 - f)), g * i * (1 - cell * cell),
                  zeros])  # fmt: skip


def _lstm_state_tangent(dgates, c, i, f, cell):
    return (_quarter(dgates, 0) * (i * (1 - i)) * cell + _quarter(dgates, 1) * (f * (1 - f)) * c
            + _quarter(dgates, 2) * (1 - cell * cell) * i)  # fmt: skip


lstm_cell_state_row = Op(
    "lstm_cell_state", lambda gates, c: _lstm_state_saving(gates, c)[0],
    inputs=("gates", "c"),
    vjp=(lambda g, gates, c, i, f, cell: _lstm_state_grad_gates(g, gates, c, i, f, cell),
         lambda g, f: g * f),
    jvp=(lambda dgates, c, i, f, cell: _lstm_state_tangent(dgates, c, i, f, cell),
         lambda dc, f: dc * f),
    residuals={"i": lambda gates: xp.sigmoid(_quarter(gates, 0)),
               "f": lambda gates: xp.sigmoid(_quarter(gates, 1)),
               "cell": lambda gates: xp.tanh(_quarter(gates, 2))},
    forward_saving=_lstm_state_saving,
    kind="cell",
    batch=batch_elementwise,  # the gates are split along the last dim; leading dims broadcast
    doc="An LSTM step's new cell state from its gates: sigmoid(f) * c + sigmoid(i) * tanh(g).",
)  # fmt: skip


def _lstm_output_saving(gates, c):
    o = xp.sigmoid(_quarter(gates, 3))
    t = xp.tanh(c)
    return o * t, {"o": o, "t": t}


def _lstm_output_grad_gates(g, gates, o, t):
    zeros = xp.zeros_like(_quarter(gates, 0))
    return _join([zeros, zeros, zeros, g * t * (o * (1 - o))])


lstm_cell_output_row = Op(
    "lstm_cell_output", lambda gates, c: _lstm_output_saving(gates, c)[0],
    inputs=("gates", "c"),
    vjp=(lambda g, gates, o, t: _lstm_output_grad_gates(g, gates, o, t),
         lambda g, o, t: g * o * (1 - t * t)),
    jvp=(lambda dgates, o, t: _quarter(dgates, 3) * (o * (1 - o)) * t,
         lambda dc, o, t: dc * o * (1 - t * t)),
    residuals={"o": lambda gates: xp.sigmoid(_quarter(gates, 3)), "t": lambda c: xp.tanh(c)},
    forward_saving=_lstm_output_saving,
    kind="cell",
    batch=batch_elementwise,  # the gates are split along the last dim; leading dims broadcast
    doc="An LSTM step's output from its gates and new cell state: sigmoid(o) * tanh(c).",
)  # fmt: skip
