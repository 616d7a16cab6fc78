"""Shape and indexing methods: memory layout (contiguous, stride), diagonals and triangles,
reading by index (index_select, take_along_dim, masked_select, nonzero) and writing by index
or mask (scatter, index_*, masked_*), each write also in place (the ``_`` forms)."""

from __future__ import annotations

from .. import methods


class IndexingMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    # Memory layout.

    def contiguous(self):
        """This tensor if its memory is row-major (C-contiguous), else a row-major copy."""
        return methods.ops.strided.contiguous(self)

    def is_contiguous(self) -> bool:
        """Whether the elements lie in memory in row-major order without gaps."""
        return bool(self._array.flags.c_contiguous)

    def stride(self, dim: int | None = None):
        """The step in memory, in elements, between neighbours along each dim (or ``dim``)."""
        steps = tuple(s // self._array.itemsize for s in self._array.strides)
        return (
            steps
            if dim is None
            else steps[methods.ops.arguments.check_dim(dim, self.ndim, "stride")]
        )

    def reshape_as(self, other):
        """The same elements in ``other``'s shape."""
        return methods.ops.reshape(self, other.shape)

    # Diagonals, triangles, windows.

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
        """The diagonal over (dim1, dim2) as the last dim, a writable view."""
        return methods.ops.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0):
        """A 1-D tensor as a diagonal matrix, or a matrix's diagonal as a 1-D copy."""
        return methods.ops.diag(self, diagonal)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1):
        """The last dim placed on the diagonal over (dim1, dim2) of a new tensor."""
        return methods.ops.diag_embed(self, offset, dim1, dim2)

    def tril(self, diagonal: int = 0):
        """The lower triangle of the last two dims, zeros above."""
        return methods.ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0):
        """The upper triangle of the last two dims, zeros below."""
        return methods.ops.triu(self, diagonal)

    def unfold(self, dimension: int, size: int, step: int):
        """Windows of ``size`` every ``step`` along ``dimension``, as a new last dim (a view)."""
        return methods.ops.strided.unfold(self, dimension, size, step)

    # Reading by index.

    def repeat_interleave(self, repeats, dim: int | None = None, *, output_size=None):
        """Each element (slice along ``dim``) repeated ``repeats`` times in place."""
        return methods.ops.repeat_interleave(self, repeats, dim, output_size=output_size)

    def index_select(self, dim: int, index):
        """The entries ``index`` (1-D) along ``dim``, a copy."""
        return methods.ops.index_select(self, dim, index)

    def take_along_dim(self, indices, dim: int | None = None):
        """gather after broadcasting self and ``indices`` outside ``dim``."""
        return methods.ops.take_along_dim(self, indices, dim)

    def masked_select(self, mask):
        """The elements where ``mask`` holds, as a 1-D copy."""
        return methods.ops.masked_select(self, mask)

    def nonzero(self, *, as_tuple: bool = False):
        """The positions of the non-zero elements, (n, ndim) int64 (or a tuple of 1-D)."""
        return methods.ops.nonzero(self, as_tuple=as_tuple)

    def argwhere(self):
        """The (n, ndim) int64 positions of the non-zero elements."""
        return methods.ops.argwhere(self)

    # Writing by index or mask: a new tensor, or in place with the trailing underscore.

    def masked_fill(self, mask, value):
        """A copy with ``value`` where ``mask`` holds."""
        return methods.ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask, value):
        """Write ``value`` where ``mask`` holds, in place."""
        return self._inplace(methods.ops.masked_fill, (mask, value), "masked_fill_")

    def masked_scatter(self, mask, source):
        """A copy with source's elements, in order, where ``mask`` holds."""
        return methods.ops.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask, source):
        """Write source's elements, in order, where ``mask`` holds, in place."""
        return self._inplace(methods.ops.masked_scatter, (mask, source), "masked_scatter_")

    def scatter(self, dim: int, index, src=None, *, value=None, reduce=None):
        """A copy with ``src`` (or the number ``value``) written at ``index`` along ``dim``."""
        return methods.ops.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim: int, index, src=None, *, value=None, reduce=None):
        """Write ``src`` (or ``value``) at ``index`` along ``dim``, in place."""
        return self._inplace(
            lambda x, *args: methods.ops.scatter(x, *args, value=value, reduce=reduce),
            (dim, index, src), "scatter_",
        )  # fmt: skip

    def scatter_add(self, dim: int, index, src):
        """A copy with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
        return methods.ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index, src):
        """Add ``src`` at ``index`` along ``dim``, in place."""
        return self._inplace(methods.ops.scatter_add, (dim, index, src), "scatter_add_")

    def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True):
        """A copy with ``src`` reduced (sum, prod, mean, amax, amin) into ``index``."""
        return methods.ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: int, index, src, reduce: str, *, include_self: bool = True):
        """Reduce ``src`` into ``index`` along ``dim``, in place."""
        return self._inplace(
            lambda x, *args: methods.ops.scatter_reduce(x, *args, include_self=include_self),
            (dim, index, src, reduce), "scatter_reduce_",
        )  # fmt: skip

    def index_add(self, dim: int, index, source, *, alpha=1):
        """A copy with ``alpha * source`` added at ``index`` (1-D) along ``dim``."""
        return methods.ops.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index, source, *, alpha=1):
        """Add ``alpha * source`` at ``index`` along ``dim``, in place."""
        return self._inplace(
            lambda x, *args: methods.ops.index_add(x, *args, alpha=alpha), (dim, index, source),
            "index_add_",
        )  # fmt: skip

    def index_copy(self, dim: int, index, source):
        """A copy with source's slices written at ``index`` (1-D) along ``dim``."""
        return methods.ops.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index, source):
        """Write source's slices at ``index`` along ``dim``, in place."""
        return self._inplace(methods.ops.index_copy, (dim, index, source), "index_copy_")

    def index_fill(self, dim: int, index, value):
        """A copy with ``value`` at ``index`` (1-D) along ``dim``."""
        return methods.ops.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index, value):
        """Write ``value`` at ``index`` along ``dim``, in place."""
        return self._inplace(methods.ops.index_fill, (dim, index, value), "index_fill_")

    def index_put(self, indices, values, accumulate: bool = False):
        """A copy with ``values`` written (or added, with accumulate) at ``self[indices]``."""
        return methods.ops.index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate: bool = False):
        """Write (or add) ``values`` at ``self[indices]``, in place."""
        return self._inplace(methods.ops.index_put, (indices, values, accumulate), "index_put_")

    # Rotations, splits, flat reads and writes (`chainrule.ops.shape`, `methods.ops.joining`,
    # `methods.ops.flat_indexing`).

    def rot90(self, k: int = 1, dims=(0, 1)):
        """Turned by 90 degrees ``k`` times in the plane of ``dims``."""
        return methods.ops.rot90(self, k, dims)

    def diagflat(self, offset: int = 0):
        """The flattened tensor on diagonal ``offset`` of a square matrix of zeros."""
        return methods.ops.diagflat(self, offset)

    def tensor_split(self, indices_or_sections, dim: int = 0):
        """Views along ``dim``: a number of nearly equal sections, or split at indices."""
        return methods.ops.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        """`tensor_split` along dim 1 (dim 0 when 1-D); sections must divide evenly."""
        return methods.ops.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        """`tensor_split` along dim 0 (at least 2-D); sections must divide evenly."""
        return methods.ops.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        """`tensor_split` along dim 2 (at least 3-D); sections must divide evenly."""
        return methods.ops.dsplit(self, indices_or_sections)

    def split_with_sizes(self, split_sizes, dim: int = 0):
        """Views along ``dim`` of the given sizes (adding up to that dim)."""
        return methods.ops.split_with_sizes(self, split_sizes, dim)

    def take(self, index):
        """The elements of the flattened tensor at ``index``, in index's shape."""
        return methods.ops.take(self, index)

    def put(self, index, source, accumulate: bool = False):
        """A copy with source written (or added) at ``index`` of the flattened tensor."""
        return methods.ops.put(self, index, source, accumulate)

    def put_(self, index, source, accumulate: bool = False):
        """Write (or add) source at ``index`` of the flattened tensor, in place."""
        return self._inplace(methods.ops.put, (index, source, accumulate), "put_")

    def index_reduce(self, dim: int, index, source, reduce: str, *, include_self: bool = True):
        """A copy with source's slices reduced (prod, mean, amax, amin) into ``index``."""
        return methods.ops.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(self, dim: int, index, source, reduce: str, *, include_self: bool = True):
        """Reduce source's slices into ``index`` along ``dim``, in place."""
        return self._inplace(
            lambda x, *args: methods.ops.index_reduce(x, *args, include_self=include_self),
            (dim, index, source, reduce), "index_reduce_",
        )  # fmt: skip

    def nonzero_static(self, *, size: int, fill_value: int = -1):
        """The first ``size`` non-zero positions, (size, ndim) int64, padded with fill_value."""
        return methods.ops.nonzero_static(self, size=size, fill_value=fill_value)

    def sum_to_size(self, *size):
        """Summed to ``size``, a shape that broadcasts to this tensor's."""
        return methods.ops.shape.sum_to_size(self, *size)
