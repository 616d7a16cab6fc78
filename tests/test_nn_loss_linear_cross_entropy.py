"""`nn.functional.linear_cross_entropy`, `nn.LinearCrossEntropyLoss` and
`nn.LinearCrossEntropyOptions` against PyTorch 2.13: values and gradients for index and
probability targets, K-dimensional losses, bias, class weights, ignore_index, smoothing,
the chunking options (accepted, results unchanged) and the errors."""

import warnings

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule as cr
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(11)
N, IN, C = 5, 4, 6


def _tensor(lib, array):
    if array is None:
        return None
    if array.dtype.kind == "f":
        return lib.tensor(array, requires_grad=True)
    return lib.tensor(array)


def _compare(torch, arrays: dict, kwargs: dict, torch_kwargs: dict | None = None):
    """linear_cross_entropy on the same arrays in both libraries: equal values, and equal
    gradients for every float argument (input, weights, bias, probabilities)."""
    results = []
    for lib, functional in ((cr, F), (torch, torch.nn.functional)):
        tensors = {name: _tensor(lib, a) for name, a in arrays.items()}
        extra = kwargs if lib is cr else {**kwargs, **(torch_kwargs or {})}
        loss = functional.linear_cross_entropy(
            tensors["input"],
            tensors["linear_weight"],
            tensors["target"],
            linear_bias=tensors.get("linear_bias"),
            **extra,
        )
        g = RNG.normal(size=loss.shape) if lib is cr else results[0][2]
        loss.backward(lib.tensor(g))
        grads = {n: t.grad for n, t in tensors.items() if t is not None and t.requires_grad}
        if lib is cr:
            results.append(
                (loss.data, {n: v.data for n, v in grads.items()}, g, loss.dtype, loss.shape)
            )
        else:
            results.append(
                (loss.detach().numpy(), {n: v.numpy() for n, v in grads.items()}, g, None, None)
            )
    (ours, our_grads, _, dtype, shape), (theirs, their_grads, *_) = results
    np.testing.assert_allclose(ours, theirs, **TORCH_TOL)
    assert shape == tuple(theirs.shape) and dtype == arrays["input"].dtype
    assert our_grads.keys() == their_grads.keys()
    for name in our_grads:
        np.testing.assert_allclose(our_grads[name], their_grads[name], **TORCH_TOL, err_msg=name)


def _arrays(batched=True, out_features=(), bias=False, probabilities=False, ignore=None):
    batch = (N,) if batched else ()
    arrays = {
        "input": RNG.normal(size=(*batch, IN)),
        "linear_weight": RNG.normal(size=(C, *out_features, IN)),
    }
    if bias:
        arrays["linear_bias"] = RNG.normal(size=(C, *out_features))
    if probabilities:
        logits = RNG.normal(size=(*batch, C, *out_features))
        arrays["target"] = np.exp(logits) / np.exp(logits).sum(len(batch), keepdims=True)
    else:
        target = RNG.integers(0, C, (*batch, *out_features))
        if ignore is not None:
            target.reshape(-1)[::3] = ignore
        arrays["target"] = target
    return arrays


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
def test_class_index_targets_match_pytorch(torch, reduction, bias):
    _compare(torch, _arrays(bias=bias), {"reduction": reduction})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_weights_ignore_index_and_smoothing_match_pytorch(torch, reduction):
    kwargs = {
        "weight": None,
        "reduction": reduction,
        "ignore_index": 2,
        "label_smoothing": 0.2,
    }
    class_weight = RNG.uniform(0.5, 2, C)
    arrays = _arrays(bias=True, ignore=2)
    _compare(torch, arrays, {**kwargs, "weight": cr.tensor(class_weight)},
             {"weight": torch.tensor(class_weight)})  # fmt: skip


def test_the_default_ignore_index_is_minus_100(torch):
    _compare(torch, _arrays(ignore=-100), {})


@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_probability_targets_match_pytorch(torch, smoothing):
    _compare(torch, _arrays(probabilities=True, bias=True), {"label_smoothing": smoothing})


@pytest.mark.parametrize("probabilities", [False, True], ids=["indices", "probabilities"])
def test_unbatched_input_matches_pytorch(torch, probabilities):
    _compare(torch, _arrays(batched=False, probabilities=probabilities), {"reduction": "none"})


@pytest.mark.parametrize("probabilities", [False, True], ids=["indices", "probabilities"])
def test_k_dimensional_loss_matches_pytorch(torch, probabilities):
    arrays = _arrays(out_features=(3, 2), bias=True, probabilities=probabilities)
    _compare(torch, arrays, {"reduction": "none"})
    _compare(torch, arrays, {})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_options_change_nothing_pytorch_chunked_agrees(torch, reduction):
    arrays = _arrays(bias=True, ignore=1)
    options = nn.LinearCrossEntropyOptions(batch_chunk_size=2, allow_retain_graph=True)
    torch_options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2, allow_retain_graph=True)
    _compare(torch, arrays, {"reduction": reduction, "ignore_index": 1, "options": options},
             {"options": torch_options})  # fmt: skip


def test_options_warn_where_pytorch_falls_back(torch):
    arrays = _arrays(probabilities=True)
    for lib, functional in ((cr, F), (torch, torch.nn.functional)):
        with pytest.warns(UserWarning, match="linear_cross_entropy: `*options`* ignored"):
            functional.linear_cross_entropy(
                *(lib.tensor(arrays[k]) for k in ("input", "linear_weight", "target")),
                options=lib.nn.LinearCrossEntropyOptions(),
            )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        index = _arrays()
        F.linear_cross_entropy(
            *(cr.tensor(index[k]) for k in ("input", "linear_weight", "target")),
            options=nn.LinearCrossEntropyOptions(),
        )


def test_float32_stays_float32_and_second_derivatives_work():
    arrays = _arrays()
    x = cr.tensor(arrays["input"].astype(np.float32), requires_grad=True)
    w = cr.tensor(arrays["linear_weight"].astype(np.float32))
    loss = F.linear_cross_entropy(x, w, cr.tensor(arrays["target"]))
    assert loss.dtype == cr.float32
    x, w = cr.tensor(arrays["input"], requires_grad=True), cr.tensor(arrays["linear_weight"])
    target = cr.tensor(arrays["target"])
    assert cr.gradgradcheck(lambda x: F.linear_cross_entropy(x, w, target), (x,))


def test_the_module_matches_pytorch_with_the_same_parameters(torch):
    kwargs = {"out_features": (3,), "bias": True, "reduction": "sum", "label_smoothing": 0.1}
    ours = nn.LinearCrossEntropyLoss(IN, C, **kwargs, dtype=cr.float64)
    theirs = torch.nn.LinearCrossEntropyLoss(IN, C, **kwargs, dtype=torch.float64)
    assert ours.linear.weight.shape == tuple(theirs.linear.weight.shape) == (C * 3, IN)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == [
        "linear.bias", "linear.weight"
    ]  # fmt: skip
    ours.load_state_dict({k: cr.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    a, target = RNG.normal(size=(N, IN)), RNG.integers(0, C, (N, 3))
    x, tx = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours(x, cr.tensor(target)).backward()
    out = theirs(tx, torch.tensor(target))
    out.backward()
    np.testing.assert_allclose(ours(x, cr.tensor(target)).item(), out.item(), **TORCH_TOL)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), **TORCH_TOL)
    np.testing.assert_allclose(
        ours.linear.weight.grad.data, theirs.linear.weight.grad.numpy(), **TORCH_TOL
    )
    np.testing.assert_allclose(
        ours.linear.bias.grad.data, theirs.linear.bias.grad.numpy(), **TORCH_TOL
    )


def test_the_module_repr_and_class_weight_buffer_match_pytorch(torch):
    assert repr(nn.LinearCrossEntropyLoss(3, 4)) == repr(torch.nn.LinearCrossEntropyLoss(3, 4))
    options = nn.LinearCrossEntropyOptions(batch_chunk_size=8)
    torch_options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=8)
    assert repr(options) == repr(torch_options)
    loss = nn.LinearCrossEntropyLoss(3, 4, weight=cr.ones(4), options=options)
    assert "options=LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=8" in (
        repr(loss)
    )
    assert sorted(loss.state_dict()) == ["linear.weight", "weight"]
    assert loss.to(cr.float32).linear.weight.dtype == cr.float32
    assert nn.LinearCrossEntropyLoss(3, 4, dtype=cr.float64).linear.weight.dtype == cr.float64


def test_the_module_refuses_bad_arguments():
    with pytest.raises(ShapeError, match=r"LinearCrossEntropyLoss: weight must have shape \(4,\)"):
        nn.LinearCrossEntropyLoss(3, 4, weight=cr.ones(3))
    with pytest.raises(DomainError, match=r"label_smoothing must lie in \[0, 1\], got 1.5"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)
    with pytest.raises(DomainError, match="device"):
        nn.LinearCrossEntropyLoss(3, 4, device="cuda")


def test_options_are_checked_as_pytorch_checks_them(torch):
    bad = [
        {"acc_policy": "fast"},
        {"chunking_method": "square"},
        {"chunking_method": "aspect_ratio:0"},
        {"batch_chunk_size": 0},
        {"batch_chunk_size": 2.5},
    ]
    for kwargs in bad:
        with pytest.raises(ValueError):
            torch.nn.LinearCrossEntropyOptions(**kwargs)
        with pytest.raises(DomainError, match="LinearCrossEntropyOptions: "):
            nn.LinearCrossEntropyOptions(**kwargs)
    with pytest.raises(DomainError, match="acc_dtype must be None, float16, bfloat16"):
        nn.LinearCrossEntropyOptions(acc_dtype=cr.int64)
    assert nn.LinearCrossEntropyOptions(acc_dtype=cr.bfloat16).acc_dtype is cr.bfloat16
    assert nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:2").chunking_method
    with pytest.raises(AttributeError):
        nn.LinearCrossEntropyOptions().batch_chunk_size = 4  # frozen, as PyTorch's


def test_a_chunk_size_that_disagrees_with_the_chunking_method_is_refused(torch):
    arrays = _arrays()
    for lib, functional in ((cr, F), (torch, torch.nn.functional)):
        options = lib.nn.LinearCrossEntropyOptions(
            batch_chunk_size=3, chunking_method="aspect_ratio"
        )
        with pytest.raises(ValueError, match=r"give different chunk sizes \(3 vs 4\)"):
            functional.linear_cross_entropy(
                *(lib.tensor(arrays[k]) for k in ("input", "linear_weight", "target")),
                options=options,
            )


@pytest.mark.parametrize(
    "input_shape, weight_shape, target_shape, bias_shape, message",
    [
        ((2, 3, 4), (6, 4), (2,), None, r"input must have 1 or 2 dims.*got shape \(2, 3, 4\)"),
        ((2, 4), (4,), (2,), None, r"linear_weight must have at least 2 dims"),
        ((2, 4), (6, 5), (2,), None, r"the same last dim \(in_features\), got 4 and 5"),
        ((2, 4), (6, 4), (2,), (5,), r"linear_bias must have shape \(6,\).*got \(5,\)"),
        ((4,), (6, 3, 4), (3,), None, r"needs a batched input \(N, 4\), got shape \(4,\)"),
        ((2, 4), (6, 4), (3,), None, r"target has shape \(3,\); expected class indices of"),
    ],
)
def test_bad_shapes_are_refused_with_the_shapes(
    input_shape, weight_shape, target_shape, bias_shape, message
):
    bias = None if bias_shape is None else cr.zeros(*bias_shape)
    with pytest.raises(ShapeError, match="linear_cross_entropy: .*" + message):
        F.linear_cross_entropy(
            cr.zeros(*input_shape),
            cr.zeros(*weight_shape),
            cr.zeros(*target_shape, dtype=cr.int64),
            linear_bias=bias,
        )


def test_ignore_index_with_probabilities_is_refused():
    with pytest.raises(DomainError, match="ignore_index cannot be given when target holds"):
        F.linear_cross_entropy(cr.zeros(2, 4), cr.zeros(6, 4), cr.zeros(2, 6), ignore_index=0)
