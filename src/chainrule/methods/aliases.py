"""PyTorch's other names for existing methods (absolute, multiply, greater...), and the
Tensor attributes a PyTorch program reads (nelement, ndimension, retains_grad, mH...)."""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes, methods
from ..errors import DomainError, GraphError, ShapeError, fmt_shape
from ..tensor_base import TensorBase


class AliasMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    # Arithmetic and comparisons under their long names.

    def absolute(self):
        """|self|, elementwise (`abs`)."""
        return methods.ops.abs(self)

    def negative(self):
        """-self, elementwise (`neg`)."""
        return methods.ops.neg(self)

    def positive(self):
        """self itself (unary +); refused for bool tensors, as in PyTorch."""
        return methods.ops.positive(self)

    def multiply(self, other):
        """self * other, broadcasting (`mul`)."""
        return methods.ops.mul(self, other)

    def subtract(self, other, *, alpha=1):
        """self - alpha * other, broadcasting (`sub`)."""
        return methods.ops.subtract(self, other, alpha=alpha)

    def true_divide(self, other):
        """self / other, true division (`div`)."""
        return methods.ops.div(self, other)

    def divide(self, other, *, rounding_mode: str | None = None):
        """self / other, or rounded toward 0 ("trunc") or down ("floor")."""
        return methods.ops.divide(self, other, rounding_mode=rounding_mode)

    def greater(self, other):
        """self > other, elementwise (bool; `gt`)."""
        return methods.ops.gt(self, other)

    def greater_equal(self, other):
        """self >= other, elementwise (bool; `ge`)."""
        return methods.ops.ge(self, other)

    def less(self, other):
        """self < other, elementwise (bool; `lt`)."""
        return methods.ops.lt(self, other)

    def less_equal(self, other):
        """self <= other, elementwise (bool; `le`)."""
        return methods.ops.le(self, other)

    def not_equal(self, other):
        """self != other, elementwise (bool; `ne`)."""
        return methods.ops.ne(self, other)

    # Shapes and orders.

    def moveaxis(self, source, destination):
        """Dimensions moved from ``source`` to ``destination`` (`movedim`)."""
        return methods.ops.movedim(self, source, destination)

    def swapdims(self, dim0: int, dim1: int):
        """Two dimensions swapped (`transpose`)."""
        return methods.ops.transpose(self, dim0, dim1)

    def ravel(self):
        """The elements in one dimension, row-major."""
        return methods.ops.ravel(self)

    def fliplr(self):
        """Dimension 1 reversed (at least 2-D)."""
        return methods.ops.fliplr(self)

    def flipud(self):
        """Dimension 0 reversed (at least 1-D)."""
        return methods.ops.flipud(self)

    def msort(self):
        """Sorted along dimension 0, values only."""
        return methods.ops.msort(self)

    def ger(self, vec2):
        """The outer product with ``vec2`` (`outer`)."""
        return methods.ops.outer(self, vec2)

    def trace(self):
        """The sum of this matrix's main diagonal."""
        return methods.ops.trace(self)

    # Conjugate transposes: chainrule's tensors are real, so these are transposes.

    @property
    def H(self):
        """This matrix transposed (conjugated too, a no-op on real tensors); 2-D only."""
        if self.ndim != 2:
            raise ShapeError(
                f"H: only matrices (2-D) have .H, got shape {fmt_shape(self.shape)}; use .mH "
                "for a batch of matrices"
            )
        return methods.ops.transpose(self, 0, 1)

    @property
    def mH(self):
        """The last two dimensions swapped (conjugated too, a no-op on real tensors)."""
        return self.adjoint()

    def adjoint(self):
        """The last two dimensions swapped (the conjugate transpose of real matrices)."""
        if self.ndim < 2:
            raise ShapeError(
                f"adjoint: needs a matrix or a batch of matrices, got shape {fmt_shape(self.shape)}"
            )
        return methods.ops.transpose(self, -2, -1)

    # Sizes and layout.

    def ndimension(self) -> int:
        """The number of dimensions (`dim`)."""
        return self._array.ndim

    def nelement(self) -> int:
        """The number of elements (`numel`)."""
        return self._array.size

    def dim_order(self, *, ambiguity_check=False) -> tuple[int, ...]:
        """The dimensions from the largest memory step to the smallest (ties in their order),
        as PyTorch's: ``(0, 1, 2)`` for a row-major tensor, ``(1, 0)`` for a transposed
        matrix. ``ambiguity_check=True`` raises when two dimensions share a step, so that
        the order is not unique (a list of memory formats: unless the tensor is contiguous
        and ``contiguous_format`` is in it).

        >>> import chainrule
        >>> x = chainrule.zeros(2, 3, 4)
        >>> x.dim_order(), x.permute(2, 0, 1).dim_order()
        ((0, 1, 2), (1, 2, 0))
        """
        steps = self._array.strides
        order = tuple(sorted(range(self.ndim), key=lambda d: -steps[d]))
        if isinstance(ambiguity_check, (list, tuple)):
            if dtypes.contiguous_format in ambiguity_check and self._array.flags.c_contiguous:
                return order
            raise DomainError(
                "dim_order: this tensor's layout is none of the memory formats given "
                f"{list(ambiguity_check)}"
            )
        if ambiguity_check and len(set(steps)) < len(steps):
            raise DomainError(
                f"dim_order: dimensions share a memory step (strides {self.stride()}), so "
                "the order is not unique"
            )
        return order

    def const_data_ptr(self) -> int:
        """The address of the first element in memory (of the NumPy array's buffer)."""
        return int(self._array.__array_interface__["data"][0])

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` whose elements lie ``stride`` elements apart in memory, in
        this tensor's dtype unless ``dtype``; zeros (see `chainrule.empty`).

        >>> import chainrule
        >>> chainrule.zeros(1).new_empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
        """
        size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
        if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
            raise ShapeError(
                f"new_empty_strided: size {size} and stride {stride} must be as long as each "
                "other and non-negative"
            )
        dtype = self._new_dtype(dtype, "new_empty_strided")
        extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
        memory = np.zeros(extent, dtype)
        steps = tuple(s * memory.itemsize for s in stride)
        array = np.lib.stride_tricks.as_strided(memory, size, steps)
        return self._new_like(array, requires_grad, device, "new_empty_strided")

    # Autograd facts.

    @property
    def retains_grad(self) -> bool:
        """Whether this non-leaf tensor keeps ``.grad`` after backward (`retain_grad` was
        called); False for leaves, which always do."""
        node = self.grad_fn
        if node is None or not node.retained:
            return False
        kept = node.retained.get(self._output_nr)
        return kept is not None and kept() is self

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr

    @property
    def grad_dtype(self):
        """The dtype ``.grad`` has: this tensor's (leaves only, as in PyTorch; chainrule
        cannot set another, which PyTorch allows)."""
        if self.grad_fn is not None:
            raise GraphError("grad_dtype: can only be read on leaf tensors")
        return self.dtype

    @property
    def volatile(self) -> bool:
        """False, with PyTorch's warning: ``volatile`` was removed (use ``no_grad``)."""
        warnings.warn(
            "volatile was removed (Variable.volatile is always False); use chainrule.no_grad",
            UserWarning,
            stacklevel=2,
        )
        return False

    def as_subclass(self, cls):
        """This tensor as an instance of ``cls`` (a Tensor subclass), sharing its memory and
        staying in the graph, as an alias of it.

        >>> import chainrule
        >>> p = chainrule.ones(2).as_subclass(chainrule.nn.Parameter)
        >>> type(p).__name__
        'Parameter'
        """
        if not (isinstance(cls, type) and issubclass(cls, TensorBase)):
            raise TypeError(
                f"as_subclass: {cls!r} does not inherit from chainrule.Tensor; only Tensor "
                "subclasses can hold a tensor"
            )
        alias = methods.ops.reshape(self, self.shape) if self.requires_grad else self.detach()
        out = cls.__new__(cls)
        for slot in TensorBase.__slots__:
            if slot != "__weakref__":
                setattr(out, slot, getattr(alias, slot))
        return out

    def module_load(self, other, assign: bool = False):
        """What `chainrule.nn.Module.load_state_dict` makes of ``other`` for this parameter
        or buffer: ``other`` detached with ``assign``, else this tensor with ``other``'s
        values copied in, detached (a new object either way)."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    # What PyTorch tensors have that chainrule's never need.

    @property
    def name(self) -> None:
        """None: chainrule has no named tensors."""
        return None

    @property
    def is_nested(self) -> bool:
        """False: chainrule has no nested (ragged) tensors."""
        return False

    @property
    def is_xla(self) -> bool:
        """False: chainrule's tensors live on the CPU."""
        return False

    @property
    def is_maia(self) -> bool:
        """False: chainrule's tensors live on the CPU."""
        return False

    @property
    def is_mtia(self) -> bool:
        """False: chainrule's tensors live on the CPU."""
        return False

    def bfloat16(self, memory_format=None):
        """Refused: NumPy cannot hold bfloat16 (the error ``to(chainrule.bfloat16)`` gives)."""
        raise dtypes.bfloat16.refuse("bfloat16")

    # Random draws with this tensor as the weights or probabilities.

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None):
        """Category indices drawn from the weights in each row (`chainrule.multinomial`)."""
        return methods.ops.sampling.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        """0 or 1 for each element, 1 with probability self (or ``p``)."""
        return methods.ops.sampling.bernoulli(self, p, generator=generator)
