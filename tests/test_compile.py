"""chainrule.compile: records, checks and replays a call; what it replays equals eager mode,
bit for bit where the same NumPy calls run in the same order."""

import re
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.apps.demos import training_step
from chainrule.compiler import passes
from chainrule.compiler.compiled import CACHE_SIZE
from chainrule.errors import GraphError
from chainrule.nn import functional as F


def _mlp(seed: int, dtype=cr.float32):
    cr.manual_seed(seed)
    model = cr.nn.Sequential(
        cr.nn.Linear(2, 16), cr.nn.Tanh(), cr.nn.Linear(16, 16), cr.nn.ReLU(), cr.nn.Linear(16, 3)
    )
    return model.to(dtype)


def _batches(n: int, dtype=np.float32, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [
        (cr.tensor(rng.normal(size=(32, 2)).astype(dtype)), cr.tensor(rng.integers(0, 3, 32)))
        for _ in range(n)
    ]


_training_step = training_step  # the demos' step: zero_grad, cross-entropy, backward, step


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_a_training_step_replays_exactly_as_eager_over_20_steps(optimizer):
    models = [_mlp(0), _mlp(0)]
    make = getattr(cr.optim, optimizer)
    steps = [_training_step(m, make(m.parameters(), lr=0.01)) for m in models]
    compiled = cr.compile(steps[1], backend="numpy")  # bit for bit: no fusion
    for x, y in _batches(20):
        assert steps[0](x, y).item() == compiled(x, y).item()
    assert compiled.stats == {"traced": 2, "replayed": 18, "eager": 0}
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert np.array_equal(p.data, q.data) and p.data.dtype == np.float32
        assert np.array_equal(p.grad.data, q.grad.data)


def test_float64_steps_are_bit_identical_and_grads_accumulate_without_zero_grad():
    models = [_mlp(1, cr.float64), _mlp(1, cr.float64)]

    def step_of(model):
        def step(x, y):
            F.cross_entropy(model(x), y).backward()  # .grad accumulates over calls

        return step

    eager, compiled = step_of(models[0]), cr.compile(step_of(models[1]), backend="numpy")
    for x, y in _batches(6, np.float64):
        eager(x, y)
        compiled(x, y)
    assert compiled.stats["replayed"] == 4
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert np.array_equal(p.grad.data, q.grad.data) and q.grad.dtype == np.float64


def test_the_program_prints_its_phases_and_replays_as_python():
    w = cr.tensor([1.0, 2.0], requires_grad=True)

    @cr.compile
    def step(x):
        loss = ((x * w).sum() - 1) ** 2
        loss.backward()
        with cr.no_grad():
            w.sub_(0.1 * w.grad)
            w.grad = None
        return loss.detach()

    losses = [step(cr.tensor([1.0, 1.0])).item() for _ in range(4)]
    assert losses == pytest.approx([4.0, 1.44, 0.5184, 0.186624], rel=1e-6)
    assert w.grad is None
    text = str(step.program)
    assert text.splitlines()[0] == "program step(x0:f32[2]):"
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("#")] == [
        "# forward", "# backward", "# update",
    ]  # fmt: skip
    assert "s1.grad += " in text and "s1.grad = None" in text
    # w.sub_: its subtraction writes into w itself (`passes.write_in_place`): a NumPy call,
    # or with Numba the kernel that takes the product too
    assert "= sub(s1, t13)  # into s1" in text or "# t14 into s1" in text
    source = step.program.replay_source()
    assert source.startswith("def replay(tensors):") and "accumulate_grad(" in source


def test_make_program_of_the_project_pages_function_before_and_after_the_passes():
    w1 = cr.tensor(0.3, requires_grad=True, dtype=cr.float64)
    w2 = cr.tensor(-0.5, requires_grad=True, dtype=cr.float64)

    def f(x1, x2):
        out = (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
        out.backward()
        return out.detach()

    x1, x2 = cr.tensor(1.5, dtype=cr.float64), cr.tensor(-2.0, dtype=cr.float64)
    before = cr.make_program(f, optimized=False)(x1, x2)
    w1.grad = w2.grad = None
    after = cr.make_program(f)(x1, x2)
    assert before.counts()["forward"] == after.counts()["forward"] == 9
    assert len(after.equations) <= len(before.equations)
    assert {v.value for v in after.state} == {"s1", "s4"} or len(after.state) == 2
    z = 0.3 * 1.5 - 0.5 * -2.0
    s = 1 / (1 + np.exp(-z))
    assert w1.grad.item() == pytest.approx(s * (1 - s) * 1.5 + 0.3, rel=1e-12)


def _program(fn, *args):
    return cr.make_program(fn, optimized=False)(*args)


def test_dead_code_elimination_drops_what_nothing_reads():
    def f(x):
        (x * 3).exp()  # read by nothing
        return x + 1

    program = _program(f, cr.ones(3))
    assert [eq.name for eq in program.equations] == ["mul", "exp", "add"]
    assert [eq.name for eq in passes.eliminate_dead_code(program).equations] == ["add"]


def test_common_subexpressions_are_computed_once():
    def f(x):
        return x.exp() * x.exp() + x.exp()

    program = _program(f, cr.ones(3))
    names = [eq.name for eq in passes.eliminate_common_subexpressions(program).equations]
    assert names == ["exp", "mul", "add"]


def test_constants_fold_and_written_arrays_are_not_merged():
    def f(x):
        mask = cr.ones(3, 3).tril()  # depends on no input: folded
        y = x * 2
        y.add_(1)  # an in-place write: y is not merged with the equal x * 2 below
        return y + x * 2 + mask.sum()

    program = _program(f, cr.ones(3, 3))
    folded = passes.fold_constants(program)
    assert "tril" not in [eq.name for eq in folded.equations]
    merged = passes.eliminate_common_subexpressions(folded)
    assert [eq.name for eq in merged.equations].count("mul") == 2
    compiled = cr.compile(f)
    for value in [1.0, 2.0, 3.0]:
        x = cr.full((3, 3), value)
        assert np.array_equal(compiled(x).data, f(x).data)
    assert compiled.stats["replayed"] == 1


def test_a_branch_on_item_replays_in_pieces_and_a_call_that_branches_otherwise_runs_eagerly():
    def f(x):
        y = x * 2
        if y.sum().item() > 0:  # the break: the Python needs a value here
            return y + 1
        return y - 1

    compiled = cr.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in (1.0, 2.0, 3.0):
            assert compiled(cr.full((2,), k)).tolist() == [2 * k + 1] * 2
    assert compiled.stats == {"traced": 2, "replayed": 1, "eager": 0}
    assert [eq.kind for eq in compiled.program.equations] == ["op", "op", "read", "op", "read"]
    with pytest.warns(UserWarning, match=r"compile\(f\): a call did sub.*test_compile.py:\d+"):
        assert compiled(-cr.ones(2)).tolist() == [-3.0, -3.0]  # the other branch, eagerly
    assert compiled(cr.ones(2)).tolist() == [3.0, 3.0]
    assert compiled.stats == {"traced": 2, "replayed": 2, "eager": 1}
    with pytest.raises(cr.CompileError, match=r"fullgraph=True.*item\(\)"):
        cr.compile(f, fullgraph=True)(cr.ones(2))


def test_numpy_work_on_data_replays_while_its_result_is_the_recorded_constant():
    def f(x):
        return x * cr.tensor(np.sign(x.data.numpy()))  # made from x's values outside the record

    compiled = cr.compile(f)
    assert compiled(cr.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert compiled(cr.tensor([3.0, 4.0])).tolist() == [3.0, 4.0]
    assert compiled(cr.tensor([5.0, 1.0])).tolist() == [5.0, 1.0]  # the same signs: replayed
    assert compiled.stats == {"traced": 2, "replayed": 1, "eager": 0}
    with pytest.warns(UserWarning, match=r"a call did mul with other arguments.*test_compile"):
        assert compiled(cr.tensor([-5.0, 6.0])).tolist() == [5.0, 6.0]  # other signs: eager
    assert compiled.stats == {"traced": 2, "replayed": 1, "eager": 1}


@pytest.mark.parametrize(
    "update",
    [
        lambda w: w.data.__isub__(0.1 * w.grad),  # what ``w.data -= 0.1 * w.grad`` runs first
        lambda w: w.data.add_(-0.1 * w.grad),
        lambda w: w.data.add_(w.grad, alpha=-0.1),
        lambda w: w.data.copy_(w.data - 0.1 * w.grad.data),
    ],
    ids=["isub", "add", "add_alpha", "copy"],
)
def test_data_updates_replay_as_eager_mode_runs_them(update):
    def train(run):
        w = cr.tensor([1.0, -2.0, 0.5], requires_grad=True)

        def step(x):
            loss = ((x * w).sum() - 1.0) ** 2
            loss.backward()
            update(w)
            w.data -= 0.0 * w.grad  # the augmented assignment sets .data to itself: no break
            w.grad = None
            return loss.detach()

        fn = run(step)
        losses = [fn(cr.tensor([1.0, float(k), 2.0])).item() for k in range(5)]
        return losses, w.detach().numpy().copy(), fn

    eager_losses, eager_w, _ = train(lambda f: f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses, w, compiled = train(cr.compile)
    assert losses == eager_losses and np.array_equal(w, eager_w)
    assert compiled.stats["replayed"] == 3


def test_an_update_that_first_reads_a_parameter_through_data_replays():
    w = cr.tensor([1.0, 2.0])
    expected = w.detach().numpy().copy()

    def update(g):
        w.data.add_(g, alpha=-0.5)  # w's first sight in the record is its .data

    compiled = cr.compile(update)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(4):
            g = cr.tensor([float(k), 1.0])
            compiled(g)
            expected -= 0.5 * g.numpy()
    assert np.array_equal(w.numpy(), expected) and compiled.stats["replayed"] == 2


def test_assigning_data_or_reading_it_into_numpy_is_a_graph_break():
    w = cr.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        w.data = w.detach() - 0.1 * w.grad  # a new array: the record cannot follow
        w.grad = None
        return loss.detach()

    compiled = cr.compile(step)
    with pytest.warns(UserWarning, match=r"assigning a tensor's \.data"):
        losses = [compiled(cr.ones(2)).item() for _ in range(3)]
    assert losses == pytest.approx([3.0, 2.8, 2.6])

    def numpy_in_place(x):
        loss = (x * w).sum()
        loss.backward()
        np.subtract(w.data.numpy(), 0.1 * w.grad.numpy(), out=w.data.numpy())
        w.grad = None
        return loss.detach()

    compiled = cr.compile(numpy_in_place)  # the reads split it; the Python's write runs itself
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = [compiled(cr.ones(2)).item() for _ in range(4)]
    assert losses == pytest.approx([2.4, 2.2, 2.0, 1.8])
    assert compiled.stats == {"traced": 2, "replayed": 2, "eager": 0}


def test_same_inputs_twice_then_new_ones_still_read_the_new_ones():
    model, compiled_steps = _mlp(2), None
    step = _training_step(model, cr.optim.SGD(model.parameters(), lr=0.1))
    reference_model = _mlp(2)
    reference = _training_step(reference_model, cr.optim.SGD(reference_model.parameters(), lr=0.1))
    compiled_steps = cr.compile(step)
    (x, y), (x2, y2) = _batches(2)
    for batch in [(x, y), (x, y), (x, y), (x2, y2), (x2, y2), (x, y)]:
        assert reference(*batch).item() == compiled_steps(*batch).item()


def test_dropout_draws_fresh_masks_at_each_replay_and_eval_traces_identity():
    def f(x, layer):
        return layer(x)

    layer = cr.nn.Dropout(0.5)
    compiled = cr.compile(f)
    x = cr.ones(200)
    cr.manual_seed(3)
    eager_outs = [f(x, layer).detach().numpy().copy() for _ in range(4)]
    cr.manual_seed(3)
    outs = [compiled(x, layer).detach().numpy().copy() for _ in range(4)]
    assert compiled.stats["replayed"] == 2
    assert all(np.array_equal(a, b) for a, b in zip(eager_outs, outs))
    assert not np.array_equal(outs[2], outs[3])  # fresh numbers at each replay
    layer.eval()
    assert np.array_equal(compiled(x, layer).data, x.data)  # a new record (mode changed)
    assert compiled(x, layer).data.tolist() == x.data.tolist()
    assert "call" not in str(compiled.program)


def test_a_new_shape_is_a_new_record_and_the_cache_is_bounded():
    compiled = cr.compile(lambda x: (x * x).sum())
    for n in range(1, CACHE_SIZE + 1):
        for _ in range(3):
            assert compiled(cr.ones(n)).item() == n
    assert compiled.stats == {"traced": 2 * CACHE_SIZE, "replayed": CACHE_SIZE, "eager": 0}
    with pytest.warns(UserWarning, match=f"more than {CACHE_SIZE} signatures"):
        assert compiled(cr.ones(CACHE_SIZE + 1)).item() == CACHE_SIZE + 1


def test_a_compiled_module_replays_its_forward_and_the_callers_backward():
    models = [_mlp(6), _mlp(6)]
    compiled = cr.compile(models[1])
    optimizers = [cr.optim.Adam(m.parameters(), lr=0.01) for m in models]
    x_grads = []
    for x, y in _batches(6):
        x = x.requires_grad_()
        for forward, optimizer in zip([models[0], compiled], optimizers):
            optimizer.zero_grad()
            loss = F.cross_entropy(forward(x), y)
            loss.backward()
            optimizer.step()
            x_grads.append(x.grad)
            x.grad = None
        assert np.array_equal(x_grads[-1].data, x_grads[-2].data)  # the input's gradient too
    assert compiled.stats == {"traced": 2, "replayed": 4, "eager": 0}
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert np.array_equal(p.data, q.data)
    text = str(compiled.program)
    assert "# backward of the results" in text and "gradients " in text
    x = _batches(1)[0][0].requires_grad_()  # a signature already verified: replayed
    out = compiled(x).sum()
    out.backward(retain_graph=True)
    out.backward()  # the saved arrays are kept once, as eager's
    with pytest.raises(cr.GraphError, match="second time"):
        out.backward()
    with pytest.raises(cr.GraphError, match="create_graph"):
        cr.autograd.grad(compiled(x).sum(), models[1][0].weight, create_graph=True)


def test_out_of_range_targets_still_raise_clearly_in_a_replay():
    model = _mlp(4)
    compiled = cr.compile(_training_step(model, cr.optim.SGD(model.parameters(), lr=0.1)))
    for x, y in _batches(3):
        compiled(x, y)
    bad = cr.tensor(np.full(32, 7))
    with pytest.raises(cr.OutOfRangeError, match=re.escape("target 7 is out of range")):
        compiled(_batches(1)[0][0], bad)


def test_the_memory_plan_reuses_buffers_yet_results_survive_the_next_replay():
    def f(x):
        y = ((x * 2).exp() + 1).tanh() * x
        return y.sum(0), y

    program = cr.make_program(f)(cr.ones(4, 3, dtype=cr.float64))
    buffers = [eq.buffer for eq in program.equations if eq.buffer is not None]
    assert len(buffers) >= 3 and len(set(buffers)) == 1  # one array for the whole chain
    compiled = cr.compile(f, backend="numpy")
    inputs = [cr.tensor(np.random.default_rng(i).normal(size=(4, 3))) for i in range(5)]
    results = [compiled(x) for x in inputs]
    for x, (total, y) in zip(inputs, results):  # none was overwritten by a later replay
        assert np.array_equal(total.data, f(x)[0].data) and np.array_equal(y.data, f(x)[1].data)


def test_gradients_kept_from_one_step_are_not_changed_by_the_next():
    model = _mlp(5, cr.float64)
    step = cr.compile(_training_step(model, cr.optim.SGD(model.parameters(), lr=0.1)))
    kept = []
    for x, y in _batches(5, np.float64):
        step(x, y)
        kept.append([(p.grad, p.grad.detach().numpy().copy()) for p in model.parameters()])
    assert all(np.array_equal(g.data, copy) for grads in kept for g, copy in grads)
    program = step.program
    assert all(eq.params["owned"] for eq in program.equations
               if eq.kind == "grad" and eq.params["mode"] == "add")  # fmt: skip


def test_another_threads_ops_while_tracing_are_neither_recorded_nor_lost():
    import threading

    done, results = threading.Event(), []

    def loader():  # a data loader's thread, stacking batches with chainrule ops
        while not done.is_set():
            results.append(cr.stack([cr.ones(3), cr.zeros(3)]).sum().item())

    thread = threading.Thread(target=loader)
    thread.start()
    try:
        compiled = cr.compile(lambda x: (x.exp() * 2).sum(0), backend="numpy")
        for i in range(30):
            x = cr.full((200, 3), float(i) / 30)
            assert np.array_equal(compiled(x).data, (x.exp() * 2).sum(0).data)
    finally:
        done.set()
        thread.join()
    assert compiled.stats["replayed"] == 28 and set(results) == {3.0}
    assert [eq.name for eq in compiled.program.equations] == ["exp", "mul", "sum"]


def test_a_cleared_grad_is_set_directly_when_nothing_can_look_in_between():
    w = cr.tensor([1.0, 2.0], requires_grad=True)

    def f(x):
        w.grad = None
        (x * w).sum().backward()

    program = cr.make_program(f)(cr.ones(2))
    grads = [eq for eq in program.equations if eq.kind == "grad"]
    assert len(grads) == 1 and grads[0].params["fresh"]
    compiled = cr.compile(f)
    for value in [1.0, 2.0, 3.0, 4.0]:
        compiled(cr.full((2,), value))
        assert w.grad.tolist() == [value, value]  # set, not added to the last call's

    optimizer = cr.optim.SGD([w], lr=0.0)

    def g(x):
        w.grad = None
        optimizer.step()  # a whole call between: it could read .grad, so the clearing stays
        (x * w).sum().backward()

    program = cr.make_program(g)(cr.ones(2))
    assert [eq.params["mode"] for eq in program.equations if eq.kind == "grad"] == ["set", "add"]


def test_simplify_drops_exact_identities_only():
    def f(x):
        return (x * 1) ** 1 + (x + 0) * 1.5

    program = _program(f, cr.tensor([-0.0, 2.0], dtype=cr.float64))
    names = [eq.name for eq in passes.simplify(program).equations]
    assert names == ["add", "mul", "add"]  # x + 0 stays: -0.0 + 0 is +0.0
    compiled = cr.compile(f)
    for _ in range(3):
        out = compiled(cr.tensor([-0.0, 2.0], dtype=cr.float64))
    assert np.array_equal(out.data, f(cr.tensor([-0.0, 2.0], dtype=cr.float64)).data)


def test_an_argument_object_is_told_apart_from_one_made_later_in_its_place():
    def f(x, model):
        return model(x)

    compiled = cr.compile(f)
    x = cr.ones(1, 2)
    with cr.no_grad():
        for seed in range(4):  # each model is freed before the next is made
            model = _mlp(seed)
            for _ in range(3):
                assert np.array_equal(compiled(x, model).data, model(x).data)
            del model


def test_the_step_people_write_returns_its_spent_loss_and_replays():
    # loss.backward(); opt.step(); return loss — no detach, no warning, eager's numbers.
    def make():
        cr.manual_seed(0)
        model = cr.nn.Sequential(cr.nn.Linear(4, 8), cr.nn.Tanh(), cr.nn.Linear(8, 1))
        opt = cr.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    x, y = cr.randn(16, 4), cr.randn(16, 1)
    eager, compiled = make(), cr.compile(make())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = [eager(x, y) for _ in range(5)]
        got = [compiled(x, y) for _ in range(5)]
    assert [t.item() for t in got] == [t.item() for t in expected]
    assert compiled.stats == {"traced": 2, "replayed": 3, "eager": 0}
    assert got[-1].requires_grad and got[-1].grad_fn is not None
    for loss in (expected[-1], got[-1]):  # a second backward raises in both
        with pytest.raises(GraphError, match=r"mul: trying to backward through the graph a sec"):
            loss.backward()


def test_a_compiled_call_inside_a_profile_replays_as_one_span():
    w = cr.ones(3, requires_grad=True)

    @cr.compile
    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    with cr.profile() as prof:
        for _ in range(4):
            step(cr.ones(3))
    assert step.stats == {"traced": 2, "replayed": 2, "eager": 0}
    assert [event.name for event in prof.events()] == ["compiled step"] * 4
    assert w.grad.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize(
    ("parts", "assembled"),
    [
        (lambda t: t.split(2, dim=-1), True),  # q, k, v of an attention's projection
        (lambda t: (t[1:, 1:3], t[1:, 4:], t[0]), True),  # a row, and slices of the others
        (lambda t: (t[:, :4], t[:, 2:]), False),  # overlapping: summed as recorded
    ],
    ids=["split", "apart", "overlapping"],
)
def test_gradients_of_slices_apart_are_assembled_into_one_array(parts, assembled):
    def step(x, w):
        y = x @ w
        total = sum(((p * (k + 1)) ** 2).sum() for k, p in enumerate(parts(y)))
        total.backward()
        return total.detach()

    rng = np.random.default_rng(0)
    runs = []
    for compiled in (False, True):
        x = cr.tensor(rng.normal(size=(3, 4)), requires_grad=True)
        w = cr.tensor(rng.normal(size=(4, 6)), requires_grad=True)
        fn = cr.compile(step, backend="numpy") if compiled else step
        values = [fn(x, w).item() for _ in range(3)]
        runs.append((values, x.grad.numpy().copy(), w.grad.numpy().copy(), fn))
        rng = np.random.default_rng(0)
    (values, xg, wg, _), (cvalues, cxg, cwg, fn) = runs
    assert cvalues == values
    np.testing.assert_array_equal(cxg, xg)
    np.testing.assert_array_equal(cwg, wg)
    text = str(fn.program)
    assert ("assemble_slices" in text) is assembled
    assert ("getitem_backward" in text) is not assembled
