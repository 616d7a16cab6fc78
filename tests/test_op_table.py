"""The op table is complete: every row carries its kind, batching rule (or says it loops),
FLOP count (or says it is not counted) and docstring, and every batching rule gives what the
per-example loop gives on the row's own test case."""

import numpy as np
import pytest
from cases import CASES
from hypothesis import given
from hypothesis import strategies as st
from strategies import array

import chainrule
from chainrule import func
from chainrule.op import KINDS, NOT_COUNTED, Loops
from chainrule.ops import REGISTRY

ROWS = sorted(REGISTRY)


@pytest.mark.parametrize("name", ROWS)
def test_every_row_states_its_kind_batching_flops_and_doc(name):
    op = REGISTRY[name]
    assert op.kind in KINDS
    assert callable(op.batch) or isinstance(op.batch, Loops), f"{name}: no batching rule"
    assert callable(op.flops) or op.flops is NOT_COUNTED, f"{name}: no FLOP formula or marker"
    assert op.kind != "contraction" or callable(op.flops)
    assert op.__doc__ and op.__doc__.strip().endswith("."), f"{name}: no one-line doc"
    if op.vjp is not None:
        assert op.jvp is not None, f"{name}: differentiable but without forward mode"


def test_rows_that_loop_under_vmap_say_why():
    looping = {
        name: op.batch.reason for name, op in REGISTRY.items() if isinstance(op.batch, Loops)
    }
    # In-place writes and the indices of max/min are read per example on purpose; nothing else.
    # nonzero: each example has its own number of non-zero elements, so no batched result;
    # unique and bincount likewise (as many values as are distinct, bins as the largest + 1),
    # and unique_consecutive (as many values as runs of equal ones). cross_entropy and nll_loss
    # with class indices: their targets' index is built for one example's shape. batch_norm
    # and batch_norm_eval: their (C,) operands meet x's dim 1, which a batch dim in front moves.
    # lstm_scan and rnn_scan: a layer's recurrence runs once per example.
    assert set(looping) == {
        "fill", "copy_into", "index_put", "copy_slices", "max", "min", "nonzero", "unique",
        "bincount", "unique_consecutive", "cross_entropy", "nll_loss", "lstm_scan", "rnn_scan",
        "batch_norm", "batch_norm_eval",
    }  # fmt: skip
    assert all(reason for reason in looping.values())


def test_a_row_must_declare_its_kind_and_a_contraction_its_flops():
    with pytest.raises(ValueError, match="kind must be one of"):
        chainrule.Op("twice", lambda x: 2 * x, vjp=(lambda g: 2 * g,), kind="math", doc="2x.")
    with pytest.raises(ValueError, match="must give its flops"):
        chainrule.Op("dot2", np.dot, vjp=None, kind="contraction", doc="A dot product.")


METHOD_ROWS = sorted(name for name, op in REGISTRY.items() if op.method)


def test_only_a_row_of_one_input_can_be_a_method():
    with pytest.raises(ValueError, match="method=True is for rows of one input"):
        chainrule.Op("add2", np.add, vjp=(None, None), kind="elementwise", method=True, doc=".")


@pytest.mark.parametrize("name", METHOD_ROWS)
def test_a_method_row_is_the_tensor_method_of_its_name(name):
    op, x = REGISTRY[name], np.array([[0.25, 1.5, 0.75]]).T  # a strided input
    ours = chainrule.tensor(x, requires_grad=True)
    method = getattr(chainrule.Tensor, name)
    assert method.__doc__ == op.__doc__ and method.__qualname__ == f"Tensor.{name}"
    out = getattr(ours, name)()
    assert out.grad_fn is None if op.vjp is None else out.grad_fn.name == name
    np.testing.assert_array_equal(out.detach().numpy(), op(chainrule.tensor(x)).numpy())


def test_every_public_row_that_pytorch_has_as_a_tensor_method_is_one(torch):
    from chainrule import ops

    public = [name for name in ops.__all__ if getattr(ops, name) is REGISTRY.get(name)]
    missing = [
        name
        for name in public
        if hasattr(torch.Tensor, name) and not hasattr(chainrule.Tensor, name)
    ]
    assert not missing, f"declare these rows with method=True or write the method: {missing}"


#: A case whose index is made from its input's values: one example's mask picks a different
#: number of elements than another's, so no batched run can hold the result (JAX refuses it
#: too); vmap loops there by design.
VALUE_DEPENDENT_SHAPES = {"index[mask]"}


def _batched_case(name):
    """The case of a row with a batching rule, or None (a row that loops, a composed
    function's case, or a case whose output shape depends on its input values)."""
    op = REGISTRY.get(name.split("[")[0])
    if op is None or isinstance(op.batch, Loops) or name in VALUE_DEPENDENT_SHAPES:
        return None
    return CASES[name]


BATCHED = [name for name in sorted(CASES) if _batched_case(name) is not None]


@pytest.mark.parametrize("name", BATCHED)
@given(data=st.data(), size=st.integers(1, 3))
def test_every_batching_rule_runs_once_and_matches_the_per_example_loop(name, data, size):
    case = CASES[name]
    shapes = data.draw(case.shapes, label="shapes")
    domains = case.inputs_domain(len(shapes))
    batches = [
        np.stack([data.draw(array(s, d), label=f"x{i}[{b}]") for b in range(size)])
        for i, (s, d) in enumerate(zip(shapes, domains))
    ]
    inputs = [chainrule.from_numpy(b) for b in batches]
    calls = []

    def fn(*xs):
        calls.append(1)
        return case.fn(chainrule, *xs) if case.needs_lib else case.fn(*xs)

    ours = func.vmap(fn)(*inputs)
    assert len(calls) == 1, f"{name}: vmap fell back to the per-example loop"
    outs = list(ours) if isinstance(ours, (tuple, list)) else [ours]
    for k, out in enumerate(outs):
        examples = []
        for b in range(size):
            result = fn(*[chainrule.from_numpy(x[b, ...]) for x in batches])
            examples.append(
                np.asarray(
                    (list(result) if isinstance(result, (tuple, list)) else [result])[k].data
                )
            )
        np.testing.assert_allclose(out.data, np.stack(examples), rtol=1e-12, atol=1e-12)
