"""Cases for chainrule/ops/shape.py, joining.py, indexing.py, strided.py and padding.py:
reshaping, copying, indexing, joining and splitting, padding."""

import numpy as np
import torch
import torch.nn.functional as TF
from cases import Case
from hypothesis import strategies as st
from strategies import away_from_zero, fixed, one, same, shapes

import chainrule
from chainrule.ops import indexing, strided


def joinable(n, dim):
    """n shapes (1-3 dims) equal except along ``dim``, as cat needs."""

    def vary(shape):
        d = dim % len(shape)
        sides = st.lists(st.integers(1, 3), min_size=n, max_size=n)
        return sides.map(lambda ks: tuple(shape[:d] + (k,) + shape[d + 1 :] for k in ks))

    return shapes(min_dims=1).flatmap(vary)


def with_rows(rows, min_dims=1, max_dims=3, extra=()):
    """A shape whose first dim is ``rows``, plus ``extra`` shapes built from its tail."""
    tails = shapes(min_dims=min_dims - 1, max_dims=max_dims - 1)
    return tails.map(lambda t: ((rows, *t), *(f(t) for f in extra)))


def gather_index(shape, dim):
    """A valid int64 index for gather along ``dim``, with repeats; smaller in the other dims."""
    dim = dim % len(shape)
    index_shape = tuple(3 if d == dim else max(n - 1, 1) for d, n in enumerate(shape))
    size = int(np.prod(index_shape))
    return ((np.arange(size) * 5 + 1) % shape[dim]).reshape(index_shape)


def put_slice(x, v):
    y = x * 1
    y[1:3] = v
    return y


def put_list(x, v):
    y = x * 1
    y[[0, -1]] = v
    return y


def put_mask(x):
    y = x * 1
    y[x > 0] = 0.5
    return y


def basic_scatter(x):
    """getitem's backward row directly: zeros of (4, n) with x written into rows 1:3."""
    return indexing.getitem_backward_row(x, shape=(4, x.shape[1]), index=(slice(1, 3),))


def torch_basic_scatter(x):
    return torch.zeros(4, x.shape[1], dtype=x.dtype).slice_scatter(x, 0, 1, 3)


REPEATED = np.array([0, 2, 0, 0])


def repeated_scatter(x):
    """index's backward row directly: x added into rows 0, 2, 0, 0 of a (3, n) zeros."""
    return indexing.index_backward_row(x, shape=(3, x.shape[1]), index=(REPEATED,))


def torch_repeated_scatter(x):
    zeros = torch.zeros(3, x.shape[1], dtype=x.dtype)
    return zeros.index_put((torch.tensor(REPEATED),), x, accumulate=True)


def copy_slices(x, y):
    """copy_slices directly: x with y written into x.T[1:3, 0] (the steps of a real view)."""
    steps = chainrule.zeros(*x.shape).T[1:3, 0]._view.steps
    return indexing.copy_slices_row(x, y, steps=steps)


def torch_copy_slices(x, y):
    out = x.clone()
    out.T[1:3, 0] = y
    return out


def mul_into_view(x, y):
    """An in-place op through two views: the base's history is rewritten (both libraries)."""
    z = x * 1
    z.T[1:3, 0].mul_(y)
    return z


def add_into_reshaped(x, y):
    """In place through a reshape view and a slice, then the base and the view used again."""
    z = x * 1
    flat = z.view(-1)
    flat[1:3].add_(y * y)
    return z * flat.view(z.shape)


def several(n, min_dims=0, max_dims=2):
    """n shapes of min_dims .. max_dims dims each, drawn independently."""
    return st.tuples(*[shapes(min_dims, max_dims) for _ in range(n)])


CASES = {
    "copy_slices": Case(copy_slices, fixed((3, 4), (2,)), torch_fn=torch_copy_slices),
    "copy_slices[mul_]": Case(mul_into_view, fixed((3, 4), (2,))),
    "copy_slices[reshape]": Case(add_into_reshaped, fixed((2, 3), (2,))),
    "reshape": Case(lambda x: x.reshape(-1)),
    "reshape[2d]": Case(lambda x: x.reshape(3, -1), fixed((2, 3, 2))),
    "permute": Case(lambda x: x.permute(2, 0, 1), one(3, 3)),
    "permute[mT]": Case(lambda x: x.mT, one(2, 3)),
    "transpose": Case(lambda x: x.transpose(0, -1), one(1, 3)),
    "expand": Case(lambda x: x.expand(2, *x.shape)),
    "expand[-1]": Case(lambda x: x.expand(-1, 4, 3), fixed((2, 1, 1))),
    "broadcast_to": Case(lambda lib, x: lib.broadcast_to(x, (2, *x.shape)), needs_lib=True),
    "flatten": Case(lambda x: x.flatten()),
    "flatten[range]": Case(lambda x: x.flatten(1, -1), one(2, 3)),
    "unflatten": Case(lambda x: x.unflatten(0, (2, -1)), fixed((6, 2))),
    "squeeze": Case(lambda x: x.squeeze(), one(max_side=2)),
    "squeeze[dim]": Case(lambda x: x.squeeze(0), one(1, 3, max_side=2)),
    "squeeze[tuple]": Case(lambda x: x.squeeze((0, -1)), one(2, 3, max_side=2)),
    "unsqueeze": Case(lambda x: x.unsqueeze(-1)),
    "unsqueeze[0]": Case(lambda x: x.unsqueeze(0)),
    "tile": Case(lambda x: x.tile(2, 3)),
    "repeat": Case(lambda x: x.repeat(2, 1, 1, 3)),
    "flip": Case(lambda x: x.flip(0), one(1, 3)),
    "flip[dims]": Case(lambda x: x.flip((0, -1)), one(2, 3)),
    "roll": Case(lambda x: x.roll(1, 0), one(1, 3)),
    "roll[dims]": Case(lambda x: x.roll((1, -2), (0, -1)), one(2, 3)),
    "roll[flat]": Case(lambda x: x.roll(3)),
    "getitem[basic]": Case(lambda x: x[1:, ::2], one(2, 3)),
    "getitem[int]": Case(lambda x: x[-1], one(1, 3)),
    "getitem[none_ellipsis]": Case(lambda x: x[None, ..., 0], one(1, 3)),
    "getitem_backward": Case(basic_scatter, fixed((2, 3)), torch_fn=torch_basic_scatter),
    "index[list]": Case(lambda x: x[[0, -1]], one(1, 3)),
    "index[tensor]": Case(
        lambda lib, x: x[..., lib.tensor([1, 0, -1])], one(1, 3, min_side=2), needs_lib=True
    ),
    "index[repeated]": Case(lambda x: x[[0, 0, -1, 0]], one(1, 3)),
    "index[mask]": Case(lambda x: x[x > 0], domain=(away_from_zero(),)),
    "index[mask_rows]": Case(
        lambda lib, x: x[lib.tensor([True, False, True])], with_rows(3), needs_lib=True
    ),
    # PyTorch selects the int first: shape (n, 3), where NumPy alone would give (3, n).
    "index[mixed]": Case(lambda x: x[0, :, [1, 0, 1]], one(3, 3, min_side=2)),
    "index[separated]": Case(lambda x: x[[0, 1, 1], :, [1, 1, 0]], one(3, 3, min_side=2)),
    "index_backward": Case(repeated_scatter, fixed((4, 3)), torch_fn=torch_repeated_scatter),
    "index_put": Case(put_slice, with_rows(4, 2, extra=(lambda t: t,))),
    "index_put[rows]": Case(put_slice, with_rows(3, 2, extra=(lambda t: (2, *t),))),
    "index_put[list]": Case(put_list, with_rows(2, 1, extra=(lambda t: (1,),))),
    "index_put[mask]": Case(put_mask, domain=(away_from_zero(),)),
    "cat": Case(lambda lib, x, y: lib.cat([x, y]), joinable(2, 0), needs_lib=True),
    "cat[3]": Case(
        lambda lib, x, y, z: lib.cat([x, y, z], dim=-1), joinable(3, -1), needs_lib=True
    ),  # fmt: skip
    "cat[some_grad]": Case(
        lambda lib, x, y: lib.cat([x, y], 0), joinable(2, 0), needs_lib=True, grad_inputs=(1,)
    ),
    "stack": Case(lambda lib, x, y: lib.stack([x, y]), same(2), needs_lib=True),
    "stack[3]": Case(
        lambda lib, x, y, z: lib.stack([x, y, z], dim=-1), same(3), needs_lib=True
    ),  # fmt: skip
    "split": Case(lambda x: x.split(2, 0), one(1, 3)),
    "split[sections]": Case(lambda x: x.split([1, 2], -1), fixed((2, 3))),
    "chunk": Case(lambda x: x.chunk(2, -1), one(1, 3)),
    "narrow": Case(lambda x: x.narrow(-1, 1, 2), fixed((2, 3))),
    "select": Case(lambda x: x.select(1, -1), fixed((2, 3, 2))),
    "unbind": Case(lambda x: x.unbind(1), fixed((2, 3))),
    "movedim": Case(lambda x: x.movedim((0, 1), (2, 0)), fixed((2, 3, 2))),
    "swapaxes": Case(lambda x: x.swapaxes(0, -1), fixed((2, 3, 2))),
    "t": Case(lambda x: x.t(), one(1, 2)),
    "pad": Case(
        lambda x: chainrule.pad(x, (1, 2)), one(1, 3), torch_fn=lambda x: TF.pad(x, (1, 2))
    ),  # fmt: skip
    "pad[value]": Case(
        lambda x: chainrule.pad(x, (1, 0, 0, 2), value=0.5),
        one(2, 3),
        torch_fn=lambda x: TF.pad(x, (1, 0, 0, 2), value=0.5),
    ),
    "pad[negative]": Case(
        lambda x: chainrule.pad(x, (-1, 1)),
        one(1, 3, min_side=2),
        torch_fn=lambda x: TF.pad(x, (-1, 1)),
    ),
    "index[pad_reflect]": Case(
        lambda x: chainrule.pad(x, (2, 1), mode="reflect"),
        one(2, 3, min_side=3),
        torch_fn=lambda x: TF.pad(x, (2, 1), mode="reflect"),
    ),
    "index[pad_replicate]": Case(
        lambda x: chainrule.pad(x, (1, 2, 0, 1), mode="replicate"),
        one(3, 3),
        torch_fn=lambda x: TF.pad(x, (1, 2, 0, 1), mode="replicate"),
    ),
    "index[pad_circular]": Case(
        lambda x: chainrule.pad(x, (1, 1), mode="circular"),
        one(2, 3),
        torch_fn=lambda x: TF.pad(x, (1, 1), mode="circular"),
    ),
    "gather": Case(
        lambda lib, x: x.gather(-1, lib.tensor(gather_index(tuple(x.shape), -1))),
        one(1, 3),
        needs_lib=True,
    ),
    "gather[0]": Case(
        lambda lib, x: x.gather(0, lib.tensor(gather_index(tuple(x.shape), 0))),
        one(2, 3),
        needs_lib=True,
    ),
}


# chainrule/ops/strided.py (diagonals, windows, triangles) and chainrule/ops/joining.py.


def windows_backward(g):
    """The windows' backward row directly: (2, 3, 2) windows added back into (2, 4)."""
    return strided.windows_backward_row(g, shape=(2, 4), dim=1, size=2, step=1)


def write_diagonal(x, y):
    """An in-place write into x's diagonal view lands in x (both libraries)."""
    z = x * 1
    z.diagonal().mul_(y)
    return z


CASES.update(
    {
        "diagonal": Case(lambda x: x.diagonal(), one(2, 3)),
        "diagonal[offset]": Case(lambda x: x.diagonal(1, 0, 2), one(3, 3)),
        "diagonal[below]": Case(lambda x: x.diagonal(-1, -1, 0), one(2, 3)),
        "diagonal[diag]": Case(lambda x: x.diag(-1), one(2, 2)),
        "copy_slices[diagonal]": Case(write_diagonal, fixed((3, 4), (3,))),
        "diag_embed": Case(
            lambda lib, x: lib.diag_embed(x, 1, 0, 2), one(2, 3), needs_lib=True
        ),  # fmt: skip
        "diag_embed[default]": Case(lambda x: x.diag_embed(), one(1, 3)),
        "diag_embed[diag]": Case(lambda x: x.diag(1), one(1, 1)),
        "windows": Case(lambda x: x.unfold(-1, 2, 1), one(1, 3, min_side=2)),
        "windows[step]": Case(lambda x: x.unfold(0, 2, 3), one(1, 3, min_side=2)),
        "windows_backward": Case(
            windows_backward,
            fixed((2, 3, 2)),
            torch_fn=lambda g: torch.ops.aten.unfold_backward(g, [2, 4], 1, 2, 1),
        ),
        "contiguous": Case(lambda x: x.mT.contiguous(), one(2, 3, min_side=2)),
        "where[tril]": Case(lambda x: x.tril(), one(2, 3)),
        "where[tril_offset]": Case(lambda x: x.tril(-1), one(2, 3)),
        "where[triu]": Case(lambda x: x.triu(1), one(2, 3)),
        "reshape[reshape_as]": Case(
            lambda x, y: x.reshape_as(y), fixed((2, 3), (3, 2)), grad_inputs=(0,)
        ),  # fmt: skip
        "cat[hstack]": Case(lambda lib, x, y: lib.hstack([x, y]), same(2, 1), needs_lib=True),
        "cat[hstack_1d]": Case(
            lambda lib, x, y: lib.hstack([x, y]), fixed((2,), (3,)), needs_lib=True
        ),  # fmt: skip
        "cat[vstack]": Case(lambda lib, x, y: lib.vstack([x, y]), same(2), needs_lib=True),
        "cat[dstack]": Case(lambda lib, x, y: lib.dstack([x, y]), same(2), needs_lib=True),
        "cat[column_stack]": Case(
            lambda lib, x, y: lib.column_stack([x, y]), fixed((3,), (3, 2)), needs_lib=True
        ),
        "cat[concat]": Case(
            lambda lib, x, y: lib.concat([x, y], dim=0), fixed((2, 3), (1, 3)), needs_lib=True
        ),
        "expand[broadcast_tensors]": Case(
            lambda lib, x, y: lib.broadcast_tensors(x, y), fixed((2, 1), (3,)), needs_lib=True
        ),
        "expand[meshgrid]": Case(
            lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"),
            fixed((2,), (3,)),
            needs_lib=True,
        ),  # fmt: skip
        "expand[meshgrid_xy]": Case(
            lambda lib, x, y, z: lib.meshgrid(x, y, z, indexing="xy"),
            fixed((2,), (3,), (4,)),
            needs_lib=True,
        ),
    }
)


# Turns, at least n dims and sums to a size (chainrule/ops/shape.py).
CASES.update({
    "rot90": Case(lambda x: x.rot90(), one(2)),
    "rot90[k3_dims]": Case(lambda x: x.rot90(3, (-1, 0)), one(2, 3)),
    "rot90[half_turn]": Case(lambda x: x.rot90(2, (1, 2)), one(3, 3)),
    "rot90[negative]": Case(lambda lib, x: lib.rot90(x, -1, [1, 0]), one(2), needs_lib=True),
    "atleast_1d": Case(lambda lib, x: lib.atleast_1d(x), one(0, 2), needs_lib=True),
    "atleast_2d": Case(lambda lib, x, y: lib.atleast_2d(x, y), several(2, 0, 3), needs_lib=True),
    "atleast_3d": Case(lambda lib, x, y: lib.atleast_3d([x, y]), several(2, 0, 3), needs_lib=True),
    "sum_to_size": Case(lambda x: x.sum_to_size(3, 1), fixed((2, 3, 4))),
    "sum_to_size[tuple]": Case(lambda x: x.sum_to_size((1, 1, 4)), fixed((2, 3, 4))),
})  # fmt: skip


# Splitting and combining (chainrule/ops/joining.py).
CASES.update({
    "tensor_split": Case(lambda x: x.tensor_split(3, dim=-1), one(1)),
    "tensor_split[indices]": Case(
        lambda lib, x: lib.tensor_split(x, [1, -1]), one(1), needs_lib=True
    ),
    "tensor_split[tensor]": Case(
        lambda lib, x: x.tensor_split(lib.tensor([3, 1]), -1), one(1), needs_lib=True
    ),
    "hsplit": Case(lambda x: x.hsplit(2), fixed((3, 4))),
    "hsplit[vector]": Case(lambda lib, x: lib.hsplit(x, [1, 2]), one(1, 1), needs_lib=True),
    "vsplit": Case(lambda x: x.vsplit([1]), one(2, 3)),
    "dsplit": Case(lambda lib, x: lib.dsplit(x, 2), fixed((2, 1, 4)), needs_lib=True),
    "split_with_sizes": Case(lambda x: x.split_with_sizes([2, 0, 3], 1), fixed((2, 5))),
    "cartesian_prod": Case(
        lambda lib, x, y: lib.cartesian_prod(x, y), several(2, 1, 1), needs_lib=True
    ),
    "cartesian_prod[three]": Case(
        lambda lib, *xs: lib.cartesian_prod(*xs), several(3, 1, 1), needs_lib=True
    ),
    "combinations": Case(lambda lib, x: lib.combinations(x), one(1, 1), needs_lib=True),
    "combinations[r3_replacement]": Case(
        lambda lib, x: lib.combinations(x, 3, True), one(1, 1, max_side=3), needs_lib=True
    ),
})  # fmt: skip


# NumPy-style names (chainrule/ops/shape.py).
CASES.update({
    "ravel": Case(lambda x: x.ravel()),
    "fliplr": Case(lambda x: x.fliplr(), one(min_dims=2)),
    "flipud": Case(lambda x: x.flipud(), one(min_dims=1)),
})  # fmt: skip
