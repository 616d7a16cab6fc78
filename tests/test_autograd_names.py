"""torch.autograd's and torch.func's remaining names in chainrule.autograd and chainrule.func:
Variable, gradcheck with PyTorch's keywords, the engine switches, grad_and_value, linearize,
functional_call, stack_module_state, replace_all_batch_norm_modules_ and the identities."""

from importlib import import_module

import numpy as np
import pytest

import chainrule
from chainrule import autograd, func, nn
from chainrule.errors import DomainError, DTypeError, GraphError, ShapeError


def test_function_and_gradchecks_are_chainrules_own():
    assert autograd.Function is chainrule.Function
    assert autograd.gradcheck is import_module("chainrule.gradcheck").gradcheck_as_torch
    assert autograd.gradgradcheck is import_module("chainrule.gradcheck").gradgradcheck_as_torch
    assert {"Function", "gradcheck", "Variable"} <= set(dir(autograd))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        autograd.nope  # noqa: B018


def test_gradcheck_takes_pytorch_keywords_and_a_single_tensor(torch):
    x = chainrule.tensor([0.3, -1.2], dtype=chainrule.float64, requires_grad=True)
    options = dict(eps=1e-6, atol=1e-5, rtol=1e-3, nondet_tol=0.0, check_undefined_grad=True,
                   fast_mode=False, masked=None)  # fmt: skip
    assert autograd.gradcheck(lambda t: t.sin() * t, x, **options) is True
    t = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: t.sin() * t, t, **options)
    g = chainrule.tensor([1.0, 2.0], dtype=chainrule.float64)
    assert autograd.gradgradcheck(
        lambda t: t.sin() * t, x, grad_outputs=g, check_fwd_over_rev=False
    )


def test_gradcheck_raises_on_request_and_refuses_unknown_keywords():
    class WrongSin(chainrule.Function):
        def forward(self, x):
            return np.sin(x)

        def backward(self, g):
            return g  # should be cos(x) * g

    x = chainrule.tensor([0.5], dtype=chainrule.float64, requires_grad=True)
    assert not chainrule.gradcheck(WrongSin.apply, [x])  # a falsy report
    assert autograd.gradcheck(WrongSin.apply, [x], raise_exception=False) is False
    with pytest.raises(GraphError, match="gradcheck: backward disagrees"):
        autograd.gradcheck(WrongSin.apply, [x])  # PyTorch's default: raise
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['bogus'\]"):
        autograd.gradcheck(WrongSin.apply, [x], bogus=1)


def test_variable_is_a_detached_tensor_like_pytorch(torch):
    x = chainrule.ones(2, requires_grad=True)
    v = autograd.Variable(x * 2)
    tv = torch.autograd.Variable(torch.ones(2, requires_grad=True) * 2)
    assert (v.requires_grad, v.grad_fn, v.is_leaf) == (tv.requires_grad, tv.grad_fn, tv.is_leaf)
    assert autograd.Variable(x, requires_grad=True).requires_grad
    assert isinstance(chainrule.zeros(1), autograd.Variable)
    assert autograd.Variable().shape == tuple(torch.autograd.Variable().shape) == (0,)
    with pytest.raises(DTypeError, match="Variable: data has to be a Tensor, got list"):
        autograd.Variable([1.0])
    with pytest.raises(GraphError, match=r"variable\(...\) is deprecated"):
        autograd.variable([1.0])


def test_set_detect_anomaly_as_function_and_context():
    assert not autograd.state.anomaly
    switch = autograd.set_detect_anomaly(True)
    assert autograd.state.anomaly
    switch.__exit__(None, None, None)
    assert not autograd.state.anomaly
    x = chainrule.tensor([0.0], requires_grad=True)
    with autograd.set_detect_anomaly(True), pytest.raises(GraphError, match="backward produced"):
        x.sqrt().backward()
    assert not autograd.state.anomaly
    with pytest.raises(DomainError, match="check_nan=False is not supported"):
        autograd.set_detect_anomaly(True, check_nan=False)


def test_engine_switches_match_pytorch_answers(torch):
    assert autograd.is_multithreading_enabled() is torch.autograd.is_multithreading_enabled()
    with autograd.set_multithreading_enabled(False):
        assert not autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()
    assert autograd.is_view_replay_enabled() is torch.autograd.is_view_replay_enabled()
    assert autograd.kineto_available() is False
    with autograd.enforce_grad_layout_policy(False):
        w = chainrule.ones(2, requires_grad=True)
        (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]
    assert autograd.is_tensor_like(chainrule.ones(1)) and not autograd.is_tensor_like(1.0)


def test_grad_and_value_and_linearize_match_pytorch(torch):
    x = np.array([0.5, -1.0, 2.0])

    def f(lib):
        return lambda t: (t.sin() * t).sum()

    g, value = func.grad_and_value(f(chainrule))(chainrule.tensor(x))
    tg, tvalue = torch.func.grad_and_value(f(torch))(torch.tensor(x))
    np.testing.assert_allclose(g.data, tg.numpy())
    assert value.item() == pytest.approx(tvalue.item())
    (g, (value, aux)) = func.grad_and_value(lambda t: ((t * t).sum(), 7), has_aux=True)(
        chainrule.tensor(x)
    )
    assert aux == 7 and g.tolist() == (2 * x).tolist()
    out, jvp_fn = func.linearize(lambda t: t.exp() * t, chainrule.tensor(x))
    tout, tjvp_fn = torch.func.linearize(lambda t: t.exp() * t, torch.tensor(x))
    tangent = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(out.data, tout.numpy())
    np.testing.assert_allclose(jvp_fn(chainrule.tensor(tangent)).data,
                               tjvp_fn(torch.tensor(tangent)).numpy())  # fmt: skip
    with pytest.raises(ValueError, match="jvp_fn expects 1 tangents"):
        jvp_fn()


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def test_functional_call_matches_pytorch_with_gradients(torch):
    theirs = _mlp(torch).double()
    ours = _mlp(chainrule)
    params = {k: v.detach().numpy() for k, v in theirs.named_parameters()}
    x = np.random.default_rng(0).normal(size=(5, 3))
    mine = {k: chainrule.tensor(v, requires_grad=True) for k, v in params.items()}
    ref = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    func.functional_call(ours, mine, chainrule.tensor(x)).sum().backward()
    torch.func.functional_call(theirs, ref, torch.tensor(x)).sum().backward()
    for k in params:
        np.testing.assert_allclose(mine[k].grad.data, ref[k].grad.numpy(), rtol=1e-12)
    assert ours[0].weight.dtype == np.float32  # the module's own parameters are back
    split = [{k: v for k, v in mine.items() if k.startswith("0.")},
             {k: v for k, v in mine.items() if k.startswith("2.")}]  # fmt: skip
    out = func.functional_call(ours, split, args=(chainrule.tensor(x),), kwargs={})
    np.testing.assert_allclose(out.data, func.functional_call(ours, mine, chainrule.tensor(x)).data)


def test_functional_call_ties_shared_weights_and_checks_names():
    first, second = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
    second.weight = first.weight  # one Parameter under two names
    net = nn.Sequential(first, second)
    eye = chainrule.eye(2) * 3
    out = func.functional_call(net, {"0.weight": eye}, chainrule.ones(1, 2))
    assert out.tolist() == [[9.0, 9.0]]  # both uses saw the new weight
    untied = func.functional_call(net, {"0.weight": eye}, chainrule.ones(1, 2), tie_weights=False)
    assert untied.tolist() != out.tolist()
    with pytest.raises(DomainError, match=r"has no parameter or buffer named \['nope'\]"):
        func.functional_call(net, {"nope": eye}, chainrule.ones(1, 2))
    with pytest.raises(DomainError, match=r"strict=True and \['1.weight'\] were not given"):
        func.functional_call(net, {"0.weight": eye}, chainrule.ones(1, 2), tie_weights=False,
                             strict=True)  # fmt: skip
    with pytest.raises(DomainError, match="appear in more than one of the dicts"):
        func.functional_call(net, [{"0.weight": eye}, {"0.weight": eye}], chainrule.ones(1, 2))


def test_stack_module_state_runs_an_ensemble_under_vmap(torch):
    models = [_mlp(chainrule) for _ in range(3)]
    params, buffers = func.stack_module_state(models)
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].requires_grad
    x = chainrule.randn(5, 3)

    def one(p, b):
        return func.functional_call(models[0], (p, b), (x,))

    together = func.vmap(one)(params, buffers)
    for i, model in enumerate(models):
        np.testing.assert_allclose(together.data[i], model(x).data, rtol=1e-5, atol=1e-6)
    tparams, _ = torch.func.stack_module_state([_mlp(torch) for _ in range(3)])
    assert sorted(tparams) == sorted(params)
    with pytest.raises(DomainError, match="got no models"):
        func.stack_module_state([])
    with pytest.raises(ShapeError, match="'0.weight' has different shapes"):
        func.stack_module_state([nn.Sequential(nn.Linear(3, 4)), nn.Sequential(nn.Linear(2, 4))])


def test_replace_all_batch_norm_modules_matches_pytorch(torch):
    ours = nn.Sequential(nn.BatchNorm1d(3), nn.InstanceNorm1d(3, track_running_stats=True))
    theirs = torch.nn.Sequential(torch.nn.BatchNorm1d(3),
                                 torch.nn.InstanceNorm1d(3, track_running_stats=True))  # fmt: skip
    assert func.replace_all_batch_norm_modules_(ours) is ours
    torch.func.replace_all_batch_norm_modules_(theirs)
    for mine, ref in zip(ours, theirs):
        assert (mine.running_mean is None) == (ref.running_mean is None)
        assert mine.track_running_stats == ref.track_running_stats
    x = np.random.default_rng(1).normal(size=(4, 3))
    np.testing.assert_allclose(ours[0](chainrule.tensor(x)).data,
                               theirs[0](torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               atol=1e-5)  # fmt: skip
    ours.eval()
    assert ours[0](chainrule.tensor(x)).shape == (4, 3)  # eval uses batch statistics now


def test_debug_unwrap_and_functionalize():
    x = chainrule.ones(2)
    assert func.debug_unwrap(x) is x
    shapes = []
    func.vmap(lambda t: shapes.append(func.debug_unwrap(t, recurse=False).shape) or t)(
        chainrule.zeros(4, 2)
    )
    assert shapes == [(4, 2)]
    f = lambda t: t * 2  # noqa: E731
    assert func.functionalize(f) is f
    assert func.functionalize(f, remove="mutations_and_views") is f
    with pytest.raises(DomainError, match="remove must be 'mutations'"):
        func.functionalize(f, remove="views")
