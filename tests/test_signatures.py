"""PyTorch's argument conventions across every op: ``axis=``/``keepdims=`` wherever ``dim=``/
``keepdim=`` is taken, and ``out=`` refused with a clear error (chainrule.signatures)."""

import inspect

import numpy as np
import pytest
import torch

import chainrule
from chainrule.errors import ArgumentError

X = np.random.default_rng(0).standard_normal((3, 4, 5))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.sum(axis=1),
        lambda m, x: x.sum(axis=(0, 2), keepdims=True),
        lambda m, x: x.mean(axis=-1, keepdims=True),
        lambda m, x: m.sum(x, axis=0),
        lambda m, x: m.mean(x, axis=2, keepdims=True),
        lambda m, x: x.amax(axis=1),
        lambda m, x: m.max(x, axis=1)[0],
        lambda m, x: x.argmax(axis=2),
        lambda m, x: x.std(axis=0),
        lambda m, x: m.var(x, axis=1, keepdims=True),
        lambda m, x: x.logsumexp(axis=1),
        lambda m, x: x.softmax(axis=0),
        lambda m, x: m.cumsum(x, axis=1),
        lambda m, x: m.cat([x, x], axis=1),
        lambda m, x: m.stack([x, x], axis=2),
        lambda m, x: x.unsqueeze(axis=1),
        lambda m, x: m.sort(x, axis=0)[0],
        lambda m, x: x.prod(axis=2, keepdims=True),
        lambda m, x: m.all(x > 0, axis=1),
        lambda m, x: m.norm(x, dim=None),
    ],
)
def test_axis_and_keepdims_mean_what_dim_and_keepdim_mean_in_pytorch(call):
    ours = call(chainrule, chainrule.tensor(X))
    theirs = call(torch, torch.tensor(X))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_axis_reaches_the_gradient():
    x = chainrule.tensor(X, requires_grad=True)
    t = torch.tensor(X, requires_grad=True)
    (x.softmax(axis=1) * chainrule.tensor(X)).sum(axis=0).sum().backward()
    (t.softmax(axis=1) * torch.tensor(X)).sum(axis=0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: chainrule.exp(x, out=x),
        lambda x: chainrule.add(x, x, out=x),
        lambda x: chainrule.sum(x, out=x),
        lambda x: chainrule.cat([x, x], out=x),
        lambda x: chainrule.matmul(x, x.mT, out=x),
    ],
)
def test_out_is_refused_with_a_message_that_says_what_to_write(call):
    x = chainrule.tensor(X)
    with pytest.raises(ArgumentError, match=r"out= is not supported.*y = chainrule\.") as info:
        call(x)
    assert isinstance(info.value, TypeError)  # what Python raises for a keyword it cannot take


def test_one_argument_under_both_names_is_an_error():
    x = chainrule.tensor(X)
    with pytest.raises(ArgumentError, match="sum: got both dim= and axis="):
        chainrule.sum(x, dim=0, axis=0)
    with pytest.raises(ArgumentError, match=r"Tensor\.mean: got both keepdim= and keepdims="):
        x.mean(dim=0, keepdim=True, keepdims=True)


def _takes_dim(fn) -> bool:
    try:
        return "dim" in inspect.signature(inspect.unwrap(fn)).parameters
    except (TypeError, ValueError):
        return False


def test_every_method_and_function_with_a_dim_takes_axis():
    tensor = chainrule.Tensor
    methods = [n for n in dir(tensor) if inspect.isfunction(inspect.getattr_static(tensor, n))
               and _takes_dim(getattr(tensor, n))]  # fmt: skip
    functions = [n for n in chainrule.ops.__all__ if inspect.isfunction(getattr(chainrule, n))
                 and _takes_dim(getattr(chainrule, n))]  # fmt: skip
    assert len(methods) > 40 and len(functions) > 40
    unwrapped = [n for n in methods if not hasattr(getattr(chainrule.Tensor, n), "__wrapped__")]
    unwrapped += [n for n in functions if not hasattr(getattr(chainrule, n), "__wrapped__")]
    assert not unwrapped


def test_the_engine_calls_ops_without_the_wrapper():
    assert not hasattr(chainrule.ops.sum, "__wrapped__")
    assert chainrule.sum.__wrapped__ is chainrule.ops.sum
