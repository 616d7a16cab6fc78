"""vmap: results equal to stacking the function over examples, in_dims and out_dims, nesting,
composition with the other transforms, the per-example loop, randomness, and errors."""

import numpy as np
import pytest
from conftest import TORCH_TOL, Cube  # Cube: a Function, which has no batching rule
from hypothesis import given
from hypothesis import strategies as st

import chainrule
from chainrule import GraphError, ShapeError, Tensor, func
from chainrule.func import batching

RNG = np.random.default_rng(0)
C = Tensor(RNG.standard_normal((2, 3)))  # a constant the functions close over
W = Tensor(RNG.standard_normal((3, 4)))
MASK = RNG.standard_normal((2, 3)) > 0
K = Tensor(RNG.standard_normal((3, 2, 3, 3)))  # convolution kernels
BIAS = Tensor(RNG.standard_normal(3))  # their biases (conv2d's matmul_add row)


def t64(*shape):
    """A float64 tensor of standard normal values."""
    return Tensor(RNG.standard_normal(shape))


def leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def counted(fn):
    """``fn`` that records each call, to tell one batched run from a per-example loop."""

    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)

    wrapper.calls = 0
    return wrapper


def assert_matches_loop(fn, *batched, loop_free=True):
    """vmap(fn) equals fn on each example, stacked; with ``loop_free``, fn ran once."""
    f = counted(fn)
    ours = func.vmap(f)(*batched)
    size = batched[0].shape[0]
    examples = [fn(*[x[b] for x in batched]) for b in range(size)]
    for k, out in enumerate(leaves(ours)):
        expected = np.stack([np.asarray(leaves(e)[k].detach().numpy()) for e in examples])
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    assert (f.calls == 1) == loop_free, f"{f.calls} calls"


# One function per family of batching rules: (function, per-example input shapes).
FAMILIES = {
    "arithmetic, broadcast between ranks": (
        lambda x, y: (x * y + x.exp() - y.sigmoid()).relu() / (1 + y**2) - x.abs().sqrt(),
        [(2, 3), (3,)],
    ),
    "constants of higher rank": (lambda x: x * C + C.sum(0) - 1.0, [(3,)]),
    "where, clamp, maximum, comparisons": (
        lambda x, y: (
            chainrule.where(x > y, x, y * 2),
            x.clamp(-0.5, 0.5),
            x.maximum(y),
            (x <= 0.1) & (y != 0),
            x.leaky_relu(0.2),
            x.to(chainrule.float32).double(),
        ),
        [(2, 3), (2, 3)],
    ),
    "reductions": (
        lambda x: (
            x.sum(1),
            x.mean(-1, keepdim=True),
            x.var(dim=(0, 2)),
            x.std(),
            x.prod(1),
            x.amax(-1),
            x.amin(0),
            x.logsumexp(2),
            x.norm(),
            x.norm(p=1, dim=0),
            x.max(),
            (x > 0).all(1),
            (x > 0).any(),
            x.sum(),
        ),
        [(2, 3, 4)],
    ),
    "softmax, argmax": (
        lambda x: (
            x.softmax(-1),
            x.log_softmax(0),
            x.argmax(),
            x.argmax(1, keepdim=True),
            x.argmin(-1),
            x.argmax(keepdim=True),
        ),
        [(2, 3)],
    ),
    "reshaping": (
        lambda x: (
            x.reshape(-1, 2),
            x.view(6, 4),
            x.flatten(),
            x.flatten(1),
            x.unflatten(2, (2, 2)),
            x.unsqueeze(0).squeeze(),
            x.unsqueeze(-1),
            x.permute(2, 0, 1),
            x.transpose(0, -1),
            x.T,
            x.mT,
            x[:, :1].expand(2, 5, 4),
            x.expand(2, 2, 3, 4),
            x.repeat(1, 2, 1),
            x.tile(2),
            x.flip(0),
            x.roll(1),
            x.roll((1, -1), (0, 2)),
        ),
        [(2, 3, 4)],
    ),
    "indexing": (
        lambda x: (
            x[0],
            x[:, 1:],
            x[..., None, ::2],
            x[[0, 1, 1]],
            x[:, [2, 0]],
            x[[0, 1], :, [1, 0]],
            x[MASK],
            x[-1, ..., 0],
            x.gather(1, Tensor([[[0, 1]], [[2, 0]]])),
        ),
        [(2, 3, 2)],
    ),
    "joining and splitting": (
        lambda x: (
            chainrule.cat([x, C], 0),
            chainrule.cat([C, x * 2], -1),
            chainrule.stack([x, C], -1),
            *x.split(2, dim=1),
            *x.chunk(2, 0),
            chainrule.pad(x, (1, 2), value=3.0),
            chainrule.pad(x, (1, 1, 0, 1)),
        ),
        [(2, 3)],
    ),
    "linear algebra": (
        lambda v, m: (
            v @ W,
            W.T @ v,
            m @ W,
            C @ m.T,
            m @ m.T,
            chainrule.dot(v, v),
            chainrule.outer(v, v),
            chainrule.einsum("ij,jk->ik", m, W),
            chainrule.einsum("i,i", v, v),
            chainrule.einsum("ij,kj", C, m),
            v @ m.T,
        ),
        [(3,), (2, 3)],
    ),
    "convolution and pooling": (
        lambda img: (
            chainrule.conv2d(img, K, padding=1, stride=(1, 2)),
            chainrule.conv2d(img, K, BIAS, padding=1),
            chainrule.conv1d(img[:, 0], K[:, :, 0], dilation=2),
            chainrule.avg_pool2d(img[None], 2)[0],
            chainrule.ops.conv.fold(chainrule.ops.conv.unfold(img[None], 2), (4, 5), 2),
        ),
        [(2, 4, 5)],
    ),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_vmap_runs_each_family_of_ops_once_and_matches_the_loop(family):
    fn, shapes = FAMILIES[family]
    assert_matches_loop(fn, *[t64(3, *shape) for shape in shapes])


@given(
    size=st.integers(1, 4),
    in_dim=st.integers(-3, 2),
    out_dim=st.integers(-2, 1),
    unmapped_first=st.booleans(),
)
def test_vmap_in_dims_and_out_dims_place_the_batch_dim(size, in_dim, out_dim, unmapped_first):
    xs, fixed = t64(*[size if d == in_dim % 3 else 3 for d in range(3)]), t64(3, 3)
    fn = lambda a, b: (a.softmax(-1) * b).sum(0)  # noqa: E731
    if unmapped_first:
        args, in_dims, example = (fixed, xs), (None, in_dim), lambda s: fn(fixed, s)
    else:
        args, in_dims, example = (xs, fixed), (in_dim, None), lambda s: fn(s, fixed)
    out = func.vmap(fn, in_dims=in_dims, out_dims=out_dim)(*args)
    slices = [Tensor(np.take(xs.detach().numpy(), b, axis=in_dim)) for b in range(size)]
    expected = np.stack([example(s).detach().numpy() for s in slices], axis=out_dim)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)


def test_vmap_maps_nested_arguments_and_returns_nested_outputs():
    pair, xs, scale = (t64(4, 3), t64(3)), t64(3, 4), Tensor(2.0)

    def fn(p, x, s, offset=0.0):
        return {"sum": p[0] * x + p[1] * s + offset, "parts": (x.sum(), p[1])}

    out = func.vmap(fn, in_dims=((0, None), 1, None), out_dims={"sum": 1, "parts": (0, None)})(
        pair, xs, scale, offset=1.0
    )
    expected = np.stack(
        [pair[0].detach().numpy()[b] * xs.detach().numpy()[:, b] for b in range(4)], axis=1
    )
    np.testing.assert_allclose(
        out["sum"].detach().numpy(), expected + (pair[1].detach().numpy() * 2 + 1)[:, None]
    )
    np.testing.assert_allclose(out["parts"][0].detach().numpy(), xs.detach().numpy().sum(0))
    assert out["parts"][1] is pair[1]


def test_vmap_broadcasts_an_output_that_does_not_depend_on_the_batch():
    out = func.vmap(lambda x: (x * 2, C), out_dims=(0, 1))(t64(4, 3))
    assert out[1].shape == (2, 4, 3)
    np.testing.assert_array_equal(
        out[1].detach().numpy(), np.broadcast_to(C.detach().numpy()[:, None], (2, 4, 3))
    )


def test_nested_vmap_maps_over_two_batch_dims():
    a, b = t64(4, 3), t64(5, 3)
    fn = counted(lambda x, y: (x * y).sum() + x.softmax(0)[0])
    pairwise = func.vmap(func.vmap(fn, in_dims=(None, 0)), in_dims=(0, None))(a, b)
    expected = [
        [(a.detach().numpy()[i] * b.detach().numpy()[j]).sum() for j in range(5)] for i in range(4)
    ]
    soft = np.exp(a.detach().numpy()) / np.exp(a.detach().numpy()).sum(1, keepdims=True)
    np.testing.assert_allclose(
        pairwise.detach().numpy(), np.asarray(expected) + soft[:, :1], rtol=1e-12
    )
    assert fn.calls == 1
    inner_dims = func.vmap(func.vmap(lambda x: x.sum(0), in_dims=1), in_dims=2)(t64(2, 3, 4))
    assert inner_dims.shape == (4, 3)


def test_vmap_of_the_loop_free_path_counts_ops_of_one_example_not_of_the_batch():
    fn = lambda x: ((x @ W).tanh() * 2 + x.sum()).sum()  # noqa: E731
    with chainrule.count_ops() as one:
        fn(t64(3))
    with chainrule.count_ops() as batch:
        func.vmap(fn)(t64(16, 3))
    assert batch.forward_total <= one.forward_total + 3
    assert batch.forward["matmul"] == 1


def mlp_loss(w1, b1, w2, b2, x, target):
    """Cross-entropy of a one-hidden-layer MLP on one example; runs on chainrule and torch."""
    h = (x @ w1 + b1).tanh()
    return -((h @ w2 + b2).log_softmax(-1) * target).sum()


def test_vmap_of_grad_gives_per_example_gradients_of_an_mlp_like_pytorch(torch):
    params = [RNG.standard_normal(s) for s in [(3, 8), (8,), (8, 2), (2,)]]
    x, target = RNG.standard_normal((6, 3)), np.eye(2)[RNG.integers(0, 2, 6)]
    in_dims = (None,) * 4 + (0, 0)
    per_example = counted(func.grad(mlp_loss, argnums=(0, 1, 2, 3)))
    ours = func.vmap(per_example, in_dims=in_dims)(*map(Tensor, params), Tensor(x), Tensor(target))
    theirs = torch.func.vmap(torch.func.grad(mlp_loss, argnums=(0, 1, 2, 3)), in_dims=in_dims)(
        *map(torch.tensor, params), torch.tensor(x), torch.tensor(target)
    )
    assert per_example.calls == 1
    for g, expected in zip(ours, theirs):
        assert g.shape == (6, *expected.shape[1:])
        np.testing.assert_allclose(g.detach().numpy(), expected.numpy(), **TORCH_TOL)


def test_vmap_composes_with_the_jacobians_hessian_jvp_and_value_and_grad():
    xs = t64(4, 3)
    fn = lambda x: (x @ W).tanh() * x.sum()  # noqa: E731
    jac_rev = func.vmap(func.jacrev(fn))(xs)
    jac_fwd = func.vmap(func.jacfwd(fn))(xs)
    expected = np.stack([func.jacrev(fn)(x).detach().numpy() for x in xs])
    np.testing.assert_allclose(jac_rev.detach().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(jac_fwd.detach().numpy(), expected, rtol=1e-12)
    scalar = lambda x: (fn(x) ** 2).sum()  # noqa: E731
    hess = func.vmap(func.hessian(scalar))(xs)
    np.testing.assert_allclose(
        hess.detach().numpy(), np.stack([func.hessian(scalar)(x).detach().numpy() for x in xs])
    )
    _, tangents = func.vmap(lambda x, t: func.jvp(fn, (x,), (t,)))(xs, t64(4, 3))
    assert tangents.shape == (4, 4)
    # vmap over tangents (a batch of jvps with one primal) is forward-mode jacfwd in one pass.
    x = t64(3)
    columns = func.vmap(lambda t: func.jvp(fn, (x,), (t,))[1])(Tensor(np.eye(3)))
    np.testing.assert_allclose(
        columns.detach().numpy().T, func.jacfwd(fn)(x).detach().numpy(), rtol=1e-12
    )
    values, grads = func.vmap(func.value_and_grad(scalar))(xs)
    assert values.shape == (4,) and grads.shape == (4, 3)


def test_grad_through_vmap_flows_back_to_unmapped_and_mapped_inputs():
    w, xs = t64(3), t64(5, 3)
    loss = lambda w, xs: func.vmap(lambda x: (w * x).sin().sum())(xs).sum()  # noqa: E731
    gw, gx = func.grad(loss, argnums=(0, 1))(w, xs)
    np.testing.assert_allclose(
        gw.detach().numpy(),
        (np.cos(w.detach().numpy() * xs.detach().numpy()) * xs.detach().numpy()).sum(0),
    )
    np.testing.assert_allclose(
        gx.detach().numpy(), np.cos(w.detach().numpy() * xs.detach().numpy()) * w.detach().numpy()
    )


def test_vmap_over_a_vjp_made_outside_it_loops_and_gives_each_cotangent_its_row():
    x = t64(3)
    out, vjp_fn = func.vjp(lambda x: (x @ W).sin(), x)
    rows = func.vmap(vjp_fn)(Tensor(np.eye(4)))[0]
    np.testing.assert_allclose(
        rows.detach().numpy(), func.jacrev(lambda x: (x @ W).sin())(x).detach().numpy()
    )


def scale_in_place(x):
    y = x * 1.0
    y *= 2
    return y


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * x.sum().item(),  # reads a value
        lambda x: x if x.sum() > 0 else -x,  # Python control flow on a value
        lambda x: x.max(dim=0).values,  # an op with no batching rule
        lambda x: Cube.apply(x) + 1,  # a Function subclass
        scale_in_place,  # an in-place change of a batched tensor
        lambda x: x[x.sum(-1).argmax()],  # indexing with a mapped index tensor
        lambda x: Tensor(x.numpy() * 2),  # NumPy on the values
    ],
    ids=["item", "if", "max-dim", "function", "in-place", "mapped-index", "numpy"],
)
def test_vmap_falls_back_to_the_per_example_loop_with_the_same_results(fn):
    assert_matches_loop(fn, t64(4, 3, 2), loop_free=False)


def test_the_per_example_loop_keeps_gradients_and_serves_vmap_of_grad():
    fn = lambda x: (Cube.apply(x) * 2).sum()  # noqa: E731
    xs = t64(3, 2)
    np.testing.assert_allclose(
        func.vmap(func.grad(fn))(xs).detach().numpy(), 6 * xs.detach().numpy() ** 2
    )
    np.testing.assert_allclose(
        func.grad(lambda v: func.vmap(fn)(v).sum())(xs).detach().numpy(),
        6 * xs.detach().numpy() ** 2,
    )


def test_an_inner_vmap_that_loops_inside_an_outer_batched_vmap():
    fn = lambda x: x * float(x.shape[0]) + x.max(dim=0).values  # noqa: E731
    xs = t64(2, 3, 4)
    out = func.vmap(func.vmap(fn))(xs)
    np.testing.assert_allclose(
        out.detach().numpy(),
        xs.detach().numpy() * 4 + xs.detach().numpy().max(axis=2, keepdims=True),
    )


def test_vmap_randomness():
    xs = t64(4, 3)
    noisy = lambda x: x + chainrule.randn(3, dtype=chainrule.float64)  # noqa: E731
    with pytest.raises(GraphError, match=r"vmap: func draws random numbers \(randn\) but"):
        func.vmap(noisy)(xs)
    same = func.vmap(noisy, randomness="same")(xs).detach().numpy() - xs.detach().numpy()
    assert np.allclose(same, same[0])
    different = func.vmap(noisy, randomness="different")(xs).detach().numpy() - xs.detach().numpy()
    assert not np.allclose(different, different[0])
    looping_same = func.vmap(lambda x: noisy(x) * x.sum().item(), randomness="same")(xs)
    noise = (
        looping_same.detach().numpy() / xs.detach().numpy().sum(1, keepdims=True)
        - xs.detach().numpy()
    )
    assert np.allclose(noise, noise[0])
    assert func.vmap(lambda x: x * 2)(xs).shape == (4, 3)  # the generator is back


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: func.vmap(lambda x, y: x + y)(t64(4, 2), t64(3)), ShapeError,
         r"vmap: in_dims=0 for argument 1 of shape \(3,\) but argument 0 has batch size 4"),
        (lambda: func.vmap(lambda x: x, in_dims=2)(t64(4, 2)), ShapeError,
         r"vmap: in_dims=2 for argument 0 of shape \(4, 2\) is out of range for its 2 dim"),
        (lambda: func.vmap(lambda x: x)(Tensor(1.0)), ShapeError,
         r"vmap: in_dims=0 for argument 0 of shape \(\): a 0-d tensor has no dimension"),
        (lambda: func.vmap(lambda x, n: x * n)(t64(4), 2.0), TypeError,
         r"vmap: in_dims=0 for argument 1, a float; only Tensors can be mapped"),
        (lambda: func.vmap(lambda x, y: x, in_dims=(0,))(t64(4), t64(4)), ValueError,
         r"vmap: in_dims has 1 entries but func was called with 2 positional arguments"),
        (lambda: func.vmap(lambda p: p[0], in_dims=((0, 0, 0),))((t64(4), t64(4))), ValueError,
         r"vmap: in_dims for argument 0 has 3 entries but argument 0 has 2 entries"),
        (lambda: func.vmap(lambda x: x, in_dims=(0, 1))(t64(4)), ValueError,
         r"vmap: in_dims has 2 entries"),
        (lambda: func.vmap(lambda x: x, in_dims="0"), TypeError,
         r"vmap: in_dims must be an int, None, or a tuple of them, got '0'"),
        (lambda: func.vmap(lambda x: x, in_dims=None)(t64(4)), ValueError,
         r"vmap: no argument is mapped"),
        (lambda: func.vmap(lambda x: x * 2, out_dims=None)(t64(4)), ValueError,
         r"vmap: out_dims=None for output, but it depends on the mapped inputs"),
        (lambda: func.vmap(lambda x: x * 2, out_dims=2)(t64(4)), ShapeError,
         r"vmap: out_dims=2 for output is out of range for its 1 dimensions"),
        (lambda: func.vmap(lambda x: (x, 1.0))(t64(4)), TypeError,
         r"vmap: func must return Tensors .*; output\[1\] is a float"),
        (lambda: func.vmap(lambda x: x, randomness="maybe"), ValueError,
         r"vmap: randomness must be 'error', 'different' or 'same', got 'maybe'"),
        (lambda: func.vmap(lambda x: x.sum().backward())(t64(4, 2)), GraphError,
         r"backward: .backward\(\) inside vmap is not supported; use chainrule.func.grad"),
        (lambda: func.vmap(lambda x: x[: int(x[0].item())])(Tensor([[1.0, 0], [2.0, 0]])),
         ShapeError, r"vmap: output has shape \(1,\) for example 0 but \(2,\) for example 1"),
        (lambda: func.vmap(lambda x: x * x.sum().item(), out_dims=None)(t64(2, 2)), ValueError,
         r"vmap: out_dims=None for output, but it differs between examples"),
    ],
)  # fmt: skip
def test_vmap_errors_name_the_argument_and_the_fix(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_vmap_keeps_the_function_name_and_docstring():
    def per_example(x):
        """Doc."""
        return x

    mapped = func.vmap(per_example)
    assert mapped.__name__ == "per_example" and mapped.__doc__ == "Doc."


def test_vmap_leaves_no_state_behind_and_raises_genuine_errors_from_the_loop():
    generator = chainrule.random.current_generator()
    func.vmap(lambda x: x * 2)(t64(3))
    func.vmap(lambda x: x * x.sum().item())(t64(3, 2))
    with pytest.raises(ShapeError, match=r"matmul: shapes \(4,\) and \(2, 3\) do not align"):
        func.vmap(lambda x: x @ C)(t64(3, 4))
    assert chainrule.dispatch.batch_hook is None and batching.active_levels() == []
    assert chainrule.random.current_generator() is generator is chainrule.default_generator
