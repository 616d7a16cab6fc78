"""Creation, random numbers, dtypes, devices and conversions, against PyTorch where the results
are deterministic (shapes, dtypes, values, errors) and against stated bands for random draws
(every draw is seeded, so each band is checked on fixed numbers)."""

import numpy as np
import pytest

import chainrule
from chainrule import DomainError, DTypeError, GraphError, ShapeError, func

N = 20_000  # draws per statistics check: a mean's standard error is about 0.007 std


def gen(seed: int = 0) -> chainrule.Generator:
    return chainrule.Generator().manual_seed(seed)


def tdtype(torch, dtype) -> str:
    """A torch dtype's name without the prefix ('float32'), to compare with NumPy's."""
    return str(dtype).removeprefix("torch.")


# dtypes and the default dtype.


def test_dtype_aliases_match_pytorch(torch):
    for name in ("long", "float", "double", "int", "half", "bool", "short", "float16", "int8"):
        assert getattr(chainrule, name).name == tdtype(torch, getattr(torch, name)), name
    assert chainrule.float is chainrule.float32 and chainrule.int is chainrule.int32


def test_dtype_aliases_leave_the_builtins_alone_inside_the_package():
    for module in (chainrule.creation, chainrule.random, chainrule.dtypes, chainrule.autograd):
        assert "float" not in vars(module) and "int" not in vars(module)
        assert "bool" not in vars(module)
    assert chainrule.full((2,), 1.5).dtype == np.float32  # creation's isinstance(.., float)


@pytest.mark.parametrize(
    "use",
    [
        lambda: chainrule.zeros(2, dtype=chainrule.bfloat16),
        lambda: chainrule.tensor([1.0], dtype=chainrule.bfloat16),
        lambda: chainrule.ones(2).to(chainrule.bfloat16),
        lambda: chainrule.rand(2, dtype=chainrule.bfloat16),
        lambda: chainrule.set_default_dtype(chainrule.bfloat16),
        lambda: np.zeros(2, dtype=chainrule.bfloat16),
    ],
)
def test_bfloat16_is_refused_because_numpy_cannot_carry_it(use):
    with pytest.raises(DTypeError, match=r"bfloat16 is not supported: .* NumPy cannot carry"):
        use()


def test_default_dtype_changes_python_floats_and_factories(torch):
    assert chainrule.get_default_dtype() == np.float32
    assert tdtype(torch, torch.get_default_dtype()) == "float32"
    made = {
        "tensor": lambda lib: lib.tensor([1.5]),
        "zeros": lambda lib: lib.zeros(2),
        "ones": lambda lib: lib.ones(2),
        "empty": lambda lib: lib.empty(2),
        "rand": lambda lib: lib.rand(2),
        "randn": lambda lib: lib.randn(2),
        "full": lambda lib: lib.full((2,), 1.5),
        "arange": lambda lib: lib.arange(0.0, 1.0, 0.5),
        "linspace": lambda lib: lib.linspace(0, 1, 3),
        "logspace": lambda lib: lib.logspace(0, 1, 3),
        "eye": lambda lib: lib.eye(2),
        "normal": lambda lib: lib.normal(0.0, 1.0, (2,)),
    }
    try:
        chainrule.set_default_dtype(chainrule.float64)
        torch.set_default_dtype(torch.float64)
        for name, make in made.items():
            assert make(chainrule).dtype.name == tdtype(torch, make(torch).dtype), name
        assert repr(chainrule.tensor([1.5])) == "tensor([1.5000])"
        assert repr(chainrule.tensor([1.5], dtype="float32")) == "tensor([1.5000], dtype=float32)"
        assert chainrule.arange(3).dtype == np.int64  # integers keep int64
    finally:
        chainrule.set_default_dtype(chainrule.float32)
        torch.set_default_dtype(torch.float32)
    assert chainrule.tensor([1.5]).dtype == np.float32


def test_set_default_dtype_takes_floating_point_dtypes_only():
    with pytest.raises(DTypeError, match=r"set_default_dtype: only floating-point dtypes"):
        chainrule.set_default_dtype(chainrule.int64)
    assert chainrule.get_default_dtype() == np.float32


# Devices.


def test_device_objects_read_like_pytorchs(torch):
    for spec in ("cpu", "cpu:0"):
        ours, theirs = chainrule.device(spec), torch.device(spec)
        assert (str(ours), repr(ours)) == (str(theirs), repr(theirs))
        assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert chainrule.device("cpu") == chainrule.device(chainrule.device("cpu")) == "cpu"
    assert chainrule.device("cpu") != chainrule.device("cpu:0")
    assert len({chainrule.device("cpu"), chainrule.device("cpu")}) == 1
    x = chainrule.zeros(2, device="cpu")
    assert x.device == chainrule.device("cpu") and x.device.type == "cpu" and x.device == "cpu"
    assert x.is_cuda is False and x.is_cpu is True and x.cpu() is x


@pytest.mark.parametrize(
    "use",
    [
        lambda: chainrule.device("cuda"),
        lambda: chainrule.device("cuda:1"),
        lambda: chainrule.zeros(2, device="cuda"),
        lambda: chainrule.rand(2, device="mps"),
        lambda: chainrule.tensor([1.0], device=chainrule.device("cpu")).to("cuda"),
        lambda: chainrule.ones(2).cuda(),
        lambda: chainrule.Generator(device="cuda"),
    ],
)
def test_gpu_devices_are_refused_naming_the_missing_support(use):
    with pytest.raises(DomainError, match=r"no GPU .*support"):
        use()


def test_unknown_devices_are_refused():
    with pytest.raises(DomainError, match=r"device: unknown device type 'tpu'"):
        chainrule.device("tpu")
    with pytest.raises(DomainError, match=r"device: there is one CPU, index 0, not 1"):
        chainrule.device("cpu:1")


# Making tensors.


def test_empty_and_empty_like_have_pytorchs_shapes_and_dtypes(torch):
    for size in [(2, 3), ((4,),), ((),)]:
        ours, theirs = chainrule.empty(*size), torch.empty(*size)
        assert ours.shape == tuple(theirs.shape) and ours.dtype.name == tdtype(torch, theirs.dtype)
    x = chainrule.arange(6).reshape(2, 3)
    assert chainrule.empty_like(x).shape == (2, 3) and chainrule.empty_like(x).dtype == np.int64
    assert chainrule.empty_like(x, dtype=chainrule.float64).dtype == np.float64
    assert chainrule.empty(2, requires_grad=True).requires_grad
    assert chainrule.empty(3).tolist() == [0.0, 0.0, 0.0]  # documented: zeros here


def test_as_tensor_shares_memory_with_numpy_when_the_dtype_allows(torch):
    for dtype in (np.float64, np.float32, np.int64):
        array = np.arange(3).astype(dtype)
        ours, theirs = chainrule.as_tensor(array), torch.as_tensor(array)
        array[0] = 7
        assert ours.tolist() == theirs.tolist() == [7, 1, 2]
        assert ours.dtype.name == tdtype(torch, theirs.dtype)
    array = np.zeros(2)
    copied = chainrule.as_tensor(array, dtype=chainrule.float32)
    array[0] = 1.0
    assert copied.tolist() == [0.0, 0.0] and copied.dtype == np.float32
    x = chainrule.ones(2, requires_grad=True)
    assert chainrule.as_tensor(x) is x
    assert chainrule.as_tensor(x, dtype=chainrule.float64).grad_fn is not None
    assert chainrule.as_tensor([1.0, 2.0]).dtype == np.float32
    assert chainrule.as_tensor([1, 2]).dtype == np.int64


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((0, 2, 3), {}),
        ((-1, 1, 5), {"base": 2.0}),
        ((0, 3, 4), {"base": 2}),
        ((1, 0, 6), {"dtype": "float64"}),
        ((0, 2, 3), {"dtype": "int64"}),
        ((0.5, 2.5, 1), {}),
        ((0, 1, 0), {}),
    ],
)
def test_logspace_matches_pytorch(torch, args, kwargs):
    ours = chainrule.logspace(*args, **kwargs)
    tkwargs = dict(kwargs)
    if "dtype" in tkwargs:
        tkwargs["dtype"] = getattr(torch, tkwargs["dtype"])
    theirs = torch.logspace(*args, **tkwargs)
    assert ours.dtype.name == tdtype(torch, theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-6)


def test_logspace_refuses_negative_steps():
    with pytest.raises(DomainError, match=r"logspace: steps must be a non-negative integer"):
        chainrule.logspace(0, 1, -1)


def test_facts_about_objects_match_pytorch(torch):
    for data in ([1.0, 2.0], [[1, 2, 3]], [True]):
        ours, theirs = chainrule.tensor(data), torch.tensor(data)
        assert chainrule.numel(ours) == torch.numel(theirs)
        assert chainrule.is_floating_point(ours) == torch.is_floating_point(theirs)
        assert ours.is_floating_point() == theirs.is_floating_point()
        assert chainrule.is_tensor(ours) and not chainrule.is_tensor(data)
    with pytest.raises(DTypeError, match=r"numel: input must be a Tensor, got list"):
        chainrule.numel([1, 2])


# Conversions.


def test_to_takes_pytorchs_forms(torch):
    x, t = chainrule.zeros(2), torch.zeros(2)
    other, tother = chainrule.zeros(1, dtype="int32"), torch.zeros(1, dtype=torch.int32)
    forms = [
        (lambda v, lib: v.to(lib.float64)),
        (lambda v, lib: v.to("cpu")),
        (lambda v, lib: v.to("cpu", lib.int64)),
        (lambda v, lib: v.to(lib.device("cpu"), lib.float16)),
        (lambda v, lib: v.to(dtype=lib.float64)),
        (lambda v, lib: v.to(device="cpu", dtype=lib.int32)),
        (lambda v, lib: v.to(lib.float32, copy=True)),
    ]
    for form in forms:
        ours, theirs = form(x, chainrule), form(t, torch)
        assert ours.dtype.name == tdtype(torch, theirs.dtype)
        assert (ours is x) == (theirs is t)
    assert x.to(other).dtype.name == tdtype(torch, t.to(tother).dtype) == "int32"


def test_to_is_differentiable():
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    (x.to(chainrule.float64) * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == np.float32
    y = chainrule.tensor([1.0], requires_grad=True)
    y.to(copy=True).sum().backward()
    assert y.grad.tolist() == [1.0]


def test_type_names_and_casts_match_pytorch(torch):
    for name in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8"):
        ours, theirs = chainrule.zeros(1, dtype=name), torch.zeros(1, dtype=getattr(torch, name))
        assert ours.type() == theirs.type()
    assert chainrule.zeros(1, dtype="bool").type() == torch.zeros(1, dtype=torch.bool).type()
    x = chainrule.zeros(2)
    assert x.type("torch.IntTensor").dtype == np.int32
    assert x.type(chainrule.float64).dtype == np.float64
    assert x.type_as(chainrule.arange(2)).dtype == np.int64
    t = torch.zeros(2)
    for method in ("half", "float", "double", "int", "long", "short", "char", "byte", "bool"):
        assert getattr(x, method)().dtype.name == tdtype(torch, getattr(t, method)().dtype)


def test_new_tensors_follow_self_like_pytorch(torch):
    x, t = chainrule.zeros(2, dtype="int32"), torch.zeros(2, dtype=torch.int32)
    forms = [
        (lambda v, lib: v.new_zeros(2, 3)),
        (lambda v, lib: v.new_zeros((2,), dtype=lib.float64)),
        (lambda v, lib: v.new_ones((3,))),
        (lambda v, lib: v.new_empty(4)),
        (lambda v, lib: v.new_full((2,), 3.7)),
        (lambda v, lib: v.new_tensor([1.5, 2.5])),
        (lambda v, lib: v.new_tensor([1, 2], dtype=lib.float16)),
    ]
    for i, form in enumerate(forms):
        ours, theirs = form(x, chainrule), form(t, torch)
        assert ours.dtype.name == tdtype(torch, theirs.dtype) and ours.shape == theirs.shape
        assert i == 3 or ours.tolist() == theirs.tolist()  # new_empty's values are undefined
    made = chainrule.zeros(2).new_zeros(3, requires_grad=True)
    assert made.requires_grad and made.is_leaf


def test_sizes_in_bytes_match_pytorch(torch):
    for name in ("float32", "float64", "int16", "bool"):
        ours, theirs = chainrule.zeros(3, dtype=name), torch.zeros(3, dtype=getattr(torch, name))
        assert ours.element_size() == theirs.element_size()
        assert (ours.nbytes, ours.itemsize) == (theirs.nbytes, theirs.itemsize)


# Random tensors: shapes and dtypes as PyTorch, reproducible with a generator.


def test_random_functions_have_pytorchs_shapes_and_dtypes(torch):
    x, t = chainrule.zeros(2, 3, dtype="float64"), torch.zeros(2, 3, dtype=torch.float64)
    p, tp = chainrule.ones(2, 4), torch.ones(2, 4)
    forms = [
        lambda lib, v, w: lib.rand(2, 3),
        lambda lib, v, w: lib.randn((4,), dtype=lib.float64),
        lambda lib, v, w: lib.randint(10, (16,)),
        lambda lib, v, w: lib.randint(3, 5, (2, 2), dtype=lib.int32),
        lambda lib, v, w: lib.randperm(5),
        lambda lib, v, w: lib.rand_like(v),
        lambda lib, v, w: lib.randn_like(v, dtype=lib.float32),
        lambda lib, v, w: lib.randint_like(v, 4),
        lambda lib, v, w: lib.randint_like(v, 2, 4),
        lambda lib, v, w: lib.multinomial(w, 3),
        lambda lib, v, w: lib.multinomial(w[0], 6, True),
        lambda lib, v, w: lib.bernoulli(v),
        lambda lib, v, w: lib.bernoulli(v, 0.5),
        lambda lib, v, w: lib.normal(v, 1.0),
        lambda lib, v, w: lib.normal(0.0, v),
        lambda lib, v, w: lib.normal(v, v[0]),
        lambda lib, v, w: lib.normal(2.0, 3.0, (5,)),
        lambda lib, v, w: lib.poisson(v),
    ]
    for i, form in enumerate(forms):
        ours, theirs = form(chainrule, x, p), form(torch, t, tp)
        assert ours.shape == tuple(theirs.shape), i
        assert ours.dtype.name == tdtype(torch, theirs.dtype), i


def test_the_same_seed_gives_the_same_numbers_from_every_random_function():
    x = chainrule.full((3, 4), 0.5)
    draws = [
        lambda g: chainrule.rand(5, generator=g),
        lambda g: chainrule.randn(5, generator=g),
        lambda g: chainrule.randint(0, 100, (5,), generator=g),
        lambda g: chainrule.randperm(10, generator=g),
        lambda g: chainrule.rand_like(x, generator=g),
        lambda g: chainrule.randn_like(x, generator=g),
        lambda g: chainrule.randint_like(x, 9, generator=g),
        lambda g: chainrule.multinomial(x, 3, generator=g),
        lambda g: chainrule.multinomial(x, 5, True, generator=g),
        lambda g: chainrule.bernoulli(x, generator=g),
        lambda g: chainrule.normal(x, 2.0, generator=g),
        lambda g: chainrule.normal(0.0, 1.0, (4,), generator=g),
        lambda g: chainrule.poisson(x, generator=g),
        lambda g: chainrule.zeros(6).normal_(generator=g),
        lambda g: chainrule.zeros(6).uniform_(generator=g),
        lambda g: chainrule.zeros(6).bernoulli_(generator=g),
        lambda g: chainrule.zeros(6).exponential_(generator=g),
        lambda g: chainrule.zeros(6).random_(generator=g),
        lambda g: chainrule.zeros(6).log_normal_(generator=g),
        lambda g: chainrule.zeros(6).cauchy_(generator=g),
        lambda g: chainrule.zeros(6).geometric_(0.3, generator=g),
    ]
    for i, draw in enumerate(draws):
        a, b, c = draw(gen(7)), draw(gen(7)), draw(gen(8))
        assert np.array_equal(a.detach().numpy(), b.detach().numpy()), i
        assert not np.array_equal(a.detach().numpy(), c.detach().numpy()) or a.dtype == np.bool_, i


def test_generator_state_seed_and_default_generator():
    g = chainrule.Generator()
    assert g.initial_seed() == 67280421310721  # PyTorch's seed for a new generator
    assert np.array_equal(chainrule.rand(3, generator=g).numpy(),
                          chainrule.rand(3, generator=chainrule.Generator()).numpy())  # fmt: skip
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    state = g.get_state()
    assert state.dtype == np.uint8 and state.shape == (5056,)  # PyTorch's layout
    first = chainrule.randn(4, generator=g)
    assert g.set_state(state) is g
    assert np.array_equal(chainrule.randn(4, generator=g).detach().numpy(), first.detach().numpy())
    seed = g.seed()
    assert isinstance(seed, int) and g.initial_seed() == seed
    default = chainrule.manual_seed(3)
    assert isinstance(default, chainrule.Generator) and chainrule.initial_seed() == 3
    saved = chainrule.get_rng_state()
    a = chainrule.rand(3)
    chainrule.set_rng_state(saved)
    assert np.array_equal(chainrule.rand(3).detach().numpy(), a.detach().numpy())
    assert np.array_equal(
        default.get_state().detach().numpy(), chainrule.get_rng_state().detach().numpy()
    )


def test_generator_misuse_is_refused():
    with pytest.raises(DTypeError, match=r"rand: generator must be a chainrule.Generator, got int"):
        chainrule.rand(2, generator=3)
    with pytest.raises(DTypeError, match=r"manual_seed: the seed must be a number, got 'a'"):
        chainrule.Generator().manual_seed("a")
    with pytest.raises(ValueError, match=r"manual_seed: the seed 18446744073709551616 does not"):
        chainrule.manual_seed(2**64)
    with pytest.raises(TypeError, match=r"set_state: expected the uint8 tensor get_state"):
        chainrule.Generator().set_state(chainrule.zeros(5056))
    with pytest.raises(ShapeError, match=r"set_state: a state has 5056 bytes .*got shape \(3,\)"):
        chainrule.Generator().set_state(chainrule.zeros(3, dtype="uint8"))


def test_randint_takes_both_forms_and_needs_a_size_tuple():
    assert chainrule.randint(100, (16,)).shape == (16,)
    for draws, low, high in [
        (chainrule.randint(10, (200,), generator=gen()), 0, 10),
        (chainrule.randint(3, 5, (50,), generator=gen()), 3, 5),
        (chainrule.randint(10, size=(50,), generator=gen()), 0, 10),
        (chainrule.randint(low=-2, high=2, size=(50,), generator=gen()), -2, 2),
        (chainrule.randint(high=4, size=(50,), generator=gen()), 0, 4),
    ]:
        assert set(draws.tolist()) == set(range(low, high))
    with pytest.raises(DTypeError, match=r"randint: got no size; size must be a tuple"):
        chainrule.randint(100, 16)
    with pytest.raises(DTypeError, match=r"randint: got size 3; size must be a tuple"):
        chainrule.randint(0, 10, 3)
    with pytest.raises(DomainError, match=r"randint: low \(5\) must be less than high \(3\)"):
        chainrule.randint(5, 3, (2,))


def test_randperm_is_a_permutation():
    p = chainrule.randperm(50, generator=gen())
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == np.int64
    assert chainrule.randperm(0).shape == (0,)
    assert chainrule.randperm(4, dtype=chainrule.int32).dtype == np.int32
    with pytest.raises(DomainError, match=r"randperm: n must be a non-negative integer, got -1"):
        chainrule.randperm(-1)


# multinomial.


def test_multinomial_without_replacement_repeats_no_index_in_a_row():
    weights = chainrule.rand(200, 10, generator=gen()) + 0.01
    draws = chainrule.multinomial(weights, 10, generator=gen(1))
    assert draws.shape == (200, 10) and draws.dtype == np.int64
    assert all(sorted(row) == list(range(10)) for row in draws.tolist())
    some = chainrule.multinomial(weights, 4, generator=gen(2))
    assert all(len(set(row)) == 4 for row in some.tolist())


def test_multinomial_follows_the_weights():
    weights = chainrule.tensor([1.0, 0.0, 3.0, 4.0])
    draws = chainrule.multinomial(weights, N, replacement=True, generator=gen())
    freq = np.bincount(draws.detach().numpy(), minlength=4) / N
    np.testing.assert_allclose(freq, [0.125, 0.0, 0.375, 0.5], atol=0.015)
    # Without replacement the first draw follows the weights too, and zero weights come last.
    firsts = chainrule.multinomial(weights.expand(N, 4), 3, generator=gen(1))
    np.testing.assert_allclose(np.bincount(firsts.detach().numpy()[:, 0], minlength=4) / N,
                               [0.125, 0.0, 0.375, 0.5], atol=0.015)  # fmt: skip
    assert not (firsts.detach().numpy() == 1).any()
    assert chainrule.multinomial(weights, 4, generator=gen()).tolist()[-1] == 1


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((chainrule.ones(3), 4), DomainError, r"cannot draw 4 samples without replacement from 3"),
        (
            (chainrule.tensor([1.0, -1.0]), 1),
            DomainError,
            r"weights must be finite and non-negative",
        ),
        (
            (chainrule.tensor([1.0, float("nan")]), 1),
            DomainError,
            r"weights must be finite and non-negative",
        ),
        ((chainrule.zeros(2, 3), 1, True), DomainError, r"every row's weights must have a posi"),
        ((chainrule.ones(2, 2, 2), 1), ShapeError, r"input must be 1-D or 2-D, got shape \(2,"),
        ((chainrule.arange(3), 1), DTypeError, r"input must be floating-point, got int64"),
        ((chainrule.ones(3), 0), DomainError, r"num_samples must be positive, got 0"),
    ],
)
def test_multinomial_errors(torch, args, error, message):
    with pytest.raises(error, match="multinomial: " + message):
        chainrule.multinomial(*args)
    with pytest.raises(RuntimeError):  # PyTorch refuses each one too
        torch.multinomial(*(torch.tensor(a.numpy()) if isinstance(a, chainrule.Tensor) else a
                            for a in args))  # fmt: skip


# Distributions given by tensors: statistics within bands, zero gradients as PyTorch.


def test_bernoulli_normal_and_poisson_statistics():
    b = chainrule.bernoulli(chainrule.full((N,), 0.3), generator=gen())
    assert set(b.tolist()) == {0.0, 1.0} and abs(b.detach().numpy().mean() - 0.3) < 0.015
    assert (
        abs(
            chainrule.bernoulli(chainrule.zeros(N), 0.8, generator=gen()).detach().numpy().mean()
            - 0.8
        )
        < 0.015
    )
    n = chainrule.normal(chainrule.full((N,), 2.0), 3.0, generator=gen())
    assert abs(n.detach().numpy().mean() - 2.0) < 0.1 and abs(n.detach().numpy().std() - 3.0) < 0.1
    n = chainrule.normal(-1.0, chainrule.full((N,), 0.5), generator=gen())
    assert (
        abs(n.detach().numpy().mean() + 1.0) < 0.02 and abs(n.detach().numpy().std() - 0.5) < 0.02
    )
    n = chainrule.normal(
        chainrule.tensor([0.0, 100.0]), chainrule.full((N, 1), 1.0), generator=gen()
    )
    assert n.shape == (N, 2) and abs(n.detach().numpy()[:, 1].mean() - 100.0) < 0.05
    p = chainrule.poisson(chainrule.full((N,), 4.0), generator=gen())
    assert abs(p.detach().numpy().mean() - 4.0) < 0.1 and abs(p.detach().numpy().var() - 4.0) < 0.3
    assert np.array_equal(p.detach().numpy(), np.round(p.detach().numpy()))


def test_samples_pass_zero_gradients_back_as_pytorch(torch):
    def run(lib):
        mean = lib.tensor([1.0, 2.0], requires_grad=True)
        std = lib.tensor([1.0, 1.0], requires_grad=True)
        prob = lib.tensor([0.3, 0.6], requires_grad=True)
        rate = lib.tensor([1.0, 2.0], requires_grad=True)
        outs = [lib.normal(mean, std), lib.bernoulli(prob), lib.poisson(rate)]
        sum(o.sum() for o in outs).backward()
        return [x.grad.tolist() for x in (mean, std, prob, rate)]

    assert run(chainrule) == run(torch) == [[0.0, 0.0]] * 4


@pytest.mark.parametrize(
    "use, error, message",
    [
        (lambda: chainrule.normal(0.0, 1.0), DTypeError, r"normal: with a number for both"),
        (lambda: chainrule.normal(chainrule.zeros(2), -1.0), DomainError,
         r"normal: std must be >= 0"),
        (lambda: chainrule.normal(chainrule.zeros(2), chainrule.ones(3)), ShapeError,
         r"normal: mean of shape \(2,\) and std of shape \(3,\) do not broadcast"),
        (lambda: chainrule.bernoulli(chainrule.tensor([1.5])), DomainError,
         r"bernoulli: probabilities must lie in \[0, 1\], got 1.5"),
        (lambda: chainrule.bernoulli([0.5]), DTypeError, r"bernoulli: input must be a Tensor"),
        (lambda: chainrule.poisson(chainrule.tensor([-1.0])), DomainError,
         r"poisson: rates must be non-negative"),
        (lambda: chainrule.rand(2, dtype=chainrule.int64), DTypeError,
         r"rand: draws floating-point numbers; dtype int64 is not"),
    ],
)  # fmt: skip
def test_distribution_errors(use, error, message):
    with pytest.raises(error, match=message):
        use()


# In-place random fills.


def test_random_fills_have_their_distributions():
    x = chainrule.zeros(N)
    assert abs(x.normal_(1.0, 2.0, generator=gen()).detach().numpy().std() - 2.0) < 0.05
    assert abs(x.detach().numpy().mean() - 1.0) < 0.05
    x.uniform_(-2.0, 4.0, generator=gen())
    assert (
        x.detach().numpy().min() >= -2.0
        and x.detach().numpy().max() < 4.0
        and abs(x.detach().numpy().mean() - 1.0) < 0.05
    )
    assert abs(x.exponential_(2.0, generator=gen()).detach().numpy().mean() - 0.5) < 0.02
    assert abs(x.bernoulli_(0.25, generator=gen()).detach().numpy().mean() - 0.25) < 0.015
    assert abs(np.log(x.log_normal_(0.0, 0.5, generator=gen()).detach().numpy()).std() - 0.5) < 0.02
    assert abs(np.median(x.cauchy_(3.0, 1.0, generator=gen()).detach().numpy()) - 3.0) < 0.05
    x.geometric_(0.5, generator=gen())
    assert x.detach().numpy().min() == 1.0 and abs(x.detach().numpy().mean() - 2.0) < 0.05
    assert set(x.random_(3, generator=gen()).tolist()) == {0.0, 1.0, 2.0}
    assert set(x.random_(2, 5, generator=gen()).tolist()) == {2.0, 3.0, 4.0}
    assert set(x.random_(to=2, generator=gen()).tolist()) == {0.0, 1.0}
    assert (
        x.random_(generator=gen()).detach().numpy().max() <= 2**24
        and x.detach().numpy().max() > 2**23
    )
    assert set(chainrule.zeros(50, dtype="bool").random_(generator=gen()).tolist()) == {0, 1}
    big = chainrule.zeros(50, dtype="int64").random_(generator=gen())
    assert big.detach().numpy().min() >= 0 and big.detach().numpy().max() > 2**60
    assert chainrule.zeros(5, dtype="int32").random_(7, None).detach().numpy().min() >= 7
    probs = chainrule.tensor([0.0, 1.0, 0.0])
    assert chainrule.zeros(3, dtype="int64").bernoulli_(probs).tolist() == [0, 1, 0]


def test_random_fills_are_in_place_writes():
    x = chainrule.zeros(4)
    same = x.normal_()
    assert same is x and x._version == 1
    x.uniform_()
    assert x._version == 2
    leaf = chainrule.zeros(3, requires_grad=True)
    for fill in ("normal_", "uniform_", "bernoulli_", "exponential_", "random_"):
        with pytest.raises(GraphError, match=fill + r": a leaf tensor that requires grad"):
            getattr(leaf, fill)()
    with chainrule.no_grad():
        leaf.normal_()  # what nn.init does
    assert leaf.requires_grad and leaf._version == 1
    view = chainrule.zeros(2, 3)[0]
    view.uniform_(5.0, 6.0)
    assert (
        view._base.detach().numpy()[0].min() >= 5.0 and view._base.detach().numpy()[1].max() == 0.0
    )


def test_a_fill_on_a_non_leaf_cuts_the_gradient_like_pytorch(torch):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y[:2].normal_()
        (y * 3).sum().backward()
        return x.grad.tolist()

    assert run(chainrule) == run(torch) == [0.0, 0.0, 6.0]


@pytest.mark.parametrize(
    "use, error, message",
    [
        (lambda: chainrule.zeros(2, dtype="int64").normal_(), DTypeError,
         r"normal_: fills floating-point tensors only, this one is a int64 tensor"),
        (lambda: chainrule.zeros(2, dtype="int64").uniform_(), DTypeError,
         r"uniform_: fills float"),
        (lambda: chainrule.zeros(2).normal_(0.0, -1.0), DomainError, r"normal_: std must be >= 0"),
        (lambda: chainrule.zeros(2).uniform_(2.0, 1.0), DomainError, r"uniform_: from \(2.0\)"),
        (lambda: chainrule.zeros(2).exponential_(0.0), DomainError, r"exponential_: lambd must"),
        (lambda: chainrule.zeros(2).bernoulli_(1.5), DomainError,
         r"bernoulli_: probabilities must lie in \[0, 1\], got 1.5"),
        (lambda: chainrule.zeros(2).geometric_(1.5), DomainError, r"geometric_: p must lie in"),
        (lambda: chainrule.zeros(2).random_(5, 5), DomainError,
         r"random_: from \(5\) must be less than to \(5\)"),
        (lambda: chainrule.zeros(2).random_(3.5), DTypeError, r"random_: to must be an integer"),
    ],
)  # fmt: skip
def test_fill_errors(use, error, message):
    with pytest.raises(error, match=message):
        use()


# Grad modes and vmap.


def test_inference_mode_matches_pytorch(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen += [lib.is_inference_mode_enabled(), (x * 2).requires_grad]
            with lib.inference_mode(False):
                seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            seen.append(lib.is_grad_enabled())

        @lib.inference_mode()
        def called(v):
            return (v * 2).requires_grad, lib.is_inference_mode_enabled()

        @lib.inference_mode
        def bare(v):
            return (v * 2).requires_grad

        return seen + [called(x), bare(x), lib.is_inference_mode_enabled(), lib.is_grad_enabled()]

    assert run(chainrule) == run(torch)


def test_vmap_refuses_the_new_random_draws_by_default():
    xs = chainrule.zeros(3, 2, dtype="float64")
    draws = [
        lambda x: x + chainrule.normal(0.0, 1.0, (2,), dtype=chainrule.float64),
        lambda x: x + chainrule.rand_like(x),
        lambda x: x + chainrule.bernoulli(x + 0.5),
    ]
    for draw in draws:
        with pytest.raises(GraphError, match=r"vmap: func draws random numbers"):
            func.vmap(draw)(xs)
    same = func.vmap(draws[0], randomness="same")(xs)
    assert np.array_equal(same.detach().numpy()[0], same.detach().numpy()[1])


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_the_size_can_be_given_by_keyword_as_in_pytorch(name, torch):
    # pyGAT's nn.Parameter(torch.empty(size=(in_features, out_features))).
    ours = getattr(chainrule, name)(size=(2, 3), dtype=chainrule.float64)
    theirs = getattr(torch, name)(size=(2, 3), dtype=torch.float64)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == np.float64
    if name != "empty":
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(TypeError, match=f"{name}\\(\\): give the size positionally or as size="):
        getattr(chainrule, name)(2, size=(3,))
