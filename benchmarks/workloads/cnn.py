"""W5: one SGD step of a small CNN, float32, on every engine that has a 2-D convolution.

(128, 1, 8, 8) images -> Conv2d 3x3, 16 channels, padding 1 -> ReLU -> MaxPool 2 ->
Linear 256 -> 10 -> softmax cross-entropy. Each engine convolves with its own conv2d;
HIPS autograd has none, so it multiplies the unrolled input windows (im2col), which is what
the floor does by hand too. The input needs no gradient, so its windows are constants.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..suite import Impl, Target, Unavailable, Workload
from .compiled import COMPILED
from .engines import Engine, impls, train_step
from .mlp import W4_LR

CHANNELS, KERNEL, CLASSES = 16, 3, 10


def sizes(quick: bool) -> tuple[int, int]:
    """(batch, image side)."""
    return (16, 8) if quick else (128, 8)


def data(batch: int, side: int, seed: int = 1):
    """Images, labels and the initial [conv weight, conv bias, linear weight, linear bias]."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 1, side, side)).astype(np.float32)
    labels = rng.integers(0, CLASSES, batch)
    features = CHANNELS * (side // 2) ** 2
    params = [
        rng.standard_normal((CHANNELS, 1, KERNEL, KERNEL)) * np.sqrt(2 / KERNEL**2),
        np.zeros(CHANNELS),
        rng.standard_normal((features, CLASSES)) / np.sqrt(features),
        np.zeros(CLASSES),
    ]
    return x, labels, [p.astype(np.float32) for p in params]


def im2col(x: np.ndarray) -> np.ndarray:
    """(N*H*W, C*K*K): row n,h,w holds the zero-padded KxK window of x around pixel (h, w)."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (KERNEL, KERNEL), axis=(2, 3))  # N C H W K K
    n, c, h, w = x.shape
    return windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * w, c * KERNEL * KERNEL)


def conv_and_pool(engine_name: str, x_shape: tuple):
    """(conv2d(x, w, b), max_pool2(t)) for an engine, both in NCHW layout."""
    n, _, height, width = x_shape

    def pool_by_reshape(t, amax):
        return amax(t.reshape(n, CHANNELS, height // 2, 2, width // 2, 2))

    if engine_name == "chainrule":
        try:
            from chainrule.nn import functional as F

            conv2d = F.conv2d
        except (ImportError, AttributeError):
            raise Unavailable("needs conv2d (chainrule.nn.functional.conv2d)") from None
        max_pool2d = getattr(F, "max_pool2d", None)
        if max_pool2d is None:
            return (
                lambda x, w, b: conv2d(x, w, b, padding=1),
                lambda t: pool_by_reshape(t, lambda r: r.amax(dim=(3, 5))),
            )
        return lambda x, w, b: conv2d(x, w, b, padding=1), lambda t: max_pool2d(t, 2)
    if engine_name == "pytorch":
        import torch.nn.functional as F

        return lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda t: F.max_pool2d(t, 2)
    if engine_name == "mygrad":
        from mygrad.nnet import conv_nd, max_pool

        return (
            lambda x, w, b: conv_nd(x, w, stride=1, padding=1) + b.reshape(-1, 1, 1),
            lambda t: max_pool(t, (2, 2), 2),
        )
    import autograd.numpy as anp

    def conv_im2col(x, w, b):
        out = anp.dot(im2col(x), anp.reshape(w, (CHANNELS, -1)).T) + b
        return anp.transpose(anp.reshape(out, (n, height, width, CHANNELS)), (0, 3, 1, 2))

    return conv_im2col, lambda t: pool_by_reshape(t, lambda r: anp.max(r, axis=(3, 5)))


def cnn_step(engine: Engine, batch: int, side: int):
    x_array, labels_array, initial = data(batch, side)
    conv2d, max_pool2 = conv_and_pool(engine.name, x_array.shape)
    x, labels = engine.const(x_array), engine.const(labels_array)
    params = [engine.leaf(p) for p in initial]

    def loss_fn(w_conv, b_conv, w_fc, b_fc):
        h = max_pool2(engine.relu(conv2d(x, w_conv, b_conv)))
        return engine.cross_entropy(h.reshape(batch, -1) @ w_fc + b_fc, labels)

    update = engine.sgd(params, W4_LR)
    return lambda: train_step(engine, loss_fn, params, update)


def cnn_floor(batch: int, side: int):
    x, labels, params = data(batch, side)
    w_conv, b_conv, w_fc, b_fc = params
    rows, half = np.arange(batch), side // 2

    def step():
        cols = im2col(x)
        pre = cols @ w_conv.reshape(CHANNELS, -1).T + b_conv  # (N*H*W, O): NHWC
        act = np.maximum(pre, 0).reshape(batch, half, 2, half, 2, CHANNELS)
        pooled = act.max(axis=(2, 4))
        flat = pooled.transpose(0, 3, 1, 2).reshape(batch, -1)  # NCHW order, as in PyTorch
        logits = flat @ w_fc + b_fc
        shifted = logits - logits.max(1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        loss = -log_p[rows, labels].mean()
        g = np.exp(log_p)
        g[rows, labels] -= 1
        g /= batch
        g_fc, g_b_fc = flat.T @ g, g.sum(0)
        g_pooled = (g @ w_fc.T).reshape(batch, CHANNELS, half, half).transpose(0, 2, 3, 1)
        winner = act == pooled[:, :, None, :, None, :]  # ties only among zeros, masked below
        g_act = winner * g_pooled[:, :, None, :, None, :]
        g_pre = g_act.reshape(-1, CHANNELS) * (pre > 0)
        g_conv = (g_pre.T @ cols).reshape(w_conv.shape)
        grads = (g_conv, g_pre.sum(0), g_fc, g_b_fc)
        for p, grad in zip(params, grads):
            p -= W4_LR * grad
        return (loss, *grads)

    return step


def workloads(quick: bool) -> list[Workload]:
    """W5."""
    batch, side = sizes(quick)
    return [
        Workload(
            "W5",
            f"small CNN step ({batch}, 1, {side}, {side}), conv 3x3x16, float32",
            "ms/step",
            1e3,
            [
                Impl("numpy", lambda: cnn_floor(batch, side)),
                *impls(
                    lambda engine: cnn_step(engine, batch, side),
                    torch_threads=(1, 2),
                    compiled=True,
                ),
            ],
            rtol=1e-4,
            atol=1e-6,
            targets=[
                Target("chainrule ≤ 1.15× numpy", 1.15, "numpy"),
                Target("chainrule keeps float32", dtype="float32"),
                Target("chainrule compiled ≤ 1× numpy", 1.0, "numpy", impl=COMPILED),
            ],
        ),
    ]
