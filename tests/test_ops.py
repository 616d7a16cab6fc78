"""Every tensor op row, every property: generated from the op table (REGISTRY) and CASES."""

import numpy as np
import pytest
from cases import CASES
from conftest import FD_TOL
from hypothesis import given
from hypothesis import strategies as st
from strategies import array

import chainrule
from chainrule import Tensor
from chainrule.autograd import node_order
from chainrule.ops import REGISTRY

NAMES = sorted(CASES)


def test_every_op_has_a_case():
    # Composed functions (silu, ...) have cases too, so CASES may name more than the rows.
    assert set(REGISTRY) <= {name.split("[")[0] for name in CASES}


def _draw_arrays(data, case):
    shapes = data.draw(case.shapes, label="shapes")
    domains = case.inputs_domain(len(shapes))
    return [data.draw(array(s, d), label=f"x{i}") for i, (s, d) in enumerate(zip(shapes, domains))]


def _grad_inputs(case, n):
    return tuple(range(n)) if case.grad_inputs is None else case.grad_inputs


def _run(case, lib, tensors):
    return case.fn(lib, *tensors) if case.needs_lib else case.fn(*tensors)


def _make_inputs(case, arrays, dtype=np.float64, writeable=True):
    inputs = []
    for i, a in enumerate(arrays):
        a = a.astype(dtype)
        a.flags.writeable = writeable
        t = chainrule.from_numpy(a)
        if i in _grad_inputs(case, len(arrays)):
            t.requires_grad_()
        inputs.append(t)
    return inputs


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _differentiable(case_name):
    op = REGISTRY.get(case_name.split("[")[0])
    return op is None or op.vjp is not None


def _ops_in_graph(outputs):
    nodes = node_order([o.grad_fn for o in outputs if o.grad_fn is not None])
    return {getattr(node, "op", None) and node.op.name for node in nodes}


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_case_exercises_its_op(name, data):
    case = CASES[name]
    op = name.split("[")[0]
    outs = _outputs(_run(case, chainrule, _make_inputs(case, _draw_arrays(data, case))))
    if op not in REGISTRY:
        assert any(o.requires_grad for o in outs)
    elif _differentiable(name):
        assert op in _ops_in_graph(outs)
    else:
        assert not any(o.requires_grad for o in outs)


@pytest.mark.parametrize("name", [n for n in NAMES if _differentiable(n)])
@given(data=st.data())
def test_gradient_matches_finite_differences(name, data):
    case = CASES[name]
    inputs = _make_inputs(case, _draw_arrays(data, case))
    tol = dict(FD_TOL) if case.fd_atol is None else {"atol": case.fd_atol, "rtol": 1e-3}
    report = chainrule.gradcheck(lambda *xs: _run(case, chainrule, xs), inputs, **tol)
    assert report, str(report)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_value_and_gradient_match_pytorch(name, data, torch):
    case = CASES[name]
    arrays = _draw_arrays(data, case)
    ours = _make_inputs(case, arrays)
    theirs = [torch.tensor(a, requires_grad=i in _grad_inputs(case, len(arrays)))
              for i, a in enumerate(arrays)]  # fmt: skip
    out = _outputs(_run(case, chainrule, ours))
    expected = _outputs(case.torch_fn(*theirs) if case.torch_fn else _run(case, torch, theirs))
    assert len(out) == len(expected)
    for o, e in zip(out, expected):
        assert o.shape == tuple(e.shape)
        np.testing.assert_allclose(
            o.detach().numpy(), e.detach().numpy(), atol=case.atol, rtol=case.rtol
        )
    if not _differentiable(name):
        return
    vectors = [np.random.default_rng(0).standard_normal(o.shape) for o in out]
    grads = chainrule.autograd.grad(
        [o for o in out if o.requires_grad],
        [t for t in ours if t.requires_grad],
        grad_outputs=[Tensor(v) for o, v in zip(out, vectors) if o.requires_grad],
        allow_unused=True,
    )
    expected_grads = torch.autograd.grad(
        [e for e in expected if e.requires_grad],
        [t for t in theirs if t.requires_grad],
        grad_outputs=[torch.tensor(v) for e, v in zip(expected, vectors) if e.requires_grad],
        allow_unused=True,
    )
    assert len(grads) == len(expected_grads)
    for i, (g, e) in enumerate(zip(grads, expected_grads)):
        # None means the input does not reach the outputs: both libraries must say so.
        assert (g is None) == (e is None), (
            f"input {i}: chainrule's gradient is {'None' if g is None else 'a tensor'}, "
            f"PyTorch's {'None' if e is None else 'a tensor'}"
        )
        if g is not None:
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(
                g.detach().numpy(), e.numpy(), atol=case.atol, rtol=case.rtol
            )


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_float32_stays_float32(name, data):
    case = CASES[name]
    inputs = _make_inputs(case, _draw_arrays(data, case), dtype=np.float32)
    outs = _outputs(_run(case, chainrule, inputs))
    for o in outs:
        if o.dtype.kind == "f" and case.keeps_dtype:
            assert o.dtype == np.float32, f"{name} returned {o.dtype}"
    differentiable = [o for o in outs if o.requires_grad]
    if differentiable:
        chainrule.autograd.backward(
            differentiable, [chainrule.ones_like(o) for o in differentiable]
        )
        for t in inputs:
            if t.grad is not None:
                assert t.grad.dtype == np.float32


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_read_only_inputs_stay_untouched(name, data):
    case = CASES[name]
    arrays = _draw_arrays(data, case)
    copies = [a.copy() for a in arrays]
    inputs = _make_inputs(case, arrays, writeable=False)
    outs = [o for o in _outputs(_run(case, chainrule, inputs)) if o.requires_grad]
    if outs:
        chainrule.autograd.backward(outs, [chainrule.ones_like(o) for o in outs])
    for t, original in zip(inputs, copies):
        np.testing.assert_array_equal(t.detach().numpy(), original)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_non_contiguous_inputs_give_the_same_result(name, data):
    case = CASES[name]
    arrays = _draw_arrays(data, case)
    # The same values as strided views into a larger array.
    strided = []
    for a in arrays:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],) if a.ndim else (2,))
        view = big[..., ::2] if a.ndim else big[::2].reshape(())
        view[...] = a
        strided.append(view)
    results = []
    for variant in (arrays, strided):
        inputs = _make_inputs(case, variant)
        outs = _outputs(_run(case, chainrule, inputs))
        grads = []
        needs = [o for o in outs if o.requires_grad]
        if needs:
            chainrule.autograd.backward(needs, [chainrule.ones_like(o) for o in needs])
            grads = [None if t.grad is None else t.grad.detach().numpy() for t in inputs]
        results.append(([o.detach().numpy() for o in outs], grads))
    (values, grads), (strided_values, strided_grads) = results
    assert len(values) == len(strided_values) and len(grads) == len(strided_grads)
    for first, second in zip(values + grads, strided_values + strided_grads):
        assert (first is None) == (second is None)
        if first is not None:
            np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("name", [n for n in NAMES if _differentiable(n)])
@given(data=st.data())
def test_second_derivative_matches_finite_differences(name, data):
    case = CASES[name]
    inputs = _make_inputs(case, _draw_arrays(data, case))
    tol = dict(FD_TOL) if case.fd_atol is None else {"atol": case.fd_atol, "rtol": 1e-3}
    report = chainrule.gradgradcheck(lambda *xs: _run(case, chainrule, xs), inputs, **tol)
    assert report, str(report)


@pytest.mark.parametrize("name", [n for n in NAMES if _differentiable(n)])
@given(data=st.data())
def test_forward_mode_agrees_with_reverse_mode(name, data):
    # <u, J v> from one jvp must equal <J^T u, v> from one vjp.
    case = CASES[name]
    arrays = _draw_arrays(data, case)
    wanted = _grad_inputs(case, len(arrays))
    rng = np.random.default_rng(0)
    tangents = [rng.standard_normal(a.shape) * (i in wanted) for i, a in enumerate(arrays)]
    primals = [chainrule.from_numpy(a) for a in arrays]
    out, tangent_out = chainrule.func.jvp(
        lambda *xs: _run(case, chainrule, xs), primals, [Tensor(t) for t in tangents]
    )
    outs, tangents_out = _outputs(out), _outputs(tangent_out)
    cotangents = [rng.standard_normal(o.shape) for o in outs]
    forward = sum(float(np.sum(u * t.detach().numpy())) for u, t in zip(cotangents, tangents_out))
    inputs = _make_inputs(case, arrays)
    outs = _outputs(_run(case, chainrule, inputs))
    pairs = [(o, u) for o, u in zip(outs, cotangents) if o.requires_grad]
    grads = chainrule.autograd.grad(
        [o for o, _ in pairs], [inputs[i] for i in wanted],
        grad_outputs=[Tensor(u) for _, u in pairs], allow_unused=True,
    )  # fmt: skip
    reverse = sum(
        float(np.sum(g.detach().numpy() * tangents[i]))
        for i, g in zip(wanted, grads)
        if g is not None
    )
    assert forward == pytest.approx(reverse, rel=max(case.rtol, 1e-9), abs=max(case.atol, 1e-9))
