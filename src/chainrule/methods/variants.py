"""In-place variants: every ``name_`` method that writes the result of ``name`` into self
(PyTorch's in-place forms), made from one table; and the in-place forms that are not "compute,
then write": shape changes (``unsqueeze_``, ``t_``, ``resize_``), ``detach_``,
``fill_diagonal_`` and the Python-callable maps (``apply_``, ``map_``, ``map2_``).

A table entry's method runs the out-of-place method and hands the result to
`chainrule.inplace.write`, the one place that writes into a tensor: it refuses a leaf that
requires grad, casts the result to this tensor's dtype (a float result into an integer tensor is
a DTypeError, as PyTorch's "result type Float can't be cast"), bumps the version counter and
rewrites the history of the tensor and of the tensor it is a view of.
"""

from __future__ import annotations

import numpy as np

from .. import methods
from ..errors import DTypeError, GraphError, ShapeError, fmt_shape
from ..graph import state

#: Methods whose in-place form ``name_`` writes ``self.name(*args, **kwargs)`` into self.
IN_PLACE = (
    # elementwise, one input
    "abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctanh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "deg2rad", "digamma", "erf",
    "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "i0", "lgamma", "log", "log10", "log1p",
    "log2", "logit", "neg", "negative", "rad2deg", "reciprocal", "relu", "rsqrt", "sgn",
    "sigmoid", "sign", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "bitwise_not",
    "logical_not", "mvlgamma", "polygamma",
    # elementwise, two inputs
    "arctan2", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "copysign", "divide", "true_divide", "floor_divide", "float_power",
    "gcd", "lcm", "heaviside", "hypot", "igamma", "igammac", "ldexp", "multiply", "nextafter",
    "pow", "subtract", "xlogy", "logical_and", "logical_or", "logical_xor", "clamp", "clip",
    # comparisons: the 0/1 result in this tensor's dtype
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal",
    # products, scans, triangles and the rest
    "addmm", "addmv", "addbmm", "baddbmm", "addcdiv", "addcmul", "addr", "cumsum", "cumprod",
    "tril", "triu", "renorm",
)  # fmt: skip


def in_place(name: str):
    """The method ``name_``: ``self.name(...)`` written into self."""

    def method(self, *args, **kwargs):
        return self._inplace(lambda x, _: getattr(x, name)(*args, **kwargs), None, f"{name}_")

    method.__name__, method.__qualname__ = f"{name}_", f"Tensor.{name}_"
    method.__doc__ = f"`{name}`, written into this tensor (PyTorch's in-place form)."
    return method


def _refuse_leaf(tensor, name: str) -> None:
    if state.grad_enabled and tensor._requires_grad and tensor._grad_fn is None:
        raise GraphError(
            f"{name}: a leaf tensor that requires grad cannot be changed in place; do it "
            "inside chainrule.no_grad() or use the out-of-place op"
        )


def _become(tensor, view, name: str):
    """Make ``tensor`` the view ``view`` of itself (``x.t_()``: x is now x.t()), keeping its
    identity: its array, history and view record are the view's."""
    _refuse_leaf(tensor, name)
    tensor._array = view._array
    tensor._grad_fn, tensor._output_nr = view._grad_fn, view._output_nr
    tensor._tangent = view._tangent
    # A view of a view keeps its base; a tensor that owned its memory still owns it.
    parent = tensor._view
    tensor._view = view._view if parent is not None else None
    return tensor


class InPlaceMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    def unsqueeze_(self, dim: int):
        """`unsqueeze`, in place: this tensor gains a dim of size 1 at ``dim``."""
        return _become(self, self.unsqueeze(dim), "unsqueeze_")

    def squeeze_(self, dim=None):
        """`squeeze`, in place: this tensor loses its dims of size 1 (or ``dim``)."""
        view = self.squeeze() if dim is None else self.squeeze(dim)
        return _become(self, view, "squeeze_")

    def t_(self):
        """`t`, in place: a matrix becomes its transpose."""
        return _become(self, self.t(), "t_")

    def transpose_(self, dim0: int, dim1: int):
        """`transpose`, in place: dims ``dim0`` and ``dim1`` swap."""
        return _become(self, self.transpose(dim0, dim1), "transpose_")

    def swapaxes_(self, axis0: int, axis1: int):
        """`swapaxes`, in place (NumPy's name for `transpose_`)."""
        return _become(self, self.transpose(axis0, axis1), "swapaxes_")

    def swapdims_(self, dim0: int, dim1: int):
        """`swapdims`, in place (another name for `transpose_`)."""
        return _become(self, self.transpose(dim0, dim1), "swapdims_")

    def detach_(self):
        """Detach this tensor from the graph, in place: it becomes a leaf that does not
        require grad. A view cannot be detached in place (PyTorch refuses too): use detach().
        """
        if self._view is not None and self._view.base._requires_grad:
            raise GraphError(
                "detach_: a view cannot be detached in place; use detach(), which returns a "
                "new tensor"
            )
        self._grad_fn, self._output_nr, self._requires_grad = None, 0, False
        return self

    def resize_(self, *sizes):
        """Give this tensor the shape ``sizes``, keeping its elements in row-major order;
        growing adds zeros (PyTorch leaves them uninitialized). Refused on a tensor that
        requires grad, as in PyTorch."""
        shape = tuple(sizes[0]) if len(sizes) == 1 and not np.isscalar(sizes[0]) else sizes
        if self._requires_grad:
            raise GraphError("resize_: a tensor that requires grad cannot be resized")
        if any(not isinstance(n, (int, np.integer)) or n < 0 for n in shape):
            raise ShapeError(f"resize_: sizes must be non-negative integers, got {shape}")
        flat = self._array.reshape(-1)
        size = int(np.prod(shape, dtype=np.int64))
        if size <= flat.size:
            self._array = flat[:size].reshape(shape)
        else:
            grown = np.zeros(size, self._array.dtype)
            grown[: flat.size] = flat
            self._array = grown.reshape(shape)
        self._version_counter.bump("resize_")
        return self

    def resize_as_(self, other):
        """`resize_` to ``other``'s shape."""
        return self.resize_(tuple(other.shape))

    def fill_diagonal_(self, fill_value, wrap: bool = False):
        """Set the main diagonal to ``fill_value``, in place: (i, i) of a matrix, (i, i, ..., i)
        of a tensor whose dims are all equal. ``wrap``: a tall matrix's diagonal starts again
        below the square part, every (columns + 1) rows. The gradient is 0 on the diagonal."""
        shape = self.shape
        if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
            raise ShapeError(
                f"fill_diagonal_: needs a matrix or a tensor with all dims equal, got shape "
                f"{fmt_shape(shape)}"
            )
        mask = np.zeros(shape, bool)
        np.fill_diagonal(mask, True, wrap=wrap)
        return self._inplace(
            lambda x, _: methods.ops.where(mask, fill_value, x), None, "fill_diagonal_"
        )

    def apply_(self, callable):
        """Replace each element by ``callable(element)``, in place (a Python function on each
        element: slow, and not differentiable, so refused on a tensor that requires grad)."""
        return _map_in_place(self, "apply_", callable)

    def map_(self, tensor, callable):
        """self[i] = callable(self[i], tensor[i]) for each element, ``tensor`` broadcast to
        this shape; in place, not differentiable."""
        return _map_in_place(self, "map_", callable, tensor)

    def map2_(self, x, y, callable):
        """self[i] = callable(self[i], x[i], y[i]) for each element, in place."""
        return _map_in_place(self, "map2_", callable, x, y)


def _map_in_place(tensor, name: str, fn, *others):
    if tensor._requires_grad:
        raise GraphError(
            f"{name}: a Python function on each element is not differentiable, and this "
            f"tensor requires grad; call it on tensor.detach()"
        )
    arrays = [np.broadcast_to(getattr(o, "_array", o), tensor.shape) for o in others]
    values = np.frompyfunc(fn, 1 + len(arrays), 1)(tensor._array, *arrays)
    try:
        tensor._array[...] = values.astype(tensor.dtype)
    except (TypeError, ValueError) as exc:
        raise DTypeError(
            f"{name}: the function's results do not fit this tensor's dtype {tensor.dtype}: {exc}"
        ) from None
    tensor._version_counter.bump(name)
    return tensor


for _name in IN_PLACE:
    setattr(InPlaceMethods, f"{_name}_", in_place(_name))
del _name
