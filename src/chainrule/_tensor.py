"""`Tensor`: a NumPy array plus the graph node that produced it, and every op as a method.

What a tensor holds is `chainrule.tensor_base.TensorBase`; here each method is a one-line call
into `chainrule.ops`, where each op is one row. In-place writes go through `chainrule.inplace`
and the backward pass is in `chainrule.autograd`. Factories are in `chainrule.creation` and
`chainrule.random`, dtypes in `chainrule.dtypes`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from . import observe
from .errors import DTypeError, fmt_dtype
from .methods.aliases import AliasMethods
from .methods.factories import FactoryMethods
from .methods.indexing import IndexingMethods
from .methods.linalg import LinalgMethods
from .methods.numeric import NumericMethods
from .methods.reductions import ReductionMethods
from .methods.special import SpecialMethods
from .methods.statistics import StatisticsMethods
from .methods.variants import InPlaceMethods
from .signatures import numpy_names
from .tensor_base import TensorBase


class Tensor(
    TensorBase,
    NumericMethods,
    ReductionMethods,
    IndexingMethods,
    LinalgMethods,
    FactoryMethods,
    SpecialMethods,
    StatisticsMethods,
    AliasMethods,
    InPlaceMethods,
):
    """An n-dimensional array that records the ops applied to it, for automatic gradients.

    ``data`` is the same values as a detached Tensor (``numpy()`` gives the NumPy array),
    ``grad`` the accumulated gradient (a Tensor, or None),
    ``grad_fn`` the node that produced it (None for leaves). Python floats become float32;
    NumPy float64 input stays float64. Names and semantics follow PyTorch.

    >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([[2., 4.],
            [6., 8.]])
    """

    __slots__ = ()
    # Defining __eq__ (elementwise, below) would otherwise make tensors unhashable.
    __hash__ = object.__hash__

    def __format__(self, format_spec: str) -> str:
        """A 0-d Tensor formats as its value (``f"{loss:.4f}"``); any other tensor, and any
        subclass's (a Parameter, a teaching text's Tensor), takes only the empty format (its
        ``str``), as in PyTorch."""
        if type(self) is Tensor and self._array.ndim == 0:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    # Dtype conversion (to, float, double...) is in `chainrule.methods.factories`.

    # Autograd.

    @property
    def data(self) -> Tensor:
        """This tensor's memory as a new Tensor outside autograd, as PyTorch's ``.data``: no
        ``grad_fn``, ``requires_grad`` False, and a version counter of its own, so that
        in-place ops on it (``p.data.add_(-lr * p.grad)``) change this tensor without being
        recorded and without tripping the check of tensors saved for backward (`detach`
        shares the counter and does not). A Parameter's ``data`` is a plain Tensor.

        Assigning a Tensor replaces this tensor's values by that tensor's memory (shared, not
        copied; shape and dtype may change); anything else is a TypeError, as in PyTorch, and
        integer values for a tensor that requires grad a `DTypeError` (a RuntimeError too).
        The NumPy array is ``t.numpy()`` (``t.detach().numpy()`` when ``t`` requires grad).

        >>> import chainrule
        >>> w = chainrule.tensor([1.0, 2.0], requires_grad=True)
        >>> w.data.add_(-0.5 * chainrule.ones(2))
        tensor([0.5000, 1.5000])
        >>> w
        tensor([0.5000, 1.5000], requires_grad=True)
        >>> w.data = chainrule.zeros(3)
        >>> w
        tensor([0., 0., 0.], requires_grad=True)
        """
        copy = Tensor._make(self._array)
        if observe.current is not None:
            observe.current.data_read(self, copy)
        return copy

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"data: a tensor's data can only be set to a Tensor, got "
                f"{type(value).__name__}; wrap it with chainrule.tensor(...)"
            )
        if self._requires_grad and value._array.dtype.kind != "f":
            raise DTypeError(
                f"data: this tensor requires grad, so its data must be floating point, got "
                f"{fmt_dtype(value._array.dtype)}"
            )
        if value._array is self._array:
            return  # ``t.data -= x``: the in-place op wrote into this tensor's memory already
        if observe.current is not None:
            observe.current.data_assigned(self)
        self._array = value._array

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph=False):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        A non-scalar tensor needs ``gradient`` (the vector in the vector-Jacobian product).
        The graph's saved arrays are freed unless ``retain_graph`` (default: create_graph);
        ``create_graph=True`` makes the gradients themselves differentiable.
        """
        autograd.backward(self, gradient, retain_graph, create_graph)

    # Arithmetic: each dunder is one op row (comments give the reflected operand order).

    def __add__(self, other):
        return ops.add(self, other)

    def __radd__(self, other):  # other + self
        return ops.add(other, self)

    def __sub__(self, other):
        return ops.sub(self, other)

    def __rsub__(self, other):  # other - self
        return ops.sub(other, self)

    def __mul__(self, other):
        return ops.mul(self, other)

    def __rmul__(self, other):  # other * self
        return ops.mul(other, self)

    def __truediv__(self, other):
        return ops.div(self, other)

    def __rtruediv__(self, other):  # other / self
        if isinstance(other, (int, float)) and self._array.dtype.kind == "f":
            # c * (1 / x), as PyTorch computes it: backward then needs 1 / x alone, so an
            # in-place change to x afterwards does not refuse it.
            return ops.mul(ops.reciprocal(self), other)
        return ops.div(other, self)

    def __pow__(self, exponent):
        return ops.pow(self, exponent)

    def __rpow__(self, base):  # base ** self
        return ops.pow(base, self)

    def __matmul__(self, other):
        return ops.matmul(self, other)

    def __rmatmul__(self, other):  # other @ self
        return ops.matmul(other, self)

    def __neg__(self):
        return ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return ops.abs(self)

    def __lt__(self, other):
        return ops.lt(self, other)

    def __le__(self, other):
        return ops.le(self, other)

    def __gt__(self, other):
        return ops.gt(self, other)

    def __ge__(self, other):
        return ops.ge(self, other)

    def __eq__(self, other):
        return ops.eq(self, other)

    def __ne__(self, other):
        return ops.ne(self, other)

    # ~, & and | are bitwise, as in PyTorch: logical on bool tensors, refused on floats, and a
    # bool tensor beside an integer is an integer (^, << and >> are in chainrule.methods.numeric).

    def __invert__(self):
        return ops.bitwise_not(self)

    def __and__(self, other):
        return ops.bitwise_and(self, other)

    def __rand__(self, other):  # other & self
        return ops.bitwise_and(other, self)

    def __or__(self, other):
        return ops.bitwise_or(self, other)

    def __ror__(self, other):  # other | self
        return ops.bitwise_or(other, self)

    # The same ops by name, with PyTorch's arguments.

    def add(self, other, *, alpha=1) -> Tensor:
        """self + alpha * other, broadcasting."""
        return ops.add(self, other if alpha == 1 else other * alpha)

    def sub(self, other, *, alpha=1) -> Tensor:
        """self - alpha * other, broadcasting."""
        return ops.sub(self, other if alpha == 1 else other * alpha)

    def mul(self, other) -> Tensor:
        """self * other, broadcasting."""
        return ops.mul(self, other)

    def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
        """self / other, true division, broadcasting; rounded toward 0 or down with
        ``rounding_mode`` "trunc" or "floor" (`chainrule.divide`)."""
        if rounding_mode is None:
            return ops.div(self, other)
        return ops.divide(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent) -> Tensor:
        """self ** exponent, broadcasting."""
        return ops.pow(self, exponent)

    def eq(self, other) -> Tensor:
        """self == other, elementwise (bool)."""
        return ops.eq(self, other)

    def ne(self, other) -> Tensor:
        """self != other, elementwise (bool)."""
        return ops.ne(self, other)

    def lt(self, other) -> Tensor:
        """self < other, elementwise (bool)."""
        return ops.lt(self, other)

    def le(self, other) -> Tensor:
        """self <= other, elementwise (bool)."""
        return ops.le(self, other)

    def gt(self, other) -> Tensor:
        """self > other, elementwise (bool)."""
        return ops.gt(self, other)

    def ge(self, other) -> Tensor:
        """self >= other, elementwise (bool)."""
        return ops.ge(self, other)

    def logical_and(self, other) -> Tensor:
        """self and other, elementwise (bool)."""
        return ops.logical_and(self, other)

    def logical_or(self, other) -> Tensor:
        """self or other, elementwise (bool)."""
        return ops.logical_or(self, other)

    # In place: refused on leaves that require grad (outside no_grad); bumps the version.

    def __iadd__(self, other):
        return self._inplace(ops.add, other, "add_")

    def __isub__(self, other):
        return self._inplace(ops.sub, other, "sub_")

    def __imul__(self, other):
        return self._inplace(ops.mul, other, "mul_")

    def __itruediv__(self, other):
        return self._inplace(ops.div, other, "div_")

    def __ipow__(self, exponent):
        return self._inplace(ops.pow, exponent, "pow_")

    def __iand__(self, other):
        return self._inplace(ops.bitwise_and, other, "bitwise_and_")

    def __ior__(self, other):
        return self._inplace(ops.bitwise_or, other, "bitwise_or_")

    def add_(self, other, alpha: float = 1) -> Tensor:
        """self += alpha * other, in place."""
        return self._inplace(ops.add, other if alpha == 1 else other * alpha, "add_")

    def sub_(self, other, alpha: float = 1) -> Tensor:
        """self -= alpha * other, in place."""
        return self._inplace(ops.sub, other if alpha == 1 else other * alpha, "sub_")

    def mul_(self, other) -> Tensor:
        """self *= other, in place."""
        return self._inplace(ops.mul, other, "mul_")

    def div_(self, other) -> Tensor:
        """self /= other, in place."""
        return self._inplace(ops.div, other, "div_")

    def fill_(self, value: float) -> Tensor:
        """Set every element to ``value``, in place."""
        return self._inplace(ops.elementwise.fill, value, "fill_")

    def zero_(self) -> Tensor:
        """Set every element to 0, in place."""
        return self._inplace(ops.elementwise.fill, 0, "zero_")

    def copy_(self, source) -> Tensor:
        """Copy ``source``'s values (broadcast to this shape) into this tensor, in place."""
        return self._inplace(ops.elementwise.copy_into, source, "copy_")

    def __setitem__(self, index, value) -> None:
        self._inplace(ops.indexing.index_put, (index, value), "setitem")

    def _inplace(self, op, other, name: str) -> Tensor:
        # One place for every in-place write (`chainrule.inplace`); vmap's tracer overrides it.
        return inplace.write(self, op, other, name)

    # Elementwise math: rows declared with ``method=True`` (exp, log, sin, tanh, relu...) are
    # bound as methods at the foot of this module. The methods below take more than the
    # tensor, or call a function composed of rows (silu).

    def leaky_relu(self, negative_slope: float = 0.01) -> Tensor:
        """self where positive, else negative_slope * self."""
        return ops.leaky_relu(self, negative_slope)

    def gelu(self, approximate: str = "none") -> Tensor:
        """Gaussian error linear unit, exact (erf) or with approximate="tanh"."""
        return ops.gelu(self, approximate)

    def silu(self) -> Tensor:
        """self * sigmoid(self)."""
        return ops.silu(self)

    def clamp(self, min=None, max=None) -> Tensor:
        """Limit values to [min, max]; the gradient passes where min <= self <= max."""
        return ops.clamp(self, min, max)

    clip = clamp

    def maximum(self, other) -> Tensor:
        """Elementwise maximum; ties split the gradient equally."""
        return ops.maximum(self, other)

    def minimum(self, other) -> Tensor:
        """Elementwise minimum; ties split the gradient equally."""
        return ops.minimum(self, other)

    def where(self, condition, other) -> Tensor:
        """self where condition holds, else other (PyTorch's Tensor.where)."""
        return ops.where(condition, self, other)

    # Reductions.

    def sum(self, dim=None, keepdim: bool = False) -> Tensor:
        """Sum over ``dim`` (an int, a tuple, or None for all)."""
        return ops.sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim: bool = False) -> Tensor:
        """Mean over ``dim``."""
        return ops.mean(self, dim, keepdim)

    def var(self, dim=None, correction: int = 1, keepdim: bool = False) -> Tensor:
        """Variance over ``dim`` with Bessel's ``correction`` (1: unbiased)."""
        return ops.var(self, dim, correction=correction, keepdim=keepdim)

    def std(self, dim=None, correction: int = 1, keepdim: bool = False) -> Tensor:
        """Standard deviation over ``dim`` with ``correction``."""
        return ops.std(self, dim, correction=correction, keepdim=keepdim)

    def prod(self, dim=None, keepdim: bool = False) -> Tensor:
        """Product over ``dim`` (one int or None); correct gradients with zeros."""
        return ops.prod(self, dim, keepdim)

    def max(self, dim=None, keepdim: bool = False):
        """The maximum; with ``dim``, a (values, indices) pair as in PyTorch."""
        return ops.max(self, dim, keepdim)

    def min(self, dim=None, keepdim: bool = False):
        """The minimum; with ``dim``, a (values, indices) pair as in PyTorch."""
        return ops.min(self, dim, keepdim)

    def amax(self, dim=None, keepdim: bool = False) -> Tensor:
        """Maximum over ``dim``; ties share the gradient equally."""
        return ops.amax(self, dim, keepdim)

    def amin(self, dim=None, keepdim: bool = False) -> Tensor:
        """Minimum over ``dim``; ties share the gradient equally."""
        return ops.amin(self, dim, keepdim)

    def argmax(self, dim=None, keepdim: bool = False) -> Tensor:
        """Index of the maximum (first one at ties), over the flattened tensor or ``dim``."""
        return ops.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False) -> Tensor:
        """Index of the minimum (first one at ties)."""
        return ops.argmin(self, dim, keepdim)

    def logsumexp(self, dim=None, keepdim: bool = False) -> Tensor:
        """log(sum(exp(self))) over ``dim``, computed without overflow."""
        return ops.logsumexp(self, dim, keepdim)

    def norm(self, p=2, dim=None, keepdim: bool = False) -> Tensor:
        """The p-norm over ``dim`` (p = 2 by default; 1, inf and other numbers too)."""
        return ops.norm(self, p, dim, keepdim)

    def softmax(self, dim: int) -> Tensor:
        """exp(self) normalised to sum to 1 along ``dim``."""
        return ops.softmax(self, dim)

    def log_softmax(self, dim: int) -> Tensor:
        """log(softmax(self, dim)), computed stably."""
        return ops.log_softmax(self, dim)

    def all(self, dim=None, keepdim: bool = False) -> Tensor:
        """Whether every element is true (non-zero), over ``dim``."""
        return ops.all(self, dim, keepdim)

    def any(self, dim=None, keepdim: bool = False) -> Tensor:
        """Whether any element is true (non-zero), over ``dim``."""
        return ops.any(self, dim, keepdim)

    # Shape.

    def reshape(self, *shape) -> Tensor:
        """The same elements in a new shape (one dimension may be -1)."""
        return ops.reshape(self, shape_args(shape))

    def view(self, *shape) -> Tensor:
        """The same as reshape (NumPy decides whether to copy)."""
        return ops.reshape(self, shape_args(shape))

    def view_as(self, other: Tensor) -> Tensor:
        """Reshape to ``other``'s shape."""
        return ops.reshape(self, other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dimensions start_dim..end_dim into one."""
        return ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        """Split dimension ``dim`` into ``sizes``."""
        return ops.unflatten(self, dim, sizes)

    def squeeze(self, dim=None) -> Tensor:
        """Remove dimensions of size 1 (all, or those in ``dim``)."""
        return ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a dimension of size 1 at ``dim``."""
        return ops.unsqueeze(self, dim)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions."""
        return ops.transpose(self, dim0, dim1)

    def permute(self, *dims) -> Tensor:
        """Reorder the dimensions."""
        return ops.permute(self, shape_args(dims))

    @property
    def T(self) -> Tensor:
        """All dimensions reversed."""
        return ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        """The last two dimensions swapped (a batch of matrices transposed)."""
        return ops.transpose(self, -2, -1)

    def expand(self, *sizes) -> Tensor:
        """A broadcast view of this tensor to ``sizes`` (-1 keeps a dimension)."""
        return ops.expand(self, shape_args(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        """Broadcast to ``other``'s shape."""
        return ops.expand(self, other.shape)

    def broadcast_to(self, shape) -> Tensor:
        """Broadcast to ``shape``."""
        return ops.expand(self, tuple(shape))

    def repeat(self, *repeats) -> Tensor:
        """Tile the whole tensor ``repeats`` times along each dimension (PyTorch's repeat)."""
        return ops.repeat(self, shape_args(repeats))

    def tile(self, *reps) -> Tensor:
        """Like repeat, padding ``reps`` with leading ones (PyTorch's tile)."""
        return ops.tile(self, shape_args(reps))

    def flip(self, dims) -> Tensor:
        """Reverse the order of elements along ``dims``."""
        return ops.flip(self, dims)

    def roll(self, shifts, dims=None) -> Tensor:
        """Shift elements cyclically along ``dims``."""
        return ops.roll(self, shifts, dims)

    def split(self, split_size_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of ``split_size`` (int) or of the given sizes (list) along ``dim``."""
        return ops.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """``chunks`` nearly equal pieces along ``dim``."""
        return ops.chunk(self, chunks, dim)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """``length`` elements of ``dim`` from ``start``, a view."""
        return ops.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at ``index`` of ``dim``, without that dim, a view."""
        return ops.select(self, dim, index)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """Every slice along ``dim``, without that dim, as views."""
        return ops.unbind(self, dim)

    def movedim(self, source, destination) -> Tensor:
        """Dimensions moved from ``source`` to ``destination``, a view."""
        return ops.movedim(self, source, destination)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        """Swap two dimensions (``transpose``)."""
        return ops.transpose(self, axis0, axis1)

    def t(self) -> Tensor:
        """A matrix transposed (at most 2 dims)."""
        return ops.t(self)

    def gather(self, dim: int, index) -> Tensor:
        """Values picked along ``dim`` by an index tensor of the output's shape."""
        return ops.gather(self, dim, index)

    def __getitem__(self, index) -> Tensor:
        return ops.indexing.getitem(self, index)

    # Linear algebra.

    def matmul(self, other) -> Tensor:
        """Matrix product with NumPy's broadcasting rules (1-D, 2-D and batched)."""
        return ops.matmul(self, other)

    def dot(self, other) -> Tensor:
        """Inner product of two 1-D tensors."""
        return ops.dot(self, other)

    def outer(self, other) -> Tensor:
        """Outer product of two 1-D tensors."""
        return ops.outer(self, other)


def shape_args(args: tuple) -> tuple:
    """Accept both f(2, 3) and f((2, 3)), as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


# The one upward seam: the ops, the random fills, in-place writes and the backward pass import
# Tensor from this module, and Tensor's methods call them.
from . import autograd, inplace, methods, ops, random  # noqa: E402

methods.ops, methods.random = ops, random  # the family mixins' methods call them too


def _row_method(op: ops.Op):
    """``x.name()`` for a row declared with ``method=True``: the row run on x."""

    def method(self, **params):
        return op(self, **params)

    method.__name__, method.__qualname__ = op.name, f"Tensor.{op.name}"
    method.__doc__ = op.__doc__
    return method


for _op in ops.REGISTRY.values():
    if _op.method:
        if _op.name in vars(Tensor):
            raise TypeError(f"Op {_op.name!r}: method=True, but Tensor defines {_op.name} itself")
        setattr(Tensor, _op.name, _row_method(_op))
del _op

# PyTorch's methods also take NumPy's axis=/keepdims= for dim=/keepdim= (chainrule.signatures);
# rows bound above translate their arguments in apply_op.
for _name in dir(Tensor):
    _fn = inspect.getattr_static(Tensor, _name)
    if inspect.isfunction(_fn):
        _wrapped = numpy_names(_fn, f"Tensor.{_name}", refuse_out=False)
        if _wrapped is not _fn:
            setattr(Tensor, _name, _wrapped)
del _name, _fn, _wrapped
