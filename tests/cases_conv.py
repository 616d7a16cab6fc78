"""Cases for chainrule/ops/conv.py, pooling.py and grid.py: the unfold,
fold, tiles and untiles rows, and the convolution, pooling, unpooling and grid-sampling
functions composed from rows. Shapes stay small: gradgradcheck perturbs every element."""

import numpy as np
from cases import Case
from hypothesis import strategies as st
from strategies import distinct, positive, reals

import chainrule
from chainrule.ops import pooling


def functional(lib):
    """Where each library keeps these functions: chainrule.nn.functional (the rows of
    chainrule.ops.conv and chainrule.ops.pooling), torch.nn.functional."""
    return chainrule.nn.functional if lib is chainrule else lib.nn.functional


def conv_shapes(spatial=2, groups=1, spans=(1, 3), padding=0, bias=True, batched=True):
    """(input, weight[, bias]) shapes for a convolution: 1-2 channels per group, kernels of
    ``spans`` sizes, inputs at least as large as a kernel spans after ``padding``."""
    kernels = st.tuples(*[st.integers(*spans)] * spatial)
    extras = st.tuples(*[st.integers(0, 2)] * spatial)

    def build(drawn):
        n, in_per_group, out_per_group, kernel, extra = drawn
        sizes = tuple(max(k - 2 * padding, 1) + e for k, e in zip(kernel, extra))
        lead = (n, in_per_group * groups) if batched else (in_per_group * groups,)
        out_channels = out_per_group * groups
        shapes = ((*lead, *sizes), (out_channels, in_per_group, *kernel))
        return shapes + ((out_channels,),) if bias else shapes

    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), kernels,
                     extras).map(build)  # fmt: skip


def image_shapes(min_side=1, max_side=4, batched=True):
    """One (N, C, H, W) shape, or (C, H, W) when not ``batched``."""
    sides = st.integers(min_side, max_side)
    lead = st.tuples(*[st.integers(1, 2)] * (2 if batched else 1))
    return st.tuples(lead, sides, sides).map(lambda d: ((*d[0], d[1], d[2]),))


def dilated_shapes():
    """conv2d shapes for stride 2, padding 1, dilation 2, 2 groups: kernels 1-2 wide."""

    def build(drawn):
        n, in_per_group, out_per_group, (kh, kw), (eh, ew) = drawn
        sizes = (max(2 * kh - 1 - 2, 1) + eh, max(2 * kw - 1 - 2, 1) + ew)
        return ((n, 2 * in_per_group, *sizes), (2 * out_per_group, in_per_group, kh, kw),
                (2 * out_per_group,))  # fmt: skip

    pair = st.tuples(st.integers(1, 2), st.integers(1, 2))
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), pair,
                     st.tuples(st.integers(0, 2), st.integers(0, 2))).map(build)  # fmt: skip


def fold_shapes():
    """(N, C*kH*kW, L) columns for fold to (3, 4) with a (2, 2) kernel, dilation (1, 2),
    padding 1 and stride (2, 1): 2 x 4 windows."""
    return st.tuples(st.integers(1, 2), st.integers(1, 2)).map(lambda d: ((d[0], 4 * d[1], 8),))


def tiles_torch(x, kernel_size):
    """PyTorch's spelling of the tiles row: crop to whole tiles, then reshape and permute."""
    (kh, kw), (n, c, h, w) = kernel_size, x.shape
    grid = x[:, :, : h // kh * kh, : w // kw * kw].reshape(n, c, h // kh, kh, w // kw, kw)
    return grid.permute(3, 5, 0, 1, 2, 4).reshape(kh * kw, n, c, h // kh, w // kw)


def untiles_size(slabs_shape):
    """An (N, C, H, W) output for untiles with a (2, 1) kernel: one row past the tiles."""
    _, n, c, oh, ow = slabs_shape
    return (n, c, 2 * oh + 1, ow)


def untiles_torch(t, kernel_size, output_size):
    """PyTorch's spelling of the untiles row: tiles back in place, zeros after them."""
    import torch

    (kh, kw), (_, n, c, oh, ow) = kernel_size, t.shape
    image = t.reshape(kh, kw, n, c, oh, ow).permute(2, 3, 4, 0, 5, 1).reshape(n, c, oh * kh, -1)
    h, w = output_size[2:]
    return torch.nn.functional.pad(image, (0, w - ow * kw, 0, h - oh * kh))


def slab_shapes():
    """(kH*kW, N, C, oH, oW) slabs for untiles with a (2, 1) kernel."""
    sides = st.integers(1, 2)
    return st.tuples(sides, sides, sides, sides).map(lambda d: ((2, *d),))


def small_conv_shapes(spatial, transposed=False, groups=1):
    """(input, weight, bias) shapes with 1-2 channels per group, kernels 1-2 wide and inputs
    1-2 larger than a kernel: small, because gradgradcheck perturbs every element."""

    def build(drawn):
        n, cin, cout, kernel, extra = drawn
        sizes = tuple(k + e for k, e in zip(kernel, extra))
        weight = (cin * groups, cout, *kernel) if transposed else (cout * groups, cin, *kernel)
        return ((n, cin * groups, *sizes), weight, (cout * groups,))

    pair = st.tuples(*[st.integers(1, 2)] * spatial)
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), pair,
                     st.tuples(*[st.integers(0, 1)] * spatial)).map(build)  # fmt: skip


def signal_shapes(min_length=1, max_length=5):
    """One (N, C, L) shape."""
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(min_length, max_length)).map(
        lambda d: (d,)
    )


def volume_shapes(min_side=1, max_side=3, batched=True):
    """One (N, C, D, H, W) shape, or (C, D, H, W) when not ``batched``."""
    sides = st.integers(min_side, max_side)
    lead = st.tuples(*[st.integers(1, 2)] * (2 if batched else 1))
    return st.tuples(lead, sides, sides, sides).map(lambda d: ((*d[0], *d[1:]),))


def off_pixels(sizes):
    """Normalised grid coordinates in [-1.2, 1.2] that stay off pixel centres of an image side
    of any of ``sizes`` (align_corners=False): bilinear weights have kinks there."""

    def clear(g):
        return all(abs(x - round(x)) > 0.02 for x in (((g + 1) * s - 1) / 2 for s in sizes))

    return reals(-1.2, 1.2).filter(clear)


def grid_shapes(sizes):
    """(input, grid) shapes for grid_sample on an image of spatial ``sizes``."""
    n = len(sizes)
    sides = st.tuples(*[st.integers(1, 2)] * n)
    return st.tuples(st.integers(1, 2), st.integers(1, 2), sides).map(
        lambda d: ((d[0], d[1], *sizes), (d[0], *d[2], n))
    )


# Fixed window offsets for fractional max pooling, (N, C, 3) for N, C <= 2.
SAMPLES = np.array([[[0.3, 0.8, 0.5], [0.9, 0.1, 0.6]], [[0.5, 0.5, 0.2], [0.05, 0.7, 0.95]]])


def fractional(lib, x, n):
    samples = lib.tensor(SAMPLES[: x.shape[0], : x.shape[1], :n])
    pool = getattr(functional(lib), f"fractional_max_pool{n}d")
    return pool(x, 2, output_size=(2,) * n, _random_samples=samples)


def unpooled(lib, x, n):
    """max_pool{n}d with indices, then max_unpool{n}d back to x's size."""
    f = functional(lib)
    values, indices = getattr(f, f"max_pool{n}d")(x, 2, return_indices=True)
    return getattr(f, f"max_unpool{n}d")(values, indices, 2, output_size=x.shape[-n:])


CASES = {
    "tiles": Case(
        lambda x: pooling.tiles_row(x, kernel_size=(2, 1)),
        image_shapes(min_side=2, max_side=5),
        torch_fn=lambda x: tiles_torch(x, (2, 1)),
    ),
    "untiles": Case(
        lambda t: pooling.untiles_row(t, kernel_size=(2, 1), output_size=untiles_size(t.shape)),
        slab_shapes(),
        torch_fn=lambda t: untiles_torch(t, (2, 1), untiles_size(t.shape)),
    ),
    "unfold": Case(
        lambda lib, x: functional(lib).unfold(x, (2, 2), dilation=(1, 2), padding=1, stride=(2, 1)),
        image_shapes(),
        needs_lib=True,
    ),
    "fold": Case(
        lambda lib, x: functional(lib).fold(
            x, (3, 4), (2, 2), dilation=(1, 2), padding=1, stride=(2, 1)
        ),
        fold_shapes(),
        needs_lib=True,
    ),
    "conv2d": Case(
        lambda lib, x, w, b: functional(lib).conv2d(x, w, b), conv_shapes(), needs_lib=True
    ),
    "conv2d[strided_dilated_grouped]": Case(
        lambda lib, x, w, b: functional(lib).conv2d(
            x, w, b, stride=2, padding=1, dilation=2, groups=2
        ),
        dilated_shapes(),
        needs_lib=True,
    ),
    "conv2d[same_unbatched]": Case(
        lambda lib, x, w: functional(lib).conv2d(x, w, padding="same"),
        conv_shapes(bias=False, batched=False),
        needs_lib=True,
    ),
    "conv1d": Case(
        lambda lib, x, w, b: functional(lib).conv1d(x, w, b, stride=2, padding=1, groups=2),
        conv_shapes(spatial=1, groups=2, padding=1),
        needs_lib=True,
    ),
    "max_pool2d": Case(
        lambda lib, x: functional(lib).max_pool2d(x, 2, stride=1, padding=1),
        image_shapes(),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "max_pool2d[tiles]": Case(  # stride = kernel: windows tile the input (odd sides crop)
        lambda lib, x: functional(lib).max_pool2d(x, (2, 1)),
        image_shapes(min_side=2, max_side=5),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "max_pool2d[ceil_dilated_unbatched]": Case(
        lambda lib, x: functional(lib).max_pool2d(
            x, (3, 2), stride=2, padding=1, dilation=(1, 2), ceil_mode=True
        ),
        image_shapes(min_side=3, max_side=5, batched=False),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "avg_pool2d": Case(
        lambda lib, x: functional(lib).avg_pool2d(x, 2, stride=1),
        image_shapes(min_side=2),
        needs_lib=True,
    ),
    "avg_pool2d[ceil_exclude_pad]": Case(
        lambda lib, x: functional(lib).avg_pool2d(
            x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False
        ),
        image_shapes(min_side=2, max_side=5),
        needs_lib=True,
    ),
    "adaptive_avg_pool2d": Case(
        lambda lib, x: functional(lib).adaptive_avg_pool2d(x, (2, 3)),
        image_shapes(),
        needs_lib=True,
    ),
    "conv3d": Case(
        lambda lib, x, w, b: functional(lib).conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 0)),
        small_conv_shapes(3),
        needs_lib=True,
    ),
    "conv_transpose2d": Case(
        lambda lib, x, w, b: functional(lib).conv_transpose2d(
            x, w, b, stride=2, output_padding=1, dilation=(1, 2)
        ),
        small_conv_shapes(2, transposed=True),
        needs_lib=True,
    ),
    "conv_transpose1d": Case(
        lambda lib, x, w, b: functional(lib).conv_transpose1d(x, w, b, stride=1, groups=2),
        small_conv_shapes(1, transposed=True, groups=2),
        needs_lib=True,
    ),
    "max_pool1d": Case(
        lambda lib, x: functional(lib).max_pool1d(x, 2, stride=1, padding=1),
        signal_shapes(),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "avg_pool1d": Case(
        lambda lib, x: functional(lib).avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True),
        signal_shapes(min_length=2),
        needs_lib=True,
    ),
    "adaptive_avg_pool1d": Case(
        lambda lib, x: functional(lib).adaptive_avg_pool1d(x, 3), signal_shapes(), needs_lib=True
    ),
    "adaptive_max_pool1d": Case(
        lambda lib, x: functional(lib).adaptive_max_pool1d(x, 2),
        signal_shapes(),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "adaptive_max_pool2d": Case(
        lambda lib, x: functional(lib).adaptive_max_pool2d(x, (2, 3)),
        image_shapes(),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "max_pool3d": Case(
        lambda lib, x: functional(lib).max_pool3d(
            x, (2, 2, 1), stride=(1, 2, 1), padding=(1, 0, 0), ceil_mode=True
        ),
        volume_shapes(min_side=2),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "max_pool3d[dilated_unbatched]": Case(
        lambda lib, x: functional(lib).max_pool3d(x, 2, stride=1, dilation=(1, 2, 1)),
        volume_shapes(min_side=3, batched=False),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "avg_pool3d": Case(
        lambda lib, x: functional(lib).avg_pool3d(
            x, 2, stride=(1, 2, 1), padding=1, ceil_mode=True, count_include_pad=False
        ),
        volume_shapes(min_side=2),
        needs_lib=True,
    ),
    "adaptive_avg_pool3d": Case(
        lambda lib, x: functional(lib).adaptive_avg_pool3d(x, (2, None, 1)),
        volume_shapes(),
        needs_lib=True,
    ),
    "adaptive_max_pool3d": Case(
        lambda lib, x: functional(lib).adaptive_max_pool3d(x, (2, 1, 2)),
        volume_shapes(),
        domain=(distinct(),),
        needs_lib=True,
    ),
    "lp_pool1d": Case(
        lambda lib, x: functional(lib).lp_pool1d(x, 3, 2, stride=1),
        signal_shapes(min_length=2),
        domain=(positive(),),
        needs_lib=True,
    ),
    "lp_pool2d": Case(
        lambda lib, x: functional(lib).lp_pool2d(x, 2, (2, 1), ceil_mode=True),
        image_shapes(min_side=2),
        domain=(positive(),),
        needs_lib=True,
    ),
    "lp_pool3d": Case(
        lambda lib, x: functional(lib).lp_pool3d(x, 1.5, 2, stride=1),
        volume_shapes(min_side=2),
        domain=(positive(),),
        needs_lib=True,
    ),
    "conv_transpose3d": Case(
        lambda lib, x, w, b: functional(lib).conv_transpose3d(
            x, w, b, stride=(2, 1, 1), output_padding=(1, 0, 0)
        ),
        small_conv_shapes(3, transposed=True),
        needs_lib=True,
    ),
    "conv_transpose3d[grouped_dilated]": Case(
        lambda lib, x, w: functional(lib).conv_transpose3d(x, w, groups=2, dilation=(1, 2, 1)),
        small_conv_shapes(3, transposed=True, groups=2).map(lambda s: s[:2]),
        needs_lib=True,
    ),
    "channel_shuffle": Case(
        lambda lib, x: functional(lib).channel_shuffle(x, 2),
        st.tuples(st.integers(1, 2), st.sampled_from([2, 4, 6]), st.integers(1, 3)).map(
            lambda d: (d,)
        ),
        needs_lib=True,
    ),
    "local_response_norm": Case(
        lambda lib, x: functional(lib).local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.5),
        signal_shapes(),
        needs_lib=True,
    ),
    "max_unpool1d": Case(
        lambda lib, x: unpooled(lib, x, 1),
        signal_shapes(min_length=2),
        domain=(distinct(),),
        needs_lib=True,
    ),  # fmt: skip
    "max_unpool2d": Case(
        lambda lib, x: unpooled(lib, x, 2),
        image_shapes(min_side=2),
        domain=(distinct(),),
        needs_lib=True,
    ),  # fmt: skip
    "max_unpool3d": Case(
        lambda lib, x: unpooled(lib, x, 3),
        volume_shapes(min_side=2),
        domain=(distinct(),),
        needs_lib=True,
    ),  # fmt: skip
    "fractional_max_pool2d": Case(
        lambda lib, x: fractional(lib, x, 2),
        image_shapes(min_side=3, max_side=4),
        domain=(distinct(),),
        needs_lib=True,
    ),  # fmt: skip
    "fractional_max_pool3d": Case(
        lambda lib, x: fractional(lib, x, 3),
        volume_shapes(min_side=4, max_side=4),
        domain=(distinct(),),
        needs_lib=True,
    ),  # fmt: skip
    "grid_sample": Case(
        lambda lib, x, grid: functional(lib).grid_sample(x, grid, align_corners=False),
        grid_shapes((3, 4)),
        domain=(reals(), off_pixels((3, 4))),
        needs_lib=True,
    ),
    "grid_sample[3d_nearest]": Case(
        lambda lib, x, grid: functional(lib).grid_sample(
            x, grid, mode="nearest", padding_mode="border", align_corners=False
        ),
        grid_shapes((2, 3, 2)),
        domain=(reals(), off_pixels((2, 3))),
        grad_inputs=(0,),
        needs_lib=True,
    ),
    "grid_sample[3d]": Case(
        lambda lib, x, grid: functional(lib).grid_sample(x, grid, align_corners=False),
        grid_shapes((2, 3, 2)),
        domain=(reals(), off_pixels((2, 3))),
        needs_lib=True,
    ),
    "affine_grid": Case(
        lambda lib, theta: functional(lib).affine_grid(theta, (theta.shape[0], 1, 3, 4), False),
        st.integers(1, 2).map(lambda n: ((n, 2, 3),)),
        needs_lib=True,
    ),
    "affine_grid[3d]": Case(
        lambda lib, theta: functional(lib).affine_grid(theta, (theta.shape[0], 1, 2, 2, 3), True),
        st.integers(1, 2).map(lambda n: ((n, 3, 4),)),
        needs_lib=True,
    ),
}
