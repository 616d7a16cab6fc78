"""`TensorBase`: the array, its gradient and its place in the graph, without the op methods.

`chainrule.Tensor` (in `chainrule._tensor`) adds those methods, as ``torch.Tensor`` adds its
Python methods to ``torch._C.TensorBase``; every tensor is a `Tensor`. Keeping the two apart
keeps each file one idea: here what a tensor *is*, there what you can *do* with it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator

import numpy as np

from . import observe
from .dtypes import CPU, as_dtype, bool_, device, get_default_dtype, int64
from .errors import DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .graph import RemovableHandle, VersionCounter, state
from .settings import print_options


def _to_array(data, dtype: np.dtype | None, copy: bool = True) -> np.ndarray:
    """An array from Python or NumPy data: Python floats get the default dtype (float32
    unless `chainrule.set_default_dtype` changed it), as in PyTorch."""
    if isinstance(data, TensorBase):
        array = data._array
    elif isinstance(data, (np.ndarray, np.generic)):
        array = np.asarray(data)
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(d, TensorBase) for d in data):
            data = [d._array if isinstance(d, TensorBase) else d for d in data]
        try:
            array = np.asarray(data)
        except ValueError as exc:
            raise ShapeError(f"tensor: data is not rectangular: {exc}") from None
        if array.dtype == np.float64 and dtype is None:
            array = array.astype(get_default_dtype())
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"tensor: cannot make a tensor of {fmt_dtype(array.dtype)} data")
    if dtype is not None and array.dtype != dtype:
        return array.astype(dtype)
    return array.copy() if copy else array


def replay(x, steps: tuple):
    """The view that ``steps`` make, each ``(row, extra arguments, params)``, of ``x``: of a
    Tensor by running the rows (recorded like any op), of an array by their NumPy forwards
    (views of the array)."""
    for row, extra, params in steps:
        run = row if isinstance(x, TensorBase) else row.forward
        x = run(x, *extra, **params)
    return x


class ViewOf:
    """How a view was made: ``base``, the tensor whose memory it shares (never itself a
    view), the view rows that made it from there (``steps``, see `replay`), and the version
    of their shared counter when the view's ``grad_fn`` was last made from the base's."""

    __slots__ = ("base", "steps", "version")

    def __init__(self, base: TensorBase, steps: tuple, version: int) -> None:
        self.base, self.steps, self.version = base, steps, version


def current_view(view: TensorBase) -> None:
    """Bring a view's ``grad_fn`` up to date if an in-place change to its memory moved the
    shared counter past its record's ``version``: its history is then its base's (which the
    change rewrote) followed by its view rows again, as PyTorch regenerates a view's grad_fn.
    Nothing for a tensor that is no view, or a view that is current."""
    record = view._view
    if record is None or record.version == view._counter.value:
        return
    base = record.base
    if base._tangent is not None:  # forward mode: the view's tangent is the base's too
        view._tangent = replay(base._tangent, record.steps)
    if base.requires_grad:
        if not state.grad_enabled:
            return  # no node can be made now; the next use with grad on makes it
        fresh = replay(base, record.steps)
        view._grad_fn, view._output_nr, view._requires_grad = fresh._grad_fn, fresh._output_nr, True
    record.version = view._counter.value


#: The ufunc behind each binary operator, and the Tensor operator that NumPy's ``array op
#: Tensor`` runs instead: reflected arithmetic, comparisons flipped (``a < t`` is ``t > a``).
#: NumPy calls ``__array_ufunc__`` for these rather than deferring to the reflected operator.
_REFLECTED = {
    np.add: "__radd__", np.subtract: "__rsub__", np.multiply: "__rmul__",
    np.true_divide: "__rtruediv__", np.power: "__rpow__", np.matmul: "__rmatmul__",
    np.less: "__gt__", np.less_equal: "__ge__", np.greater: "__lt__",
    np.greater_equal: "__le__", np.equal: "__eq__", np.not_equal: "__ne__",
}  # fmt: skip


class AfterAccumulate:
    """A leaf's hook that runs after its ``.grad`` is updated, in the leaf's hook list beside
    those that run before (`TensorBase.register_post_accumulate_grad_hook`)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn


class TensorBase:
    """What every `Tensor` is: ``_array`` (its values, a NumPy array; users reach it through
    ``numpy()``, ``np.asarray`` or ``detach().numpy()``, and ``data`` is a detached Tensor),
    ``grad`` (the accumulated gradient, a Tensor or None), ``grad_fn`` (the node that made it;
    None for leaves), ``requires_grad``, and the engine's bookkeeping: which output of
    ``grad_fn`` it is, the version counter it shares with its views, hooks, its forward-mode
    tangent, and for a view how it was made from its base (`ViewOf`)."""

    __slots__ = (
        "_array",
        "_grad",
        "_requires_grad",
        "_grad_fn",
        "_output_nr",
        "_counter",
        "_hooks",
        "_tangent",
        "_view",
        "__weakref__",
    )

    def __init__(self, data, requires_grad: bool = False, dtype=None) -> None:
        self._array = _to_array(data, as_dtype(dtype))
        self._grad = None
        self._requires_grad = False
        self._grad_fn = None
        self._output_nr = 0
        self._counter: VersionCounter | None = None
        self._hooks: list | None = None
        self._tangent = None
        self._view: ViewOf | None = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, array: np.ndarray, grad_fn=None, output_nr: int = 0):
        """Wrap an array without copying or checking (for the engine).

        `chainrule.dispatch.apply_op` makes its results the same way, inline: a slot added
        here must be set there too (a test checks both).
        """
        t = cls.__new__(cls)
        t._array = array
        t._grad = None
        t._requires_grad = grad_fn is not None
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._counter = None
        t._hooks = None
        t._tangent = None
        t._view = None
        return t

    # Array facts.

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple."""
        return self._array.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._array.ndim

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements."""
        return self._array.dtype

    @property
    def device(self) -> device:
        """Where the data lives: always ``chainrule.device("cpu")`` for NumPy arrays."""
        return CPU

    @property
    def grad(self) -> TensorBase | None:
        """The gradient backward accumulated here (leaves, and tensors that `retain_grad`),
        or None. Assigning checks what PyTorch checks: a Tensor (or None) of this tensor's
        shape and dtype, so a wrong gradient fails where it is set, not in the optimizer."""
        return self._grad

    @grad.setter
    def grad(self, value: TensorBase | None) -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise DTypeError(
                    f"grad: assigned grad expected to be a Tensor or None, got "
                    f"{type(value).__name__}"
                )
            if value.shape != self.shape:
                raise ShapeError(
                    f"grad: assigned grad has shape {fmt_shape(value.shape)} but the tensor has "
                    f"shape {fmt_shape(self.shape)}"
                )
            if value.dtype != self.dtype:
                raise DTypeError(
                    f"grad: assigned grad has dtype {fmt_dtype(value.dtype)} but the tensor has "
                    f"dtype {fmt_dtype(self.dtype)}"
                )
        self._grad = value
        if observe.current is not None:
            observe.current.grad_assigned(self, value)

    @property
    def grad_fn(self):
        """The node that made this tensor (None for leaves). A view whose memory changed in
        place since its history was last made takes its base's new history first, as
        PyTorch regenerates a view's ``grad_fn`` on access."""
        current_view(self)
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor (brought up to date for a view, as
        ``grad_fn``). Setting it is `requires_grad_`: leaves of a floating-point dtype only."""
        current_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user rather than by an op on tensors that need grad."""
        return self.grad_fn is None

    @property
    def _base(self) -> TensorBase | None:
        """The tensor whose memory this view shares, as PyTorch's ``_base``; None when this
        tensor is not a view. A view of a view has the first one's base.

        >>> import chainrule
        >>> x = chainrule.zeros(2, 3)
        >>> x[0]._base is x, x.T[1:]._base is x, x._base
        (True, True, None)
        """
        return None if self._view is None else self._view.base

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another one's memory (PyTorch's ``_is_view``)."""
        return self._view is not None

    @property
    def _version(self) -> int:
        return self._version_counter.value

    @property
    def _version_counter(self) -> VersionCounter:
        """Counts in-place changes to this tensor's memory; shared with its views. Made on
        first use: most tensors are never saved for backward, viewed or changed in place."""
        if self._counter is None:
            self._counter = VersionCounter()
        return self._counter

    @_version_counter.setter
    def _version_counter(self, counter: VersionCounter) -> None:
        self._counter = counter

    def size(self, dim: int | None = None):
        """The shape, or the size of dimension ``dim``."""
        return self._array.shape if dim is None else self._array.shape[dim]

    def dim(self) -> int:
        """The number of dimensions."""
        return self._array.ndim

    def numel(self) -> int:
        """The number of elements."""
        return self._array.size

    def item(self) -> float | int | bool:
        """The value of a one-element tensor as a Python number."""
        if self._array.size != 1:
            raise ShapeError(
                f"item: only a one-element tensor has an item, this one has shape "
                f"{fmt_shape(self.shape)}"
            )
        if observe.current is not None:
            observe.current.values_read("item()")
        return self._array.item()

    def tolist(self):
        """The data as (nested) Python lists."""
        if observe.current is not None:
            observe.current.values_read("tolist()")
        return self._array.tolist()

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied). Refused while the tensor requires grad."""
        if self.requires_grad:
            raise GraphError(
                "numpy: this tensor requires grad; call .detach().numpy() to get its data"
            )
        if observe.current is not None:
            observe.current.values_read("numpy()")
        return self._array

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if observe.current is not None:
            observe.current.values_read("NumPy conversion (np.asarray)")
        return np.asarray(self._array) if dtype is None else self._array.astype(dtype)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs, **kwargs):
        """NumPy's hook for ufuncs given a Tensor: writing into plain arrays works, an array on
        the left of an operator gives the Tensor's operator, and any other ufunc is refused.

        A ufunc with ``out=`` plain arrays (``np.subtract(a, t, out=a)``) reads Tensors as
        their arrays, outside autograd. An array or NumPy scalar on the left of
        ``+ - * / ** @`` or a comparison gives the Tensor's reflected operator, so
        ``np.ones(3) + t`` is a Tensor with gradients, as ``t + np.ones(3)`` is.
        ``np.exp(t)`` and the like raise TypeError: call chainrule's function (``t.exp()``),
        or give NumPy ``t.numpy()`` (``t.detach().numpy()`` when it requires grad).

        >>> import chainrule
        >>> w = chainrule.tensor([1.0, 2.0], requires_grad=True)
        >>> np.ones(2, dtype=np.float32) - w
        tensor([ 0., -1.], grad_fn=<SubBackward>)
        >>> a = np.zeros(2, dtype=np.float32)
        >>> np.subtract(a, w, out=a)
        array([-1., -2.], dtype=float32)
        """
        if not kwargs and method == "__call__" and len(inputs) == 2:
            operator = _REFLECTED.get(ufunc)
            if operator is not None and not isinstance(inputs[0], TensorBase):
                return getattr(self, operator)(inputs[0])  # self is inputs[1]
        out = kwargs.get("out")  # NumPy passes out= as a tuple
        if out is not None and all(isinstance(o, np.ndarray) for o in out):
            arrays = [x._array if isinstance(x, TensorBase) else x for x in inputs]
            return getattr(ufunc, method)(*arrays, **kwargs)
        name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if method == "__call__" and hasattr(type(self), ufunc.__name__):
            fix = f"call t.{ufunc.__name__}(...) instead, which records gradients"
        else:
            fix = "compute it with chainrule's ops, which record gradients"
        raise TypeError(
            f"{name}: NumPy ufuncs do not take chainrule Tensors; {fix}, or pass "
            "t.detach().numpy() (t.numpy() when it does not require grad) for a plain array"
        )

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._array)

    def __iter__(self) -> Iterator[TensorBase]:
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self._array)))

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise ShapeError(
                f"bool: a tensor of shape {fmt_shape(self.shape)} has no single truth value; "
                "use .any() or .all()"
            )
        if observe.current is not None:
            observe.current.values_read("bool()")
        return bool(self._array)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __repr__(self) -> str:
        if observe.current is not None:
            observe.current.values_read("printing a tensor")
        data = self._array
        # PyTorch's style: "1." when every value is a whole number, else four fixed decimals
        # (`chainrule.set_printoptions` changes the decimals, line width and summarising).
        finite = data[np.isfinite(data)] if data.dtype.kind == "f" else data
        whole = data.dtype.kind != "f" or bool(np.all(finite == np.round(finite)))
        options = print_options.array2string_args(whole)
        body = np.array2string(data, separator=", ", prefix="tensor(", **options)
        extras = []
        if self.dtype not in (get_default_dtype(), int64, bool_):
            extras.append(f"dtype={self.dtype.name}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # Autograd.

    def requires_grad_(self, requires_grad: bool = True) -> TensorBase:
        """Set ``requires_grad`` in place (leaves only; floating-point dtypes only)."""
        if requires_grad and self._array.dtype.kind != "f":
            raise DTypeError(
                f"requires_grad: only floating-point tensors can require gradients, got "
                f"{fmt_dtype(self.dtype)}; convert with .float() or .double() first"
            )
        if not requires_grad and self.grad_fn is not None:
            raise GraphError(
                "requires_grad: a non-leaf tensor cannot stop requiring grad; use .detach()"
            )
        self._requires_grad = bool(requires_grad)
        return self

    def detach(self) -> TensorBase:
        """The same data (shared) without history: no grad_fn, no requires_grad."""
        t = self._make(self._array)
        t._version_counter = self._version_counter
        if observe.current is not None:
            observe.current.shared(self, t)
        return t

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node.retained is None:
            node.retained = {}
        node.retained[self._output_nr] = weakref.ref(self)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(tensor)`` on this leaf once per backward, after its gradient has been
        added into ``.grad`` (PyTorch's hook for optimizers that step each parameter as soon
        as its gradient is ready). Returns a handle whose ``remove()`` unregisters it.

        >>> import chainrule
        >>> w = chainrule.tensor([1.0, 2.0], requires_grad=True)
        >>> _ = w.register_post_accumulate_grad_hook(lambda t: print(t.grad))
        >>> (w * 3).sum().backward()
        tensor([3., 3.])
        """
        if not self.requires_grad:
            raise GraphError(
                "register_post_accumulate_grad_hook: this tensor does not require grad"
            )
        if self.grad_fn is not None:
            raise GraphError(
                "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                "registered on non-leaf tensors (use register_hook)"
            )
        if self._hooks is None:
            self._hooks = []
        entry = AfterAccumulate(hook)
        self._hooks.append(entry)
        return RemovableHandle(self._hooks, entry)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned Tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise GraphError("register_hook: this tensor does not require grad")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self.grad_fn.hooks is None:
                self.grad_fn.hooks = {}
            hooks = self.grad_fn.hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)
