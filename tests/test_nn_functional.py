"""chainrule.nn.functional against torch.nn.functional: one lambda per case runs on both
libraries (it receives the library's functional module), in float64; outputs and the
gradients of every float input must agree. Also gradcheck, the re-exported rows, docstrings and
errors across families; each family's own tests are in tests/test_nn_<family>.py."""

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
