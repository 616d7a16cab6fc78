"""Recurrent layers with PyTorch's names, shapes and parameters: the cells (RNNCell, LSTMCell,
GRUCell) take one time step, and RNN, LSTM and GRU run stacked, optionally bidirectional
layers over a whole sequence, padded or packed (a `PackedSequence` of sequences of different
lengths). Each step is a few ops: the state's projection, then the gates' arithmetic as one
row of `chainrule.ops.recurrent`.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...creation import zeros
from ...errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from .. import functional as F
from .. import init
from ..functional._checks import _check_probability
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]


# Gates per mode: rows of weight_ih and weight_hh are hidden_size times this.
_CHUNKS = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# One time step of each kind. ``gates_x`` is the input's projection x @ W_ih.T + b_ih, computed
# for the whole sequence at once; the step adds the hidden state's projection, h @ W_hh.T +
# b_hh (one `linear` row). The gates' arithmetic is one row per step
# (`chainrule.ops.recurrent`), one node instead of a dozen.


def _rnn_step(gates_x: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, mode: str) -> Tensor:
    pre = gates_x + F.linear(h, w_hh, b_hh)
    return ops.tanh(pre) if mode == "RNN_TANH" else F.relu(pre)


def _lstm_step(gates_x: Tensor, state: tuple, w_hh: Tensor, b_hh: Tensor | None) -> tuple:
    h, c = state
    gates = gates_x + F.linear(h, w_hh, b_hh)  # PyTorch's gate order: i, f, g, o
    c = ops.recurrent.lstm_cell_state_row(gates, c)
    return ops.recurrent.lstm_cell_output_row(gates, c), c


def _gru_step(gates_x: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    # r gates W_hn h + b_hn, as PyTorch (and cuDNN) do
    return ops.recurrent.gru_cell_update_row(gates_x, F.linear(h, w_hh, b_hh), h)


def _step(mode: str, gates_x: Tensor, state, w_hh: Tensor, b_hh: Tensor | None):
    if mode == "LSTM":
        return _lstm_step(gates_x, state, w_hh, b_hh)
    if mode == "GRU":
        return _gru_step(gates_x, state, w_hh, b_hh)
    return _rnn_step(gates_x, state, w_hh, b_hh, mode)


def _whole_sequence(row, gates_x: Tensor, states: tuple, w_hh: Tensor, b_hh: Tensor | None,
                    reverse: bool, **params) -> tuple:  # fmt: skip
    """A layer's whole sequence as one row of `chainrule.ops.recurrent` (``lstm_scan_row`` or
    ``rnn_scan_row``): its output (L, N, ...) in time order, and its last step's;
    ``reverse`` runs from the last step to the first."""
    if b_hh is None:
        b_hh = np.zeros(w_hh.shape[0], w_hh.dtype)
    if reverse:
        gates_x = ops.flip(gates_x, (0,))
    out = row(gates_x, *states, w_hh, b_hh, **params)
    return (ops.flip(out, (0,)) if reverse else out), out[-1]


def _check_int(value, name: str, owner: str, minimum: int = 1) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise DTypeError(f"{owner}: {name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise DomainError(f"{owner}: {name} must be at least {minimum}, got {value}")
    return int(value)


def _check_nonlinearity(nonlinearity, owner: str) -> str:
    if nonlinearity not in ("tanh", "relu"):
        raise DomainError(f"{owner}: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
    return nonlinearity


def _check_input(input, owner: str, dims: tuple[int, int], input_size: int, dtype) -> None:
    if not isinstance(input, Tensor):
        raise DTypeError(f"{owner}: expected a Tensor input, got {type(input).__name__}")
    if input.ndim not in dims:
        raise ShapeError(
            f"{owner}: expected a {dims[0]}-D (unbatched) or {dims[1]}-D (batched) input, got "
            f"shape {fmt_shape(input.shape)}"
        )
    if input.shape[-1] != input_size:
        raise ShapeError(
            f"{owner}: input has shape {fmt_shape(input.shape)}; its last dim must be "
            f"input_size = {input_size}"
        )
    if input.dtype != dtype:
        raise DTypeError(
            f"{owner}: input dtype {fmt_dtype(input.dtype)} does not match the weights' dtype "
            f"{fmt_dtype(dtype)}; convert the input (e.g. .to({fmt_dtype(dtype)})) or the "
            "module (.float() / .double())"
        )


def _check_state(state, expected: tuple, owner: str, name: str) -> None:
    if not isinstance(state, Tensor) or state.shape != expected:
        got = fmt_shape(state.shape) if isinstance(state, Tensor) else type(state).__name__
        raise ShapeError(f"{owner}: expected {name} of shape {fmt_shape(expected)}, got {got}")


class RNNCellBase(Module):
    """The parameters shared by the cells: ``weight_ih`` (chunks * hidden_size, input_size),
    ``weight_hh`` (chunks * hidden_size, hidden_size) and the biases ``bias_ih`` and
    ``bias_hh``, all starting U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) as in PyTorch.

    >>> [(name, p.shape) for name, p in GRUCell(2, 3).named_parameters()][:2]
    [('weight_ih', (9, 2)), ('weight_hh', (9, 3))]
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int) -> None:
        super().__init__()
        owner = type(self).__name__
        self.input_size = _check_int(input_size, "input_size", owner)
        self.hidden_size = _check_int(hidden_size, "hidden_size", owner)
        self.bias = bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(zeros(rows, input_size))
        self.weight_hh = Parameter(zeros(rows, hidden_size))
        if bias:
            self.bias_ih = Parameter(zeros(rows))
            self.bias_hh = Parameter(zeros(rows))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) again."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def _batched(self, input: Tensor) -> tuple[Tensor, bool]:
        """The input as (N, input_size), and whether it came batched."""
        _check_input(input, type(self).__name__, (1, 2), self.input_size, self.weight_ih.dtype)
        return (input, True) if input.ndim == 2 else (input.unsqueeze(0), False)

    def _state(self, hx, input: Tensor, batched: bool, name: str = "hx") -> Tensor:
        """The state as (N, hidden_size): zeros when None."""
        n = input.shape[0]
        if hx is None:
            return zeros(n, self.hidden_size, dtype=input.dtype)
        expected = (n, self.hidden_size) if batched else (self.hidden_size,)
        _check_state(hx, expected, type(self).__name__, name)
        return hx if batched else hx.unsqueeze(0)

    def _gates_x(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight_ih, self.bias_ih)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or ReLU).

    ``input`` is (N, input_size) or unbatched (input_size,); ``hx`` is (N, hidden_size) or
    (hidden_size,), zeros when omitted. Returns h' shaped like ``hx``.

    >>> import chainrule as cr
    >>> cell = RNNCell(3, 4, nonlinearity="relu")
    >>> cell
    RNNCell(3, 4, nonlinearity=relu)
    >>> cell(cr.randn(2, 3)).shape, cell(cr.randn(3)).shape
    ((2, 4), (4,))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1)
        self.nonlinearity = _check_nonlinearity(nonlinearity, "RNNCell")

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, batched = self._batched(input)
        h = self._state(hx, input, batched)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(self._gates_x(input), h, self.weight_hh, self.bias_hh, mode)
        return h if batched else h[0]


class LSTMCell(RNNCellBase):
    """One step of an LSTM: gates i, f, g, o (in that order in the weights' rows), then
    c' = f * c + i * g and h' = o * tanh(c').

    ``hx`` is a pair (h, c), each (N, hidden_size) or unbatched (hidden_size,), zeros when
    omitted. Returns (h', c').

    >>> import chainrule as cr
    >>> cell = LSTMCell(3, 4)
    >>> cell.weight_ih.shape
    (16, 3)
    >>> h, c = cell(cr.randn(2, 3))
    >>> h.shape, c.shape
    ((2, 4), (2, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        input, batched = self._batched(input)
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise DTypeError(f"LSTMCell: hx must be a pair (h_0, c_0), got {type(hx).__name__}")
        h0, c0 = (None, None) if hx is None else hx
        state = (self._state(h0, input, batched, "h_0"), self._state(c0, input, batched, "c_0"))
        h, c = _lstm_step(self._gates_x(input), state, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h[0], c[0])


class GRUCell(RNNCellBase):
    """One step of a GRU, with PyTorch's gates r, z, n (in that order in the weights' rows):

    r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.

    >>> import chainrule as cr
    >>> cell = GRUCell(3, 4, bias=False)
    >>> cell
    GRUCell(3, 4, bias=False)
    >>> cell(cr.randn(3), cr.zeros(4)).shape
    (4,)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, batched = self._batched(input)
        h = self._state(hx, input, batched)
        h = _gru_step(self._gates_x(input), h, self.weight_hh, self.bias_hh)
        return h if batched else h[0]


class RNNBase(Module):
    """Stacked, optionally bidirectional recurrent layers over a sequence (the base of RNN,
    LSTM and GRU; ``mode`` is 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU').

    Layer k direction d has ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}`` and
    ``bias_hh_l{k}`` (``_reverse`` appended for the backward direction), all starting
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as in PyTorch. ``dropout`` applies to the
    outputs of every layer but the last, in training mode. ``proj_size`` must be 0.

    >>> lstm = RNNBase("LSTM", 2, 3, bidirectional=True)
    >>> [name for name, _ in lstm.named_parameters()][4:6]
    ['weight_ih_l0_reverse', 'weight_hh_l0_reverse']
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        if mode not in _CHUNKS:
            raise DomainError(f"{owner}: unknown mode {mode!r}; use one of {list(_CHUNKS)}")
        if proj_size != 0:
            raise DomainError(
                f"{owner}: proj_size={proj_size} is not supported (LSTMs with projections are "
                "not implemented); use proj_size=0, or follow the LSTM with a Linear layer"
            )
        self.mode = mode
        self.input_size = _check_int(input_size, "input_size", owner)
        self.hidden_size = _check_int(hidden_size, "hidden_size", owner)
        self.num_layers = _check_int(num_layers, "num_layers", owner)
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = _check_probability(dropout, owner, "dropout")
        self.bidirectional = bidirectional
        self.proj_size = 0
        if self.dropout > 0 and num_layers == 1:
            warnings.warn(
                f"{owner}: dropout={dropout} applies between layers only, so it has no effect "
                "with num_layers=1",
                UserWarning,
                stacklevel=3,
            )
        rows = _CHUNKS[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * self._directions
            for suffix in ("", "_reverse")[: self._directions]:
                shapes = {"weight_ih": (rows, layer_input), "weight_hh": (rows, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(rows,), bias_hh=(rows,))
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    self.register_parameter(name, Parameter(zeros(*shape)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    @property
    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) again."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs weights for cuDNN here; chainrule has nothing to pack."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in PyTorch's order (w_ih, w_hh, b_ih,
        b_hh)."""
        per = 4 if self.bias else 2
        names = self._flat_weights_names
        return [
            [getattr(self, name) for name in names[i : i + per]] for i in range(0, len(names), per)
        ]

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    def _initial_states(self, hx, n: int, dtype, batched: bool) -> list:
        """One state per (layer, direction), each (n, hidden_size) or for LSTMs a pair."""
        owner = type(self).__name__
        stacks = self.num_layers * self._directions
        expected = (stacks, n, self.hidden_size) if batched else (stacks, self.hidden_size)
        if hx is None:
            states = [zeros(n, self.hidden_size, dtype=dtype)] * stacks
            return list(zip(states, states)) if self.mode == "LSTM" else states

        def split(state: Tensor, name: str) -> list[Tensor]:
            _check_state(state, expected, owner, name)
            return list(ops.unbind(state if batched else state.unsqueeze(1), 0))

        if self.mode != "LSTM":
            return split(hx, "hx")
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise DTypeError(f"{owner}: hx must be a pair (h_0, c_0), got {type(hx).__name__}")
        return list(zip(split(hx[0], "h_0"), split(hx[1], "c_0")))

    def _layer_weights(self, layer: int, reverse: bool) -> list[Tensor | None]:
        suffix = f"_l{layer}" + ("_reverse" if reverse else "")
        return [getattr(self, kind + suffix, None) for kind in ("weight_ih", "weight_hh",
                                                                 "bias_ih", "bias_hh")]  # fmt: skip

    def _scan(self, input: Tensor, state, layer: int, reverse: bool):
        """Run one direction of one layer over (L, N, features); returns (outputs, state)."""
        w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, reverse)
        if self.mode == "LSTM":  # h and c side by side in the row's output
            out, last = _whole_sequence(ops.recurrent.lstm_scan_row, F.linear(input, w_ih, b_ih),
                                        state, w_hh, b_hh, reverse)  # fmt: skip
            size = self.hidden_size
            return out[..., :size], (last[..., :size], last[..., size:])
        if self.mode in ("RNN_TANH", "RNN_RELU"):
            nonlinearity = "tanh" if self.mode == "RNN_TANH" else "relu"
            return _whole_sequence(
                ops.recurrent.rnn_scan_row,
                F.linear(input, w_ih, b_ih),
                (state,),
                w_hh,
                b_hh,
                reverse,
                nonlinearity=nonlinearity,
            )
        steps = ops.unbind(F.linear(input, w_ih, b_ih), 0)  # one matmul for every step
        outputs = [None] * len(steps)
        for t in reversed(range(len(steps))) if reverse else range(len(steps)):
            state = _step(self.mode, steps[t], state, w_hh, b_hh)
            outputs[t] = state[0] if self.mode == "LSTM" else state
        return ops.stack(outputs), state

    def _layers(self, input: Tensor, states: list, scan) -> tuple[Tensor, list]:
        """Run every layer and direction with ``scan(input, state, layer, reverse)``; returns
        the last layer's output and each (layer, direction)'s final state."""
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self._directions):
                state = states[layer * self._directions + direction]
                output, state = scan(input, state, layer, reverse=direction == 1)
                outputs.append(output)
                finals.append(state)
            input = outputs[0] if len(outputs) == 1 else ops.cat(outputs, dim=-1)
            if layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, self.training)
        return input, finals

    def _stacked(self, finals: list, arrange) -> Tensor | tuple[Tensor, Tensor]:
        """h_n (a pair (h_n, c_n) for LSTMs) from the final states, stacked along a new first
        dim and passed through ``arrange``."""
        if self.mode == "LSTM":
            return arrange(ops.stack([h for h, _ in finals])), arrange(
                ops.stack([c for _, c in finals])
            )
        return arrange(ops.stack(finals))

    def _scan_packed(self, data: Tensor, state, layer: int, reverse: bool, sizes: list[int]):
        """Run one direction of one layer over packed ``data`` whose step t is ``sizes[t]``
        rows (the sequences still running, longest first); returns (outputs, final state).

        Forward, the state keeps one row per running sequence: when sequences end, their rows
        are put aside as final. Backward, a sequence joins with its initial state at its own
        last step, so the state grows from the longest sequences' end."""
        w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, reverse)
        gates = F.linear(data, w_ih, b_ih)  # one matmul for every step
        starts = np.cumsum(sizes) - sizes
        lstm = self.mode == "LSTM"
        initial = state if lstm else (state,)
        outputs = [None] * len(sizes)
        ended = []  # forward: final states of sequences that ended, latest ended first
        state = initial if not reverse else tuple(s[:0] for s in initial)
        for t in reversed(range(len(sizes))) if reverse else range(len(sizes)):
            size, rows = sizes[t], state[0].shape[0]
            if size < rows:
                ended.append(tuple(s[size:] for s in state))
                state = tuple(s[:size] for s in state)
            elif size > rows:
                state = tuple(ops.cat([s, s0[rows:size]]) for s, s0 in zip(state, initial))
            new = _step(self.mode, gates[starts[t] : starts[t] + size], state if lstm else
                        state[0], w_hh, b_hh)  # fmt: skip
            state = new if lstm else (new,)
            outputs[t] = state[0]
        if ended:
            state = tuple(ops.cat(parts) for parts in zip(state, *reversed(ended)))
        return ops.cat(outputs), state if lstm else state[0]

    def _forward_packed(self, input: PackedSequence, hx):
        """forward for a `PackedSequence`: the same layers, each step on the sequences still
        running; h_n holds each sequence's state after its own last step, in the input's
        order."""
        owner = type(self).__name__
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if not isinstance(data, Tensor) or data.ndim != 2:
            got = fmt_shape(data.shape) if isinstance(data, Tensor) else type(data).__name__
            raise ShapeError(f"{owner}: a PackedSequence's data must be 2-D (steps, "
                             f"input_size), got {got}")  # fmt: skip
        _check_input(data, owner, (2, 2), self.input_size, self.weight_ih_l0.dtype)
        sizes = [int(size) for size in np.asarray(batch_sizes._array)]
        states = self._initial_states(hx, sizes[0], data.dtype, batched=True)
        if sorted_indices is not None:  # hx comes in the input's order; the rows are sorted
            pick = lambda s: s.index_select(0, sorted_indices)  # noqa: E731
            states = [tuple(map(pick, s)) if self.mode == "LSTM" else pick(s) for s in states]
        data, finals = self._layers(data, states, functools.partial(self._scan_packed,
                                                                     sizes=sizes))  # fmt: skip
        output = PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)
        if unsorted_indices is None:
            return output, self._stacked(finals, lambda h: h)
        return output, self._stacked(finals, lambda h: h.index_select(1, unsorted_indices))

    def forward(self, input: Tensor | PackedSequence, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        owner = type(self).__name__
        _check_input(input, owner, (2, 3), self.input_size, self.weight_ih_l0.dtype)
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[0] == 0:
            raise ShapeError(f"{owner}: the sequence is empty (length 0); it needs a step")
        states = self._initial_states(hx, input.shape[1], input.dtype, batched)
        output, finals = self._layers(input, states, self._scan)
        if not batched:
            output = output[:, 0]
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, self._stacked(finals, lambda h: h if batched else h[:, 0])


class RNN(RNNBase):
    """An Elman RNN (tanh or ReLU) over a sequence, as PyTorch's ``nn.RNN``.

    ``input`` is (L, N, input_size), (N, L, input_size) with ``batch_first``, or unbatched
    (L, input_size); ``hx`` is (D * num_layers, N, hidden_size) with D = 2 if bidirectional
    else 1 (zeros when omitted). Returns (output, h_n): output (L, N, D * hidden_size) (batch
    first if asked) and h_n shaped like ``hx``, ordered layer by layer, forward then reverse.

    >>> import chainrule as cr
    >>> rnn = RNN(3, 4, num_layers=2, bidirectional=True)
    >>> rnn
    RNN(3, 4, num_layers=2, bidirectional=True)
    >>> output, h_n = rnn(cr.randn(5, 2, 3))
    >>> output.shape, h_n.shape
    ((5, 2, 8), (4, 2, 4))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ) -> None:
        mode = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}[_check_nonlinearity(nonlinearity, "RNN")]
        super().__init__(
            mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional
        )
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A long short-term memory network over a sequence, as PyTorch's ``nn.LSTM`` without
    projections (``proj_size`` must be 0).

    Shapes as `RNN`'s; the state is a pair: ``forward(input, (h_0, c_0))`` returns
    (output, (h_n, c_n)). Gate order in the weights' rows: i, f, g, o.

    >>> import chainrule as cr
    >>> lstm = LSTM(3, 4, batch_first=True)
    >>> output, (h_n, c_n) = lstm(cr.randn(2, 5, 3))
    >>> output.shape, h_n.shape, c_n.shape
    ((2, 5, 4), (1, 2, 4), (1, 2, 4))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size,
        )  # fmt: skip


class GRU(RNNBase):
    """A gated recurrent unit network over a sequence, as PyTorch's ``nn.GRU``.

    Shapes and return values as `RNN`'s; the step is `GRUCell`'s (gates r, z, n).

    >>> import chainrule as cr
    >>> gru = GRU(3, 4, num_layers=2)
    >>> [name for name, _ in gru.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    >>> output, h_n = gru(cr.randn(5, 3))  # unbatched
    >>> output.shape, h_n.shape
    ((5, 4), (2, 4))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional
        )
