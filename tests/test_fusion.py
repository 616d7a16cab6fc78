"""Fused kernels (chainrule.compiler.fusion, backend_numba): which equations group, and that a
fused replay gives eager's values and gradients within the documented tolerance; the disk
cache; and the NumPy replay, bit for bit, where Numba cannot be imported."""

import hashlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule.compiler import backend_numba, fusion, passes
from chainrule.nn import functional as F

# The `fast` extra (Numba). Without it the NumPy replay is tested by .ci/run's second pass; in
# CI the extra is installed, so a missing Numba fails here rather than skipping.
if os.environ.get("CI"):
    import numba  # noqa: F401
else:
    pytest.importorskip("numba")

SRC = str(Path(cr.__file__).resolve().parents[1])


@pytest.fixture(autouse=True, scope="module")
def kernel_cache(tmp_path_factory):
    """A fresh kernel cache for this file's tests."""
    folder = tmp_path_factory.mktemp("kernels")
    old = os.environ.get("CHAINRULE_CACHE")
    os.environ["CHAINRULE_CACHE"] = str(folder)
    yield folder
    if old is None:
        del os.environ["CHAINRULE_CACHE"]
    else:
        os.environ["CHAINRULE_CACHE"] = old


def _fused(fn, *args):
    program = cr.make_program(fn)(*args)
    return passes.optimize(program, fusion.passes())


def _groups(program):
    return [[m.name for m in eq.fn.members] for eq in program.equations if eq.kind == "fused"]


def test_a_chain_of_three_ops_becomes_one_group_and_prints_its_members():
    program = _fused(lambda x, y: ((x * y + 1).tanh()).sum(), cr.ones(4, 3), cr.ones(3))
    assert _groups(program) == [["mul", "add", "tanh"]]
    text = str(program)
    assert "= fused[mul, add, tanh](" in text and "| t" in text


def test_a_write_between_members_splits_the_group():
    def f(x, y):
        a = x * 2
        y.add_(1)  # in place: a later read of y must not move before it
        return (a + y).exp()

    program = _fused(f, cr.ones(3), cr.ones(3))
    assert ["mul", "add", "exp"] not in _groups(program)
    assert any(eq.kind == "write" for eq in program.equations)


def test_a_view_is_not_fused_and_an_interior_temp_read_later_stays_an_output():
    def f(x):
        a = x.exp()
        b = (a * 2).T  # a view ends the chain
        return (a + 1).sum() + b.sum(), a.sum()

    program = _fused(f, cr.ones(3, 3))
    for eq in program.equations:
        if eq.kind == "fused":
            assert all(not m.alias for m in eq.fn.members)
    assert all("permute" not in g and "transpose" not in g for g in _groups(program))
    # a (exp's result) is read by the view's mul, outside its group: it is an output there
    fused = [eq for eq in program.equations if eq.kind == "fused"]
    exp_group = [eq for eq in fused if "exp" in [m.name for m in eq.fn.members]]
    if exp_group:
        assert exp_group[0].fn.members[0].outs[0] in exp_group[0].outs


def _gelu_chain(x, approximate):
    return F.gelu(x, approximate=approximate) * 2 + x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: (x * y + 1).tanh() * (1 - x),
        lambda x, y: (x - y).exp() / ((x - y).exp() + 1),  # softmax-like
        lambda x, y: _gelu_chain(x * y, "none"),
        lambda x, y: _gelu_chain(x * y, "tanh"),
        lambda x, y: (x * 0.5).sigmoid() * y.relu() + x.erf(),
    ],
    ids=["tanh", "softmax-like", "gelu", "gelu-tanh", "sigmoid-relu-erf"],
)
def test_fused_values_and_gradients_agree_with_eager(fn, dtype):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(6, 5)).astype(dtype)
    ys = rng.normal(size=(5,)).astype(dtype)  # broadcast along rows

    def step(x, y):
        out = fn(x, y)
        out.sum().backward()
        return out.detach()

    eps = np.finfo(dtype).eps

    def close(got, want):  # a few ulp per element; sums (gradients of broadcasts) by their size
        atol = 16 * eps * np.abs(want).max() * want.size
        np.testing.assert_allclose(got, want, rtol=16 * eps, atol=atol)

    compiled = cr.compile(step)
    for i in range(4):
        x = cr.tensor(xs * (1 + i), requires_grad=True)
        y = cr.tensor(ys, requires_grad=True)
        got = compiled(x, y)
        x0 = cr.tensor(xs * (1 + i), requires_grad=True)
        y0 = cr.tensor(ys, requires_grad=True)
        want = step(x0, y0)
        assert got.dtype == want.dtype == dtype
        close(got.numpy(), want.numpy())
        close(x.grad.numpy(), x0.grad.numpy())
        close(y.grad.numpy(), y0.grad.numpy())
    assert compiled.stats["replayed"] == 2
    assert any(eq.kind == "fused" for eq in compiled.program.equations)


def test_arithmetic_alone_is_bit_identical_and_takes_strided_inputs():
    compiled = cr.compile(lambda x, y: (x * y + x) / (y - 3) * 2)
    base = np.random.default_rng(1).normal(size=(8, 6))
    for _ in range(3):
        x = cr.tensor(base)[:, ::2]  # a strided view
        y = cr.tensor(base[0, ::2])
        got = compiled(x, y)
        assert np.array_equal(got.numpy(), ((x * y + x) / (y - 3) * 2).numpy())
    assert _groups(compiled.program) == [["mul", "add", "div", "mul"]]  # y - 3 has y's shape


def test_an_mlp_step_trains_as_eager_within_tolerance():
    def make():
        cr.manual_seed(0)
        model = cr.nn.Sequential(cr.nn.Linear(3, 8), cr.nn.Tanh(), cr.nn.Linear(8, 1))
        opt = cr.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return model, step

    (m0, eager), (m1, step) = make(), make()
    compiled = cr.compile(step)
    rng = np.random.default_rng(2)
    for _ in range(6):
        x = cr.tensor(rng.normal(size=(16, 3)).astype(np.float32))
        y = cr.tensor(rng.normal(size=(16, 1)).astype(np.float32))
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-5)
    for p, q in zip(m0.parameters(), m1.parameters()):
        assert q.dtype == p.dtype == cr.float32
        np.testing.assert_allclose(q.data, p.data, rtol=1e-5, atol=1e-6)
    assert any(eq.kind == "fused" for eq in compiled.program.equations)


def test_fusion_is_off_for_the_numpy_backends_and_the_option():
    def f(x):
        return (x * 2 + 1).exp()

    for compiled in (cr.compile(f, backend="eager"), cr.compile(f, options={"fuse": False})):
        for _ in range(3):
            compiled(cr.ones(3))
        assert all(eq.kind != "fused" for eq in compiled.program.equations)


def _run(code: str, cache: Path, block_numba: bool = False) -> str:
    prefix = "import sys; sys.modules['numba'] = None\n" if block_numba else ""
    env = {**os.environ, "CHAINRULE_CACHE": str(cache), "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", prefix + code], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


_PROGRAM = """
import warnings
warnings.simplefilter("error")
import numpy as np
import chainrule as cr
from chainrule.compiler import backend_numba
def f(x, y):
    return ((x * y + 1).tanh() * x - y).exp()
compiled = cr.compile(f)
rng = np.random.default_rng(0)
for _ in range(3):
    x, y = cr.tensor(rng.normal(size=(5, 4))), cr.tensor(rng.normal(size=(4,)))
    got = compiled(x, y)
    same = np.array_equal(got.numpy(), f(x, y).numpy())
kinds = [eq.kind for eq in compiled.program.equations]
print(same, "fused" in kinds, backend_numba.COUNTS["compiled"], "numba" in sys.modules and
      sys.modules["numba"] is not None)
"""


def test_a_second_process_loads_the_kernels_from_the_disk_cache(tmp_path):
    first = _run("import sys\n" + _PROGRAM, tmp_path).split()
    second = _run("import sys\n" + _PROGRAM, tmp_path).split()
    assert first[1:3] == ["True", "1"] and second[1:3] == ["True", "0"]
    assert list(tmp_path.glob("k*.py")) and list((tmp_path / "__pycache__").glob("*.nbi"))


def test_without_numba_the_numpy_replay_runs_bit_for_bit_and_silently(tmp_path):
    out = _run("import sys\n" + _PROGRAM, tmp_path, block_numba=True).split()
    assert out == ["True", "False", "0", "False"]
    assert not list(tmp_path.iterdir())


def test_importing_chainrule_does_not_import_numba(tmp_path):
    code = "import sys, chainrule; print('numba' in sys.modules)"
    assert _run(code, tmp_path).strip() == "False"


def test_identical_groups_share_one_kernel():
    program = _fused(lambda x, y: ((x * 2 + 1).exp(), (y * 2 + 1).exp()), cr.ones(3), cr.ones(3))
    first, second = [eq.fn for eq in program.equations if eq.kind == "fused"]
    assert first.source() == second.source() and first.kernel is second.kernel
    assert backend_numba.cache_dir() == Path(os.environ["CHAINRULE_CACHE"])


def test_a_kernel_names_the_source_of_each_rows_scalar_form_it_calls():
    # Numba's disk cache is keyed by the kernel's file: a changed row must change the file.
    program = _fused(lambda x: (x * 2).relu() + 1, cr.ones(3))
    (group,) = [eq.fn for eq in program.equations if eq.kind == "fused"]
    relu = next(m.fn for m in group.members if m.name == "relu")
    digest = hashlib.sha256(inspect.getsource(relu.scalar).encode()).hexdigest()[:12]
    assert f"numba.njit(REGISTRY['relu'].scalar)  # {digest}" in group.source()


@pytest.mark.parametrize("rows", [6, 64])
def test_inputs_broadcast_along_the_last_axis_are_taken_one_element_per_row(rows):
    compiled = cr.compile(lambda x, c, r: (x * c + r) * 3 - r)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = cr.tensor(rng.normal(size=(8, rows, 16)))
        c = cr.tensor(rng.normal(size=(rows, 1)))  # 1 on the last axis: one element per row
        r = cr.tensor(rng.normal(size=(16,)))
        got = compiled(x, c, r)
        assert np.array_equal(got.numpy(), ((x * c + r) * 3 - r).numpy())
    assert _groups(compiled.program) == [["mul", "add", "mul", "sub"]]
    kernel = compiled.program.equations[-1].fn
    if rows == 64:  # 8,192 elements: the kernel loops over rows
        assert kernel.rows and backend_numba.ROWS_FROM <= 8 * 64 * 16
        assert kernel.arguments(["x", "c", "r"]) == [
            "ascontiguousarray(x)", "c[..., 0]", "ascontiguousarray(r)"
        ]  # fmt: skip
    else:  # one element at a time, NumPy broadcasting the arrays as they are
        assert not kernel.rows and kernel.arguments(["x", "c", "r"]) == ["x", "c", "r"]


def test_fused_outputs_write_into_the_memory_plans_buffers_but_results_stay_their_own():
    def f(x, w):
        h = (x @ w).tanh() * 2 + 1  # read only by the product below: a planned buffer
        return ((h @ w.T) * 3).exp() - 1  # the result: never a buffer

    compiled = cr.compile(f)
    rng = np.random.default_rng(4)
    kept = []
    for _ in range(4):
        x, w = cr.tensor(rng.normal(size=(5, 3))), cr.tensor(rng.normal(size=(3, 3)))
        kept.append((compiled(x, w), f(x, w).numpy()))
    for got, want in kept:  # later calls wrote into their buffers, not into earlier results
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
    fused = [eq for eq in compiled.program.equations if eq.kind == "fused"]
    assert fused[0].buffer is not None and fused[1].buffer is None
    assert f"out=(B{fused[0].buffer[0]}, )" in compiled.program.replay_source()


def _rows_loss(F_, x, w, b, g):
    """A layer norm after an add, softmax and log_softmax of it: their backward chains end
    in sums over the last axis."""
    y = F_.layer_norm(x * 2 + 1, (x.shape[-1],), w, b)
    return (F_.softmax(y * g, -1) * y).sum() + (F_.log_softmax(y, -1) * g).sum()


def test_layer_norm_and_the_sums_that_end_a_chain_fuse_into_row_kernels():
    def step(x, w, b, g):
        loss = _rows_loss(F, x, w, b, g)
        loss.backward()
        return loss.detach()

    x, g = cr.ones(4, 3, 8, requires_grad=True), cr.ones(4, 3, 8)
    program = _fused(step, x, cr.ones(8, requires_grad=True), cr.ones(8, requires_grad=True), g)
    groups = _groups(program)
    assert ["mul", "add", "layer_norm"] in [group[:3] for group in groups]
    assert any("softmax" in group for group in groups)  # softmax's forward, a row op too
    backward = [group for group in groups if "sum" in group]
    assert backward and any(group.count("sum") >= 4 for group in backward)  # layer norm's
    text = str(program)
    assert "| t" in text and "layer_norm(" in text
    fused = [eq for eq in program.equations if eq.kind == "fused" and "sum" in eq.fn.name]
    assert "_block(w0, 0, 8)" in fused[0].fn.source()  # a scratch row, summed pairwise


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
def test_row_kernels_agree_with_eager_and_pytorch(dtype, layout, torch):
    rng = np.random.default_rng(5)
    # 16 x 20 rows of 40: eager sums these rows through a BLAS product (another order)
    base = rng.normal(size=(20, 16, 80)).astype(dtype)
    ws, bs = rng.normal(size=(2, 40)).astype(dtype)
    gs = rng.normal(size=(16, 20, 40)).astype(dtype)

    def view(array):
        if layout == "strided":
            return array.transpose(1, 0, 2)[..., ::2]
        picked = np.ascontiguousarray(array[..., :40]).transpose(1, 0, 2)
        return picked if layout == "transposed" else picked.copy()

    def step(x, w, b, g):
        loss = _rows_loss(F, x, w, b, g)
        loss.backward()
        return loss.detach()

    eps = np.finfo(dtype).eps
    compiled = cr.compile(step)
    for i in range(3):
        xs = view(base * (1 + i))
        got_in = [cr.tensor(a, requires_grad=True) for a in (xs, ws, bs)]
        want_in = [cr.tensor(a.copy(), requires_grad=True) for a in (xs, ws, bs)]
        got = compiled(*got_in, cr.tensor(gs))
        want = step(*want_in, cr.tensor(gs))
        assert got.dtype == want.dtype == dtype
        # sums in another order than eager's: within a few ulp of the sums of |terms|
        np.testing.assert_allclose(got.item(), want.item(), rtol=64 * eps)
        for a, b in zip(got_in, want_in):
            scale = np.abs(b.grad.numpy()).max()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0,
                                       atol=256 * eps * scale)  # fmt: skip
    assert compiled.stats["replayed"] == 1
    assert any("layer_norm" in group for group in _groups(compiled.program))
    t_in = [torch.tensor(a.copy(), requires_grad=True) for a in (xs, ws, bs)]
    loss = _rows_loss(torch.nn.functional, *t_in, torch.tensor(gs))
    loss.backward()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.item(), loss.item(), rtol=tol)
    for a, t in zip(got_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [1, 7, 8, 29, 130, 300])  # 130, 300: halves, then blocks
def test_a_fused_row_sum_is_numpys_pairwise_sum_bit_for_bit(n):
    compiled = cr.compile(lambda x: (x * 1.5).sum(-1, keepdim=True) * 3 + x)
    rng = np.random.default_rng(n)
    for _ in range(3):  # 3 rows: eager sums them with NumPy's own pairwise loop
        x = cr.tensor(rng.normal(size=(3, n)).astype(np.float32) * 100)
        got = compiled(x)
        assert np.array_equal(got.numpy(), ((x * 1.5).sum(-1, keepdim=True) * 3 + x).numpy())
    if n > 1:
        assert _groups(compiled.program) == [["mul", "sum", "mul", "add"]]


def test_a_rows_value_read_outside_its_kernel_comes_back_with_its_last_axis_of_1():
    def f(x, w):
        s = (x * 2).sum(-1, keepdim=True)  # read by the product below and returned
        t = (x * 3).sum(-1, keepdim=True) + 1  # read only by the product: a planned buffer
        return (x - s) * 2, s, (s @ w) + (t @ w)

    compiled = cr.compile(f)
    rng = np.random.default_rng(6)
    for _ in range(3):  # 5 rows of 40: eager sums them in NumPy's order, as the kernel does
        x, w = cr.tensor(rng.normal(size=(5, 40))), cr.tensor(rng.normal(size=(1, 3)))
        for got, want in zip(compiled(x, w), f(x, w)):
            assert got.shape == want.shape and np.array_equal(got.numpy(), want.numpy())
    fused = [eq for eq in compiled.program.equations if eq.kind == "fused"]
    rows = [v for eq in fused for v in eq.outs if eq.fn.is_row(v)]
    assert len(rows) == 2 and any(eq.buffer for eq in fused)
    source = compiled.program.replay_source()
    assert "[..., None]" in source and "[..., 0], )" in source  # a row buffer, without its 1


def test_a_float32_exp_in_a_kernel_is_within_2_ulp_of_numpys_at_every_value():
    compiled = cr.compile(lambda x: (x * 1.0).exp() + 0)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.73, 89.0, -87.3, -103.0, -104.0, 1e30]
    rng = np.random.default_rng(7)
    for _ in range(3):
        xs = np.concatenate([rng.uniform(-105, 90, 5000), special]).astype(np.float32)
        got = compiled(cr.tensor(xs)).numpy()
        with np.errstate(over="ignore"):
            want = np.exp(xs)
        assert got.dtype == np.float32
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.isinf(got), np.isinf(want))
        finite = np.isfinite(want)
        apart = np.abs(got[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32))
        assert apart.max() <= 2
    assert "_exp32" in compiled.program.equations[-1].fn.source()  # the vectorized exp


def test_a_float32_erf_in_a_kernel_is_eager_modes_within_1_ulp():
    compiled = cr.compile(lambda x: x.erf() * 2)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.9, 4.0, 4.1, -10.0, 1e-30]
    rng = np.random.default_rng(8)
    for _ in range(3):
        xs = np.concatenate([rng.uniform(-5, 5, 5000), special]).astype(np.float32)
        got = compiled(cr.tensor(xs)).numpy()
        want = (cr.tensor(xs).erf() * 2).numpy()
        assert got.dtype == np.float32 and np.array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        apart = np.abs(got[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32))
        assert apart.max() <= 1 and np.array_equal(np.signbit(got), np.signbit(want))
    assert "_erf32" in compiled.program.equations[-1].fn.source()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_a_fused_softmax_keeps_eagers_nan_and_masked_rows(dtype, name):
    # its row maximum is a vectorized loop that assumes no nan: a row with one is all nan
    # whatever that maximum, as eager's; a row masked whole is nan too, as eager's
    x = np.random.default_rng(3).normal(size=(4, 6, 16)).astype(dtype)
    x[0, 1, 3] = np.nan
    x[2, 0, 5] = np.inf
    mask = np.zeros((6, 16), dtype)
    mask[4] = -np.inf
    mask[5, ::2] = -np.inf

    def fn(a, m):
        return getattr(F, name)(a * 0.5 + m, -1)

    compiled = cr.compile(fn)
    got = [compiled(cr.tensor(x), cr.tensor(mask)).numpy() for _ in range(3)][-1]
    want = fn(cr.tensor(x), cr.tensor(mask)).numpy()
    assert any(name in group for group in _groups(compiled.program))
    assert np.isnan(got[0, 1]).all() and np.isnan(got[:, 4]).all()
    assert np.array_equal(np.isfinite(got), np.isfinite(want))  # the same nan and inf
    eps = np.finfo(dtype).eps
    # log_softmax: eager takes x - (log(sum) + max) for the whole batch here (an inf), the
    # kernel (x - max) - log(sum) for its finite rows: within a few ulp of |x|
    finite = np.abs(x[np.isfinite(x)] * 0.5)
    bound = 8 * eps * finite.max() if name == "log_softmax" else 0
    np.testing.assert_allclose(got, want, rtol=4 * eps, atol=bound, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fused_cross_entropy_agrees_with_eager_and_pytorch(dtype, torch):
    rng = np.random.default_rng(8)
    logits = rng.normal(size=(512, 65)).astype(dtype) * 3
    targets = rng.integers(0, 65, 512)

    def step(x, t):
        loss = F.cross_entropy(x * 1.5, t)
        loss.backward()
        return loss.detach()

    compiled = cr.compile(step)
    runs = []
    for fn in (compiled, compiled, compiled, step):
        x = cr.tensor(logits, requires_grad=True)
        runs.append((fn(x, cr.tensor(targets)).item(), x.grad.numpy()))
    assert any("log_softmax" in group for group in _groups(compiled.program))
    eps = np.finfo(dtype).eps
    (got, got_grad), (want, want_grad) = runs[2], runs[3]
    np.testing.assert_allclose(got, want, rtol=16 * eps)
    np.testing.assert_allclose(got_grad, want_grad, rtol=0, atol=16 * eps * np.abs(want_grad).max())
    t = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(t * 1.5, torch.tensor(targets)).backward()
    np.testing.assert_allclose(got, float(torch.nn.functional.cross_entropy(
        torch.tensor(logits) * 1.5, torch.tensor(targets))), rtol=64 * eps)  # fmt: skip
    np.testing.assert_allclose(
        got_grad, t.grad.numpy(), rtol=0, atol=64 * eps * np.abs(want_grad).max()
    )
