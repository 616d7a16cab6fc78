"""chainrule.compile on the op table: each case of CASES (test_ops.py's ids) as a compiled step
(forward, backward from a weighted sum of its outputs), called on three different input sets
of one shape (the first two record, the third replays); the replay's outputs and the inputs'
.grad equal eager mode's on the same inputs, bit for bit. Then the ops whose index or mask is
an argument of the step, with new values at each call."""

import warnings

import numpy as np
import pytest
from cases import CASES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import array, reals

import chainrule
from chainrule.nn import functional as F
from chainrule.ops import REGISTRY

NAMES = sorted(CASES)

#: Cases whose output shape depends on the values drawn: they replay when the first two calls
#: happen to agree on it, and run eagerly when not (either way, as eager mode).
SHAPED_BY_VALUES = {"bincount", "nonzero", "nonzero[argwhere]", "nonzero[as_tuple]", "unique",
                    "unique[dim]", "unique_consecutive", "unique_consecutive[dim]"}  # fmt: skip
#: Cases that read values into NumPy (a graph break), and why: they replay in pieces, the
#: Python run again around the read (or, where it decides otherwise, eagerly from there).
IN_PIECES = {
    "lstsq": "the rank, from singular values read with .numpy(), decides the residuals",
    "lstsq[gelsd]": "the rank, from singular values read with .numpy(), decides the residuals",
    "lstsq[gels_vector]": "the rank, from singular values read with .numpy(), decides the "
    "residuals",
    "cholesky_ex": "info is computed from A.numpy() (chainrule/linalg/decompositions.py)",
    "inv_ex": "info is computed from A.numpy() (chainrule/linalg/inverses.py)",
    "solve_ex": "info is computed from A.numpy() (chainrule/linalg/inverses.py)",
}
#: Ops whose backward rule has a second formula for Tensors (the form create_graph needs),
#: which the tracer records, while eager mode runs the array formula: their gradients agree
#: to rounding, not bit for bit.
NOT_EXACT = {"det", "logcumsumexp", "prod", "cumprod"}


def _grad_inputs(case, n):
    return tuple(range(n)) if case.grad_inputs is None else case.grad_inputs


def _differentiable(name):
    op = REGISTRY.get(name.split("[")[0])
    return op is None or op.vjp is not None


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _elements(shape, domain):
    """Arrays of ``shape`` in ``domain``; a distinct() domain as unique reals, so that three
    different input sets exist even for one or two elements."""
    if isinstance(domain, tuple) and domain[0] == "distinct":
        return hnp.arrays(np.float64, shape, elements=reals(domain[1], domain[2]), unique=True)
    return array(shape, domain)


def _three_input_sets(case):
    """Three input sets of one shape drawn for ``case``, each input different in each set."""
    drawn = []

    @settings(max_examples=1, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(data=st.data())
    def draw(data):
        shapes = data.draw(case.shapes, label="shapes")
        sets = st.tuples(
            *[_elements(s, d) for s, d in zip(shapes, case.inputs_domain(len(shapes)))]
        )
        keys = tuple((lambda t, i=i: t[i].tobytes()) for i in range(len(shapes)))
        drawn.append(data.draw(st.lists(sets, min_size=3, max_size=3, unique_by=keys)))

    draw()
    return drawn[-1]


def _step(case):
    """The compiled step: the case's outputs, and its inputs' .grad from sum(out * weights)."""

    def step(*inputs):
        outs = _outputs(case.fn(chainrule, *inputs) if case.needs_lib else case.fn(*inputs))
        terms = [
            (o * chainrule.tensor(np.random.default_rng(k).standard_normal(o.shape))).sum()
            for k, o in enumerate(outs)
            if o.requires_grad
        ]
        if terms:
            sum(terms[1:], terms[0]).backward()
        return tuple(o.detach() for o in outs)

    return step


def _assert_same(a, b, inexact=False):
    assert a.shape == b.shape and a.dtype == b.dtype
    if inexact:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    else:
        assert np.array_equal(a, b, equal_nan=True), f"{a} != {b}"


def _run_both(step, compiled, arrays, wants_grad, inexact=False):
    """The step eagerly and compiled on fresh tensors of ``arrays``: equal outputs and .grad."""
    pair = [
        [chainrule.from_numpy(a.copy()).requires_grad_(bool(g)) for a, g in zip(arrays, wants_grad)]
        for _ in range(2)
    ]
    expected, got = step(*pair[0]), compiled(*pair[1])
    assert len(expected) == len(got)
    for e, o in zip(expected, got):
        _assert_same(e.data, o.data)
    for e, o in zip(*pair):
        assert (e.grad is None) == (o.grad is None)
        if e.grad is not None:
            _assert_same(e.grad.data, o.grad.data, inexact)


@pytest.mark.parametrize("name", NAMES)
def test_a_compiled_case_replays_eager_values_and_gradients(name):
    case = CASES[name]
    sets = _three_input_sets(case)
    wanted = _grad_inputs(case, len(sets[0])) if _differentiable(name) else ()
    wants_grad = [i in wanted for i in range(len(sets[0]))]
    step = _step(case)
    compiled = chainrule.compile(step, backend="numpy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for arrays in sets:
            _run_both(step, compiled, arrays, wants_grad, name.split("[")[0] in NOT_EXACT)
    said = [str(w.message) for w in caught if str(w.message).startswith("compile(")]
    if name in SHAPED_BY_VALUES:
        # replayed, or said why not, or (the first two records disagreeing) recorded again
        assert compiled.stats["replayed"] == 1 or said or compiled.stats["traced"] == 3
    elif name in IN_PIECES:
        assert [eq for eq in compiled.program.equations if eq.kind == "read"], "no graph break"
        assert compiled.stats["replayed"] == 1 or said
    else:
        assert not said, said
        assert compiled.stats == {"traced": 2, "replayed": 1, "eager": 0}


def test_the_eager_set_names_only_cases_that_exist():
    assert set(IN_PIECES) | SHAPED_BY_VALUES <= set(CASES)
    assert {name.split("[")[0] for name in CASES} >= NOT_EXACT


# Indices and masks as arguments of the step, with new values at each call: the index work
# done in NumPy runs again at each replay (`observe.replayed_whole`).


def _distinct_rows(rng, high, rows, columns):
    """(rows, columns) positions below ``high``, distinct down each column."""
    return np.stack([rng.permutation(high)[:rows] for _ in range(columns)], axis=1)


def _image_grid(rng):
    return rng.uniform(-1.6, 1.6, (2, 3, 2, 2))


#: name: (fn(x, *indices), x's shape, the indices (and other inputs) for a numpy Generator).
VARYING = {
    "gather": (lambda x, i: x.gather(1, i), (3, 4), lambda r: [r.integers(0, 4, (3, 2))]),
    "scatter": (
        lambda x, i: x.scatter(0, i, x[:2] * 2),
        (3, 4),
        lambda r: [_distinct_rows(r, 3, 2, 4)],
    ),
    "scatter_add": (
        lambda x, i: x.scatter_add(0, i, x * 2),
        (3, 4),
        lambda r: [r.integers(0, 3, (3, 4))],
    ),
    "scatter_reduce[sum]": (
        lambda x, i: x.scatter_reduce(0, i, x * 2, "sum"),
        (3, 4),
        lambda r: [r.integers(0, 3, (3, 4))],
    ),
    "scatter_reduce[mean]": (
        lambda x, i: x.scatter_reduce(0, i, x * 2, "mean", include_self=False),
        (3, 4),
        lambda r: [r.integers(0, 3, (3, 4))],
    ),
    "scatter_reduce[amax]": (
        lambda x, i: x.scatter_reduce(0, i, x * 0.5 + 1, "amax"),
        (3, 4),
        lambda r: [r.integers(0, 3, (3, 4))],
    ),
    "scatter_reduce[prod]": (
        lambda x, i: x.scatter_reduce(0, i, x + 2, "prod", include_self=False),
        (3, 4),
        lambda r: [r.integers(0, 3, (3, 4))],
    ),
    "index_select": (lambda x, i: x.index_select(1, i), (3, 4), lambda r: [r.integers(0, 4, 5)]),
    "index_add": (
        lambda x, i: x.index_add(0, i, x[:2] * 3, alpha=2),
        (3, 4),
        lambda r: [r.integers(0, 3, 2)],
    ),
    "index_copy": (
        lambda x, i: x.index_copy(1, i, x[:, :2] * 2),
        (3, 4),
        lambda r: [r.permutation(4)[:2]],
    ),
    "index_fill": (lambda x, i: x.index_fill(1, i, -1.0), (3, 4), lambda r: [r.integers(0, 4, 2)]),
    "index_put[accumulate]": (
        lambda x, i: x.index_put((i,), x * 2, accumulate=True),
        (3, 4),
        lambda r: [r.integers(0, 3, 3)],
    ),
    "setitem[tensor]": (lambda x, i: _set(x, i), (3, 4), lambda r: [r.permutation(3)[:2]]),
    "getitem[tensor]": (lambda x, i: x[i, 1:], (3, 4), lambda r: [r.integers(-3, 3, 5)]),
    "take_along_dim": (
        lambda x, i: chainrule.take_along_dim(x, i, 1),
        (3, 4),
        lambda r: [r.integers(0, 4, (3, 2))],
    ),
    "take_along_dim[flat]": (
        lambda x, i: chainrule.take_along_dim(x, i),
        (3, 4),
        lambda r: [r.integers(0, 12, 5)],
    ),
    "masked_fill": (lambda x, m: x.masked_fill(m, 0.5), (3, 4), lambda r: [r.random((3, 4)) < 0.5]),
    "where": (lambda x, m: chainrule.where(m, x, -2 * x), (3, 4), lambda r: [r.random(4) < 0.5]),
    "one_hot": (lambda x, i: F.one_hot(i, 4) * x, (3, 4), lambda r: [r.integers(0, 4, 3)]),
    "embedding": (lambda x, i: F.embedding(i, x), (3, 4), lambda r: [r.integers(0, 3, (2, 3))]),
    "cross_entropy": (
        lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        (3, 4),
        lambda r: [r.integers(0, 4, 3)],
    ),
    "nll_loss[ignore_index]": (
        lambda x, t: F.nll_loss(x.log_softmax(1), t, ignore_index=1),
        (3, 4),
        lambda r: [r.integers(0, 4, 3)],
    ),
    "grid_sample[reflection]": (
        lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
        (2, 1, 3, 4),
        lambda r: [_image_grid(r)],
    ),
    "grid_sample[reflection_aligned]": (
        lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=True),
        (2, 1, 3, 4),
        lambda r: [_image_grid(r)],
    ),
    "grid_sample[nearest_border]": (
        lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border"),
        (2, 1, 3, 4),
        lambda r: [_image_grid(r)],
    ),
}


def _set(x, i):
    y = x * 1
    y[i] = 0.5
    return y


@pytest.mark.parametrize("name", sorted(VARYING))
def test_indices_given_to_a_compiled_step_are_read_again_at_each_replay(name):
    fn, shape, make = VARYING[name]
    step = _step(type("Case", (), {"fn": staticmethod(fn), "needs_lib": False})())
    compiled = chainrule.compile(step, backend="numpy")
    rng = np.random.default_rng(sum(map(ord, name)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no record may run eagerly
        seen = []
        for _ in range(4):
            others = make(rng)
            while any(all(np.array_equal(a, b) for a, b in zip(others, o)) for o in seen):
                others = make(rng)  # equal indices in two calls would keep them in the record
            seen.append(others)
            arrays = [rng.standard_normal(shape)] + [np.asarray(a) for a in others]
            wants_grad = [True] + [a.dtype.kind == "f" for a in arrays[1:]]
            _run_both(step, compiled, arrays, wants_grad)
    assert compiled.stats == {"traced": 2, "replayed": 2, "eager": 0}
