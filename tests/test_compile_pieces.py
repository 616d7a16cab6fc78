"""chainrule.compile around graph breaks: a step whose Python reads values (``.item()``,
``print``, ``if loss < best:``) replays in pieces, giving eager mode's numbers, prints and
parameters bit for bit, with no warning; a call whose Python goes another way than the record
runs eagerly from there, still as eager mode."""

import contextlib
import io
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


def _model(inplace=False):
    cr.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.ReLU(inplace=inplace), nn.Linear(8, 1))


def _data():
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((16, 3)), dtype=cr.float32)
    return x, cr.tensor(rng.standard_normal((16, 1)), dtype=cr.float32)


def _twins(make_step):
    """Two identical models with their steps: one to run eagerly, one compiled."""
    eager_model, compiled_model = _model(), _model()
    log_e, log_c = [], []
    return (
        (make_step(eager_model, log_e), eager_model, log_e),
        (cr.compile(make_step(compiled_model, log_c)), compiled_model, log_c),
    )


def _same_parameters(a, b):
    return all(np.array_equal(p.detach().numpy(), q.detach().numpy())
               for p, q in zip(a.parameters(), b.parameters()))  # fmt: skip


def _adam_step(body):
    def make(model, log):
        opt = cr.optim.Adam(model.parameters(), lr=0.05)
        best = [float("inf")]

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            early = body(loss, log, best)
            if early:
                return None
            loss.backward()
            opt.step()
            if body is _best and loss < best[0]:
                best[0] = loss.item()
                log.append("improved")
            return loss

        return step

    return make


def _mid(loss, log, best):
    log.append(loss.item())  # between forward and backward


def _print(loss, log, best):
    print(loss, f"{loss:.6f}")


def _nan(loss, log, best):
    return not cr.isfinite(loss)  # bool() of a tensor


def _best(loss, log, best):
    return False


@pytest.mark.parametrize("body", [_mid, _print, _nan, _best], ids=["item", "print", "nan", "best"])
def test_a_step_that_reads_values_replays_in_pieces_as_eager_mode(body):
    (eager, em, elog), (compiled, cm, clog) = _twins(_adam_step(body))
    x, y = _data()
    out_e, out_c = io.StringIO(), io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(6):
            with contextlib.redirect_stdout(out_e):
                a = eager(x, y)
            with contextlib.redirect_stdout(out_c):
                b = compiled(x, y)
            assert a.item() == b.item()
    assert compiled.stats == {"traced": 2, "replayed": 4, "eager": 0}
    assert elog == clog and out_e.getvalue() == out_c.getvalue()
    assert _same_parameters(em, cm)
    assert "read" in [eq.kind for eq in compiled.program.equations]
    with pytest.raises(cr.GraphError, match=r"compiled call replayed in pieces"):
        b.backward()  # its history stayed in the program, as a spent graph does in eager mode


def test_a_number_that_changes_each_call_is_a_literal_of_the_program():
    (eager, em, elog), (compiled, cm, clog) = _twins(_adam_step(_best))
    x, y = _data()
    for _ in range(4):
        eager(x, y), compiled(x, y)
    assert "L[0]" in str(compiled.program)  # loss < best, with best from the Python
    assert elog == clog == ["improved"] * 4


def _branching(model, log):
    opt = cr.optim.SGD(model.parameters(), lr=0.05)

    def step(x, y, flag):
        opt.zero_grad()
        out = model(x)
        loss = F.mse_loss(out, y)
        if flag.item() < 0:  # the branch the record did not take
            loss = loss * 10
        h = out.detach()
        h.add_(1)  # an in-place op on a tensor the program computes
        loss.backward()
        opt.step()
        return loss, h

    return step


def test_a_call_that_goes_another_way_runs_eagerly_from_there_with_eagers_gradients():
    eager_model, compiled_model = _model(inplace=True), _model(inplace=True)
    eager, compiled = _branching(eager_model, []), cr.compile(_branching(compiled_model, []))
    x, y = _data()
    with pytest.warns(UserWarning, match=r"a call did mul where the record has add_, at .*"):
        for flag in [1.0, 2.0, 3.0, -1.0, 4.0, -2.0, 5.0]:
            (a, ha), (b, hb) = eager(x, y, cr.tensor(flag)), compiled(x, y, cr.tensor(flag))
            assert a.item() == b.item() and np.array_equal(ha.numpy(), hb.numpy())
            assert _same_parameters(eager_model, compiled_model)
    assert compiled.stats == {"traced": 2, "replayed": 3, "eager": 2}


def test_a_detached_result_and_a_pure_call_in_pieces():
    def step(a, b):
        r, info = cr.linalg.solve_ex(a @ a.mT + cr.eye(2, dtype=cr.float64), b)  # A.numpy()
        r.sum().backward()
        return r.detach(), info  # a tensor over the program's array, made by detach()

    compiled = cr.compile(step)
    rng = np.random.default_rng(0)
    for _ in range(4):
        arrays = rng.standard_normal((2, 2)), rng.standard_normal(2)
        e = [cr.tensor(v, requires_grad=True) for v in arrays]
        c = [cr.tensor(v, requires_grad=True) for v in arrays]
        (re, ie), (rc, ic) = step(*e), compiled(*c)
        assert np.array_equal(re.numpy(), rc.numpy()) and np.array_equal(ie.numpy(), ic.numpy())
        assert all(np.array_equal(p.grad.numpy(), q.grad.numpy()) for p, q in zip(e, c))
    assert compiled.stats == {"traced": 2, "replayed": 2, "eager": 0}


def test_fullgraph_refuses_the_read_and_names_the_line():
    def step(x):
        y = x * 2
        return y.sum().item()

    with pytest.raises(cr.CompileError, match=r"fullgraph=True\): item\(\).*test_compile_pieces"):
        cr.compile(step, fullgraph=True)(cr.ones(2))
    compiled = cr.compile(step)
    assert [compiled(cr.full((2,), k)) for k in (1.0, 2.0, 3.0)] == [4.0, 8.0, 12.0]
    assert compiled.stats == {"traced": 2, "replayed": 1, "eager": 0}


def test_results_that_require_grad_around_a_read_run_eagerly_with_a_reason():
    w = cr.ones(2, requires_grad=True)

    def f(x):
        y = x * w
        print(y.sum().item(), end="")
        return y  # its graph outlives the call: a replay in pieces cannot give it

    compiled = cr.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        with pytest.warns(UserWarning, match=r"item\(\).*results require grad"):
            compiled(cr.ones(2))
        compiled(cr.ones(2)).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0] and compiled.stats["eager"] == 1


class _Scaled(nn.Module):
    """A linear layer whose forward may keep a tensor or count its calls (Python state)."""

    def __init__(self, keep: bool = False, count: bool = False) -> None:
        super().__init__()
        cr.manual_seed(0)
        self.inner = nn.Linear(3, 2)
        self.keep, self.count, self.calls, self.kept = keep, count, 0, None

    def forward(self, x):
        y = self.inner(x) * 2
        if self.keep:
            self.kept = y  # a tensor the Python keeps: the forward must run
        if self.count:
            self.calls += 1  # Python state the forward changes: it must run
        return y


def _module_step(module):
    def step(x):
        loss = module(x).sum()
        loss.backward()
        return loss.item()  # a read: the call replays in pieces

    return step


@pytest.mark.parametrize("keep, count", [(False, False), (True, False), (False, True)])
def test_a_module_forward_that_only_runs_ops_is_skipped_in_pieces(keep, count):
    eager, compiled = _Scaled(keep, count), _Scaled(keep, count)
    step = cr.compile(_module_step(compiled))
    ran = []
    compiled.forward = lambda x, f=compiled.forward: ran.append(1) or f(x)
    for k in range(4):
        x = cr.full((4, 3), float(k))
        assert _module_step(eager)(x) == step(x)
    assert step.stats == {"traced": 2, "replayed": 2, "eager": 0}
    assert _same_parameters(eager, compiled)  # the gradients were delivered: .grad equal
    assert all(np.array_equal(p.grad.numpy(), q.grad.numpy())
               for p, q in zip(eager.parameters(), compiled.parameters()))  # fmt: skip
    # The forward ran for the two records only, unless it keeps a tensor or counts calls.
    assert len(ran) == (2 if not (keep or count) else 4)
    assert compiled.calls == eager.calls
    if keep:
        assert np.array_equal(compiled.kept.detach().numpy(), eager.kept.detach().numpy())


def test_a_call_that_goes_another_way_after_a_skipped_module_still_differentiates_it():
    module_e, module_c = _Scaled(), _Scaled()

    def make(module):
        def step(x, flag):
            y = module(x)
            if flag.item() < 0:  # the branch the record did not take
                y = y * 3
            loss = y.sum()
            loss.backward()
            return loss

        return step

    eager, compiled = make(module_e), cr.compile(make(module_c))
    with pytest.warns(UserWarning, match="a call did mul"):
        for flag in (1.0, 2.0, 3.0, -1.0, 4.0):
            x = cr.full((4, 3), flag)
            assert eager(x, cr.tensor(flag)).item() == compiled(x, cr.tensor(flag)).item()
    assert all(np.array_equal(p.grad.numpy(), q.grad.numpy())
               for p, q in zip(module_e.parameters(), module_c.parameters()))  # fmt: skip
    assert compiled.stats == {"traced": 2, "replayed": 2, "eager": 1}
