"""chainrule.nn.functional against torch.nn.functional: one lambda per case runs on both
libraries (it receives the library's functional module), in float64; outputs and the
gradients of every float input must agree."""

import math

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule
import chainrule.nn.functional as F
from chainrule import gradcheck
from chainrule.errors import DomainError, DTypeError, OutOfRangeError, ShapeError

RNG = np.random.default_rng(1234)


class Fixed:
    """An input that is passed to both libraries but needs no gradient (weights, targets)."""

    def __init__(self, array):
        self.array = np.asarray(array)


def normal(*shape, scale=1.0):
    return RNG.normal(0, scale, shape)


def uniform(low, high, *shape):
    return RNG.uniform(low, high, shape)


def probabilities(*shape, dim=1):
    e = np.exp(normal(*shape))
    return e / e.sum(axis=dim, keepdims=True)


def _tensors(library, inputs):
    out = []
    for item in inputs:
        if isinstance(item, Fixed):
            out.append(library.tensor(item.array))
        elif np.asarray(item).dtype.kind == "f":
            out.append(library.tensor(np.asarray(item), requires_grad=True))
        else:
            out.append(library.tensor(np.asarray(item)))
    return out


def run(library, functional, fn, inputs, seed=0):
    """Output values and the gradients of the inputs that require grad, as arrays."""
    tensors = _tensors(library, inputs)
    out = fn(functional, *tensors)
    value = out.detach().numpy() if hasattr(out, "detach") else np.asarray(out)
    grads = []
    if getattr(out, "requires_grad", False):
        cotangent = np.random.default_rng(seed).normal(size=value.shape)
        (out * library.tensor(cotangent)).sum().backward()
        grads = [t.grad.numpy() for t in tensors if t.requires_grad]
    return np.asarray(value), grads


def assert_matches_torch(torch, fn, inputs):
    ours, our_grads = run(chainrule, F, fn, inputs)
    theirs, their_grads = run(torch, torch.nn.functional, fn, inputs)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, **TORCH_TOL)
    assert len(our_grads) == len(their_grads)
    for mine, expected in zip(our_grads, their_grads):
        np.testing.assert_allclose(mine, expected, **TORCH_TOL)


X = normal(3, 5, scale=2.0)
LOGITS = normal(4, 5)
TARGETS = np.array([0, 4, 2, 4])
CLASS_WEIGHT = Fixed(uniform(0.5, 2.0, 5))
IMAGE_LOGITS = normal(2, 3, 4, 2)
IMAGE_TARGETS = RNG.integers(0, 3, (2, 4, 2))
IMAGE_TARGETS[0, 1, 1] = -100

CASES = {
    "relu": (lambda F, x: F.relu(x), [X]),
    "leaky_relu": (lambda F, x: F.leaky_relu(x, 0.2), [X]),
    "gelu": (lambda F, x: F.gelu(x), [X]),
    "gelu_tanh": (lambda F, x: F.gelu(x, approximate="tanh"), [X]),
    "silu": (lambda F, x: F.silu(x), [X]),
    "sigmoid": (lambda F, x: F.sigmoid(x), [X]),
    "tanh": (lambda F, x: F.tanh(x), [X]),
    "softplus": (lambda F, x: F.softplus(x), [X * 15]),
    "softplus_beta_threshold": (lambda F, x: F.softplus(x, beta=2.0, threshold=3.0), [X]),
    "elu": (lambda F, x: F.elu(x, alpha=1.5), [np.append(X, [0.0, 800.0])]),
    "softmax": (lambda F, x: F.softmax(x, dim=1), [X]),
    "log_softmax": (lambda F, x: F.log_softmax(x, dim=-1), [X * 300]),
    "linear": (lambda F, x, w, b: F.linear(x, w, b), [normal(2, 3, 5), normal(4, 5), normal(4)]),
    "linear_no_bias": (lambda F, x, w: F.linear(x, w), [normal(5), normal(4, 5)]),
    "dropout_eval": (lambda F, x: F.dropout(x, 0.5, training=False), [X]),
    "dropout_p0": (lambda F, x: F.dropout(x, 0.0), [X]),
    "one_hot": (lambda F, t: F.one_hot(t, 6), [TARGETS]),
    "one_hot_inferred": (lambda F, t: F.one_hot(t), [np.array([[1, 3], [0, 2]])]),
    "embedding": (lambda F, i, w: F.embedding(i, w), [np.array([[1, 3, 1], [0, 1, 3]]),
                                                      normal(5, 4)]),  # fmt: skip
    "embedding_padding": (lambda F, i, w: F.embedding(i, w, padding_idx=1),
                          [np.array([[1, 3, 1], [0, 1, 3]]), normal(5, 4)]),  # fmt: skip
    "embedding_negative_padding": (lambda F, i, w: F.embedding(i, w, padding_idx=-2),
                                   [np.array([3, 3, 0]), normal(5, 4)]),  # fmt: skip
    "layer_norm": (lambda F, x, w, b: F.layer_norm(x, (4, 3), w, b, eps=1e-3),
                   [normal(2, 4, 3), normal(4, 3), normal(4, 3)]),  # fmt: skip
    "layer_norm_plain": (lambda F, x: F.layer_norm(x, [3]), [normal(2, 3, scale=5.0)]),
    "batch_norm_train": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         [normal(6, 3, 2), normal(3), normal(3)]),  # fmt: skip
    "batch_norm_eval": (
        lambda F, x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, eps=0.01),
        [normal(4, 3, 2, 2), Fixed(normal(3)), Fixed(uniform(0.5, 2, 3)), normal(3), normal(3)]),
    "cross_entropy": (lambda F, x, t: F.cross_entropy(x, t), [LOGITS, TARGETS]),
    "cross_entropy_weight_sum": (
        lambda F, x, t, w: F.cross_entropy(x, t, weight=w, reduction="sum"),
        [LOGITS, TARGETS, CLASS_WEIGHT]),
    "cross_entropy_ignore": (
        lambda F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=4),
        [LOGITS, TARGETS, CLASS_WEIGHT]),
    "cross_entropy_none": (lambda F, x, t: F.cross_entropy(x, t, ignore_index=2,
                                                           reduction="none"),
                           [LOGITS, TARGETS]),  # fmt: skip
    "cross_entropy_smoothing": (lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
                                [LOGITS, TARGETS]),  # fmt: skip
    "cross_entropy_smoothing_all": (
        lambda F, x, t, w: F.cross_entropy(x, t, w, ignore_index=0, label_smoothing=0.3),
        [LOGITS, TARGETS, CLASS_WEIGHT]),
    "cross_entropy_smoothing_none": (
        lambda F, x, t, w: F.cross_entropy(x, t, w, ignore_index=0, reduction="none",
                                           label_smoothing=0.3),
        [LOGITS, TARGETS, CLASS_WEIGHT]),  # fmt: skip
    "cross_entropy_spatial": (
        lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        [IMAGE_LOGITS, IMAGE_TARGETS]),
    "cross_entropy_spatial_weight": (
        lambda F, x, t, w: F.cross_entropy(x, t, w[:3], reduction="none"),
        [IMAGE_LOGITS, IMAGE_TARGETS, CLASS_WEIGHT]),
    "cross_entropy_unbatched": (lambda F, x, t: F.cross_entropy(x, t), [normal(5), np.array(3)]),
    "cross_entropy_probabilities": (lambda F, x, p: F.cross_entropy(x, p),
                                    [LOGITS, probabilities(4, 5)]),  # fmt: skip
    "cross_entropy_probabilities_all": (
        lambda F, x, p, w: F.cross_entropy(x, p, w, reduction="sum", label_smoothing=0.25),
        [LOGITS, probabilities(4, 5), CLASS_WEIGHT]),
    "cross_entropy_probabilities_spatial": (
        lambda F, x, p: F.cross_entropy(x, p, reduction="none", label_smoothing=0.1),
        [IMAGE_LOGITS, probabilities(2, 3, 4, 2)]),
    "nll_loss": (lambda F, x, t: F.nll_loss(x, t), [LOGITS, TARGETS]),
    "nll_loss_weight_ignore": (
        lambda F, x, t, w: F.nll_loss(x, t, weight=w, ignore_index=2),
        [LOGITS, TARGETS, CLASS_WEIGHT]),
    "nll_loss_spatial_sum": (lambda F, x, t: F.nll_loss(x, t, reduction="sum"),
                             [IMAGE_LOGITS, IMAGE_TARGETS]),  # fmt: skip
    "binary_cross_entropy": (lambda F, x, t: F.binary_cross_entropy(x, t),
                             [uniform(0.05, 0.95, 3, 4), Fixed(uniform(0, 1, 3, 4))]),  # fmt: skip
    "binary_cross_entropy_weight": (
        lambda F, x, t, w: F.binary_cross_entropy(x, t, w, reduction="sum"),
        [uniform(0.05, 0.95, 3, 4), Fixed(uniform(0, 1, 3, 4)), Fixed(uniform(0, 2, 4))]),
    "binary_cross_entropy_edges": (
        lambda F, x, t: F.binary_cross_entropy(x, t, reduction="none"),
        [Fixed([0.0, 1.0, 0.0, 1.0, 1e-60]), Fixed([1.0, 0.0, 0.0, 1.0, 1.0])]),
    "bce_with_logits": (lambda F, x, t: F.binary_cross_entropy_with_logits(x, t),
                        [normal(3, 4, scale=3.0), uniform(0, 1, 3, 4)]),  # fmt: skip
    "bce_with_logits_weights": (
        lambda F, x, t, w, p: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=p),
        [normal(3, 4, scale=3.0), uniform(0, 1, 3, 4), Fixed(uniform(0, 2, 3, 1)),
         Fixed(uniform(0.5, 3, 4))]),  # fmt: skip
    "bce_with_logits_large": (
        lambda F, x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none"),
        [np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0]), Fixed([1.0, 0.0, 1.0, 1.0, 0.0])]),
    "mse_loss": (lambda F, x, y: F.mse_loss(x, y), [X, normal(3, 5)]),
    "mse_loss_sum": (lambda F, x, y: F.mse_loss(x, y, reduction="sum"), [X, normal(3, 5)]),
    "l1_loss": (lambda F, x, y: F.l1_loss(x, y, reduction="none"), [X, normal(3, 5)]),
    "huber_loss": (lambda F, x, y: F.huber_loss(x, y, delta=0.7), [X, normal(3, 5)]),
    "smooth_l1_loss": (lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.6, reduction="sum"),
                       [X, normal(3, 5)]),  # fmt: skip
    "smooth_l1_loss_beta0": (lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.0),
                             [X, normal(3, 5)]),  # fmt: skip
    "sdpa": (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v),
             [normal(2, 3, 4, 6), normal(2, 3, 5, 6), normal(2, 3, 5, 2)]),  # fmt: skip
    "sdpa_scale": (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
                   [normal(4, 6), normal(5, 6), normal(5, 2)]),  # fmt: skip
    "sdpa_causal": (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    [normal(2, 5, 4), normal(2, 5, 4), normal(2, 5, 3)]),  # fmt: skip
    "sdpa_bool_mask": (
        lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 3),
         np.array([[True, False, True, True, False]] * 2 + [[False, True, False, False, True]])]),
    "sdpa_float_mask": (
        lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 3), normal(2, 3, 5)]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(torch, name):
    fn, inputs = CASES[name]
    assert_matches_torch(torch, fn, inputs)


def test_one_hot_is_int64():
    assert F.one_hot(chainrule.tensor([0, 2])).dtype == np.int64


def test_embedding_gradient_accumulates_repeats_and_skips_padding():
    weight = chainrule.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    out = F.embedding(chainrule.tensor([2, 0, 2, 2]), weight, padding_idx=0)
    np.testing.assert_array_equal(out.data[1], [0.0, 1.0, 2.0])  # looked up as usual
    out.sum().backward()
    np.testing.assert_array_equal(weight.grad.data.sum(axis=1), [0.0, 0.0, 9.0, 0.0])


def test_batch_norm_updates_running_stats_like_torch(torch):
    mean, var = np.zeros(3), np.ones(3)
    ours = chainrule.tensor(mean), chainrule.tensor(var)
    theirs = torch.tensor(mean), torch.tensor(var)
    for step in range(3):
        x = normal(5, 3, 2) + step
        F.batch_norm(chainrule.tensor(x), *ours, training=True, momentum=0.3)
        torch.nn.functional.batch_norm(torch.tensor(x), *theirs, training=True, momentum=0.3)
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), **TORCH_TOL)


def test_dropout_statistics_and_scaling():
    chainrule.manual_seed(0)
    x = chainrule.ones(200_000, dtype=chainrule.float64)
    out = F.dropout(x, p=0.3).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.005
    np.testing.assert_allclose(out[kept], 1 / 0.7)
    assert abs(out.mean() - 1.0) < 0.01  # inverted scaling keeps the expectation


def test_dropout_is_deterministic_under_manual_seed():
    x = chainrule.randn(50, 20)
    chainrule.manual_seed(7)
    first = F.dropout(x, 0.5).numpy().copy()
    chainrule.manual_seed(7)
    second = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, F.dropout(x, 0.5).numpy())


def test_dropout_gradient_uses_the_mask():
    chainrule.manual_seed(3)
    x = chainrule.tensor(np.ones((10, 10)), requires_grad=True)
    out = F.dropout(x, 0.4)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


def test_dropout_edges():
    x = chainrule.ones(4)
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(4))


def test_sdpa_dropout_one_gives_zeros():
    q = chainrule.randn(2, 3, 4)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3, 4)))


def test_inplace_activation_writes_into_its_input():
    x = normal(4)
    ours = chainrule.tensor(x, requires_grad=True) * 1.0
    result = F.relu(ours, inplace=True)
    assert result is ours
    np.testing.assert_array_equal(ours.detach().numpy(), np.maximum(x, 0))


def test_conv_and_pooling_are_reexported():
    from chainrule.ops import conv, pooling

    for module, names in (
        (conv, ("conv1d", "conv2d", "fold", "unfold")),
        (pooling, ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d")),
    ):
        for name in names:
            assert getattr(F, name) is getattr(module, name)
            assert name in F.__all__


def test_every_public_name_has_a_docstring():
    for name in F.__all__:
        assert getattr(F, name).__doc__, name


PROBABILITIES = chainrule.tensor(probabilities(4, 5))
HALF = chainrule.tensor(uniform(-1, 1, 4, 5))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.cross_entropy(x, chainrule.tensor(TARGETS), label_smoothing=0.2),
        lambda x: F.nll_loss(F.log_softmax(x, 1), chainrule.tensor(TARGETS), reduction="sum"),
        lambda x: F.cross_entropy(x, PROBABILITIES, label_smoothing=0.1),
        lambda x: F.binary_cross_entropy_with_logits(x, PROBABILITIES, pos_weight=HALF + 2),
        lambda x: F.binary_cross_entropy(F.sigmoid(x), PROBABILITIES),
        lambda x: F.huber_loss(x, HALF, delta=0.3),
        lambda x: F.layer_norm(x, [5]),
    ],
    ids=["cross_entropy", "nll_loss", "cross_entropy_probabilities", "bce_with_logits", "bce",
         "huber", "layer_norm"],
)  # fmt: skip
def test_gradcheck(fn):
    x = chainrule.tensor(normal(4, 5), requires_grad=True)
    assert gradcheck(fn, [x])


def test_second_derivative_of_cross_entropy(torch):
    # Composed from rows, so the gradient is itself differentiable.
    def gradient_norm(library, functional):
        x = library.tensor(LOGITS, requires_grad=True)
        loss = functional.cross_entropy(x, library.tensor(TARGETS), label_smoothing=0.1)
        (g,) = library.autograd.grad(loss, [x], create_graph=True)
        (g * g).sum().backward()
        return x.grad.numpy()

    expected = gradient_norm(torch, torch.nn.functional)
    np.testing.assert_allclose(gradient_norm(chainrule, F), expected, **TORCH_TOL)


# Errors.


def test_cross_entropy_shape_mismatch():
    with pytest.raises(ShapeError, match=r"cross_entropy: input has shape \(4, 3\) but target "
                                         r"has shape \(5,\)"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(4, 3), chainrule.tensor([0, 1, 2, 0, 1]))


def test_cross_entropy_probability_shape_mismatch():
    with pytest.raises(ShapeError, match=r"cross_entropy: input has shape \(4, 3\) but target "
                                         r"has shape \(4, 2\)"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(4, 3), chainrule.zeros(4, 2))


def test_target_out_of_range_names_the_value():
    with pytest.raises(OutOfRangeError, match=r"cross_entropy: target 7 is out of range for 3 "
                                          r"classes"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor([0, 7]))
    with pytest.raises(OutOfRangeError, match=r"nll_loss: target -1 is out of range"):
        F.nll_loss(chainrule.zeros(2, 3), chainrule.tensor([-1, 0]))


def test_integer_targets_needed_for_indices():
    with pytest.raises(DTypeError, match=r"nll_loss: class-index targets must be integers"):
        F.nll_loss(chainrule.zeros(2, 3), chainrule.tensor([0.0, 1.0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor([0, 1]),
                                reduction="avg"),
        lambda: F.mse_loss(chainrule.zeros(2), chainrule.zeros(2), reduction="avg"),
        lambda: F.binary_cross_entropy(chainrule.zeros(2), chainrule.zeros(2), reduction="avg"),
    ],
)  # fmt: skip
def test_reduction_must_be_known(call):
    with pytest.raises(DomainError, match=r"reduction must be 'none', 'mean' or 'sum', got 'avg'"):
        call()


def test_other_errors():
    with pytest.raises(ShapeError, match=r"linear: input has shape \(2, 3\) but weight has "
                                         r"shape \(4, 5\)"):  # fmt: skip
        F.linear(chainrule.zeros(2, 3), chainrule.zeros(4, 5))
    with pytest.raises(DomainError, match=r"dropout: p must be a probability between 0 and 1, "
                                          r"got 1.5"):  # fmt: skip
        F.dropout(chainrule.zeros(2), 1.5)
    with pytest.raises(DomainError, match=r"one_hot: class value 3 is out of range for "
                                          r"num_classes=3"):  # fmt: skip
        F.one_hot(chainrule.tensor([0, 3]), 3)
    with pytest.raises(DTypeError, match=r"one_hot: the input must be an integer"):
        F.one_hot(chainrule.zeros(2))
    with pytest.raises(OutOfRangeError, match=r"embedding: index 5 is out of range for a weight of "
                                          r"shape \(5, 2\)"):  # fmt: skip
        F.embedding(chainrule.tensor([5]), chainrule.zeros(5, 2))
    with pytest.raises(DomainError, match=r"binary_cross_entropy: input values must lie in "
                                          r"\[0, 1\], found 1.5"):  # fmt: skip
        F.binary_cross_entropy(chainrule.tensor([0.5, 1.5]), chainrule.zeros(2))
    with pytest.raises(ShapeError, match=r"binary_cross_entropy_with_logits: input has shape "
                                         r"\(2,\) but target has shape \(2, 1\)"):  # fmt: skip
        F.binary_cross_entropy_with_logits(chainrule.zeros(2), chainrule.zeros(2, 1))
    with pytest.raises(ShapeError, match=r"layer_norm: input of shape \(2, 3\) does not end in "
                                         r"normalized_shape \(4,\)"):  # fmt: skip
        F.layer_norm(chainrule.zeros(2, 3), 4)
    with pytest.raises(DomainError, match=r"batch_norm: expected more than 1 value per channel"):
        F.batch_norm(chainrule.zeros(1, 3), None, None, training=True)
    with pytest.raises(DomainError, match=r"huber_loss: delta must be positive, got 0"):
        F.huber_loss(chainrule.zeros(2), chainrule.zeros(2), delta=0)
    with pytest.raises(DomainError, match=r"pass attn_mask or is_causal=True, not both"):
        q = chainrule.zeros(2, 2)
        F.scaled_dot_product_attention(q, q, q, attn_mask=chainrule.zeros(2, 2), is_causal=True)
    with pytest.raises(ShapeError, match=r"scaled_dot_product_attention: query \(2, 3\), key "
                                         r"\(2, 4\)"):  # fmt: skip
        F.scaled_dot_product_attention(chainrule.zeros(2, 3), chainrule.zeros(2, 4),
                                       chainrule.zeros(2, 4))  # fmt: skip


def test_regression_loss_warns_when_broadcasting():
    with pytest.warns(UserWarning, match=r"mse_loss: target shape \(3, 1\) differs"):
        F.mse_loss(chainrule.zeros(3), chainrule.zeros(3, 1))
    with pytest.raises(ShapeError, match=r"l1_loss: input has shape \(3,\) but target has "
                                         r"shape \(4,\), which do not broadcast"):  # fmt: skip
        F.l1_loss(chainrule.zeros(3), chainrule.zeros(4))


def test_all_ignored_mean_is_nan(torch):
    target = np.array([-100, -100])
    ours = F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor(target))
    theirs = torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor(target))
    assert math.isnan(ours.item()) and math.isnan(theirs.item())
