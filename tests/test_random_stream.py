"""`manual_seed` draws PyTorch's stream: each sampler, under one seed, gives PyTorch's numbers
bit for bit and leaves the generator in PyTorch's state (the same number of draws)."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import rejection_sampling, vector_math

F32, F64 = np.float32, np.float64
WEIGHTS = np.array([0.1, 0.2, 0.3, 0.0, 0.4], F32)
RAMP = np.linspace(-1, 1, 33).astype(F32)


def both(name: str, dtype=F32):
    """chainrule's and torch's tensor of a NumPy array."""
    return cr.tensor(name.astype(dtype)), name.astype(dtype)


# Each case: (id, chainrule call, torch call), both taking the library as `m` and `nf` its
# functional module; inputs built from the same NumPy arrays.
CASES = [
    ("rand f32 7", lambda m, nf: m.rand(7)),
    ("rand f64 3x5", lambda m, nf: m.rand(3, 5, dtype=m.float64)),
    ("randn f32 small", lambda m, nf: m.randn(15)),
    ("randn f32 blocks", lambda m, nf: m.randn(4, 8)),
    ("randn f32 tail", lambda m, nf: m.randn(1000 + 7)),
    ("randn f64 small", lambda m, nf: m.randn(5, dtype=m.float64)),
    ("randn f64 tail", lambda m, nf: m.randn(21, 3, dtype=m.float64)),
    ("randint small range", lambda m, nf: m.randint(0, 10, (50,))),
    ("randint wide range", lambda m, nf: m.randint(-5, 2**40, (20,))),
    ("randint float dtype", lambda m, nf: m.randint(3, 9, (2, 6), dtype=m.float32)),
    ("randperm 1", lambda m, nf: m.randperm(1)),
    ("randperm 500", lambda m, nf: m.randperm(500)),
    ("rand_like", lambda m, nf: m.rand_like(m.zeros(3, 5, dtype=m.float64))),
    ("randn_like", lambda m, nf: m.randn_like(m.zeros(40))),
    ("randint_like", lambda m, nf: m.randint_like(m.zeros(3, 5), 3, 9)),
    ("normal tensor mean", lambda m, nf: m.normal(m.arange(20.0), 2.0)),
    ("normal tensor std", lambda m, nf: m.normal(1.0, m.arange(20.0))),
    ("normal both tensors", lambda m, nf: m.normal(m.arange(5.0), m.arange(5.0))),
    ("normal numbers", lambda m, nf: m.normal(3.0, 0.5, (7,))),
    ("normal_ f64 small", lambda m, nf: m.zeros(5, dtype=m.float64).normal_(3, 0.1)),
    ("normal_ f32 blocks", lambda m, nf: m.zeros(40).normal_(0.5, 0.02)),
    ("uniform_ f32", lambda m, nf: m.zeros(100).uniform_(-0.3, 0.7)),
    ("uniform_ f64", lambda m, nf: m.zeros(100, dtype=m.float64).uniform_(-0.3, 0.7)),
    ("bernoulli_ number", lambda m, nf: m.zeros(100).bernoulli_(0.3)),
    ("bernoulli f32 p", lambda m, nf: m.bernoulli(m.full((100,), 0.3))),
    ("bernoulli f64 p", lambda m, nf: m.bernoulli(m.full((100,), 0.3, dtype=m.float64))),
    ("multinomial replacement", lambda m, nf: m.multinomial(m.tensor(WEIGHTS), 20, True)),
    ("multinomial without", lambda m, nf: m.multinomial(m.tensor(WEIGHTS), 3)),
    ("multinomial one per row", lambda m, nf: m.multinomial(m.tensor(np.stack([WEIGHTS] * 3)), 1)),
    ("exponential_ f32", lambda m, nf: m.zeros(50).exponential_(2.0)),
    ("exponential_ f64", lambda m, nf: m.zeros(50, dtype=m.float64).exponential_()),
    ("cauchy_", lambda m, nf: m.zeros(50, dtype=m.float64).cauchy_(1, 2)),
    ("log_normal_", lambda m, nf: m.zeros(51, dtype=m.float64).log_normal_()),
    ("geometric_", lambda m, nf: m.zeros(50, dtype=m.float64).geometric_(0.3)),
    ("random_ float32", lambda m, nf: m.zeros(30).random_()),
    ("random_ float64", lambda m, nf: m.zeros(30, dtype=m.float64).random_()),
    ("random_ int64", lambda m, nf: m.zeros(30, dtype=m.int64).random_()),
    ("random_ int32", lambda m, nf: m.zeros(30, dtype=m.int32).random_()),
    ("random_ uint8", lambda m, nf: m.zeros(30, dtype=m.uint8).random_()),
    ("random_ bool", lambda m, nf: m.zeros(30, dtype=m.bool).random_()),
    ("random_ bounds", lambda m, nf: m.zeros(30, dtype=m.int64).random_(5, 20)),
    ("random_ from only", lambda m, nf: m.zeros(30).random_(3, None)),
    ("random_ to only", lambda m, nf: m.zeros(30, dtype=m.int16).random_(7)),
    ("normal_ transposed", lambda m, nf: m.zeros(8, 6).t().normal_()),
    ("uniform_ transposed", lambda m, nf: m.zeros(8, 6).t().uniform_()),
    ("dropout", lambda m, nf: nf.dropout(m.ones(64), 0.3)),
    ("dropout f64", lambda m, nf: nf.dropout(m.ones(4, 16, dtype=m.float64), 0.5)),
    ("dropout2d", lambda m, nf: nf.dropout2d(m.ones(2, 8, 3, 3), 0.3)),
    ("dropout1d", lambda m, nf: nf.dropout1d(m.ones(2, 8, 5), 0.3)),
    ("alpha_dropout", lambda m, nf: nf.alpha_dropout(m.tensor(RAMP), 0.3, True)),
    ("feature_alpha_dropout", lambda m, nf: nf.feature_alpha_dropout(m.ones(2, 8, 3), 0.3, True)),
    ("rrelu", lambda m, nf: nf.rrelu(m.tensor(RAMP), training=True)),
    (
        "fractional_max_pool2d",
        lambda m, nf: nf.fractional_max_pool2d(
            m.arange(2 * 3 * 9 * 9.0).reshape(2, 3, 9, 9), 2, output_size=4
        ),
    ),
]


def _run(library, functional, case, seed):
    library.manual_seed(seed)
    out = case(library, functional)
    return np.asarray(out.detach().numpy()), library.get_rng_state().numpy()


@pytest.mark.parametrize("name, case", CASES, ids=[c[0] for c in CASES])
def test_each_sampler_draws_pytorchs_numbers(torch, name, case):
    for seed in (0, 7, 2**40 + 3):
        ours, our_state = _run(cr, F, case, seed)
        theirs, their_state = _run(torch, torch.nn.functional, case, seed)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, name
        assert np.array_equal(ours, theirs, equal_nan=True), (name, seed)
        assert np.array_equal(our_state, their_state), (name, seed, "state")


def test_interleaved_draws_and_restored_states_stay_in_step(torch):
    def program(m):
        m.manual_seed(1337)
        out = [m.randn(3), m.rand(17, dtype=m.float64), m.randint(0, 5, (4,))]
        state = m.get_rng_state()
        out += [m.randn(1), m.randperm(9), m.randn(20, dtype=m.float64)]
        m.set_rng_state(state)
        out += [m.randn(1), m.zeros(40).normal_(), m.randn(3, dtype=m.float64)]
        g = m.Generator().manual_seed(5)
        out += [m.rand(4, generator=g), m.randn(2), m.randn(2, generator=g)]
        return [np.asarray(t.numpy()) for t in out], m.get_rng_state().numpy(), g.get_state()

    ours, our_state, our_g = program(cr)
    theirs, their_state, their_g = program(torch)
    for a, b in zip(ours, theirs):
        assert np.array_equal(a, b)
    assert np.array_equal(our_state, their_state)
    assert np.array_equal(our_g.numpy(), their_g.numpy())


def test_states_cross_between_the_libraries(torch):
    torch.manual_seed(3)
    torch.randn(1)  # leaves a cached normal in the state
    torch.rand(700)  # and a twist behind
    cr.set_rng_state(cr.tensor(torch.get_rng_state().numpy()))
    assert np.array_equal(cr.randn(3).numpy(), torch.randn(3).numpy())
    cr.manual_seed(9)
    cr.rand(5)
    torch.set_rng_state(torch.from_numpy(cr.get_rng_state().numpy().copy()))
    assert np.array_equal(cr.rand(5).numpy(), torch.rand(5).numpy())
    assert cr.initial_seed() == torch.initial_seed() == 9


def test_seeds_as_pytorch_takes_them(torch):
    for seed in (-1, 2**63, 2**64 - 1, 12.7):
        cr.manual_seed(seed)
        torch.manual_seed(seed)
        assert cr.initial_seed() == torch.initial_seed()
        assert np.array_equal(cr.rand(3).numpy(), torch.rand(3).numpy())
    assert cr.Generator().initial_seed() == torch.Generator().initial_seed()
    assert np.array_equal(cr.Generator().get_state().numpy(), torch.Generator().get_state().numpy())


def test_both_float32_normal_kernels_match_pytorchs(torch, monkeypatch):
    # PyTorch's x86-64 build takes the AVX2 block on this machine and the C library's logf,
    # cosf and sinf under ATEN_CPU_CAPABILITY=default; chainrule has both.
    assert vector_math._capability() == "avx2"  # what torch takes on this machine
    uniforms = cr.Generator().manual_seed(4).unit(16 * 64, F32).reshape(-1, 16)
    avx2 = vector_math.box_muller_16(uniforms, 0.0, 1.0)
    monkeypatch.setattr(vector_math, "_capability", lambda: "default")
    libm = vector_math.box_muller_16(uniforms, 0.0, 1.0)
    assert avx2.dtype == libm.dtype == F32
    assert np.sum(avx2 != libm) > 0 and np.allclose(avx2, libm, rtol=1e-5, atol=1e-6)
    monkeypatch.undo()
    torch.manual_seed(0)
    cr.manual_seed(0)
    assert np.array_equal(cr.randn(64).numpy(), torch.randn(64).numpy())


def test_fused_multiply_adds_round_once():
    a, b, c = np.array([1 + 2.0**-30], F64), 1 + 2.0**-30, np.array([-1.0])
    assert vector_math.fma64(a, b, c)[0] == 2.0**-29 + 2.0**-60  # a * b + c, rounded once
    x = np.array([1 + 2.0**-12], F32)
    assert vector_math.fma32(x, x, np.float32(-1))[0] == np.float32(2.0**-11 + 2.0**-24)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_poisson_binomial_and_gamma_draw_one_element_at_a_time_as_pytorch(torch, dtype):
    rates = np.tile(np.array([0, 0.5, 3, 9.9, 10, 25, 300, 1e4], dtype), 3)
    shapes = np.tile(np.array([0.0, 0.3, 1.0, 2.5, 7.0, 0.01, 50], dtype), 3)
    for seed in (0, 5):
        cr.manual_seed(seed)
        torch.manual_seed(seed)
        assert np.array_equal(cr.poisson(cr.tensor(rates)).numpy(),
                              torch.poisson(torch.tensor(rates)).numpy())  # fmt: skip
        counts = np.tile(np.array([0, 1, 5, 10, 20, 50, 100, 1000, 7], dtype), 3)
        probs = np.tile(np.array([0.5, 0.3, 0.9, 0.05, 0.5, 0.7, 0.2, 0.01, 1.0], dtype), 3)
        assert np.array_equal(
            cr.binomial(cr.tensor(counts), cr.tensor(probs)).numpy(),
            torch.binomial(torch.tensor(counts), torch.tensor(probs)).numpy(),
        )
        ours = rejection_sampling.standard_gamma_values(shapes, cr.default_generator)
        theirs = torch._standard_gamma(torch.tensor(shapes)).numpy()
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
        assert np.array_equal(cr.get_rng_state().numpy(), torch.get_rng_state().numpy())


def test_vmap_and_compiled_replays_draw_pytorchs_stream(torch):
    x = np.arange(24.0, dtype=F32).reshape(8, 3)
    programs = [
        ("different", lambda m, nf: lambda v: v + m.randn(3)),  # 24 normals: PyTorch's blocks
        ("different", lambda m, nf: lambda v: nf.dropout(v, 0.5) * m.rand(3) + m.randn(3)),
        ("same", lambda m, nf: lambda v: v + m.randn(3)),
    ]
    for randomness, make in programs:
        cr.manual_seed(0)
        torch.manual_seed(0)
        ours = cr.func.vmap(make(cr, F), randomness=randomness)(cr.tensor(x)).numpy()
        theirs = torch.func.vmap(make(torch, torch.nn.functional), randomness=randomness)(
            torch.tensor(x)
        ).numpy()
        assert np.array_equal(ours, theirs), randomness
        assert np.array_equal(cr.get_rng_state().numpy(), torch.get_rng_state().numpy())
    step = cr.compile(lambda v: F.dropout(v, 0.5) + cr.randn(3))
    cr.manual_seed(0)
    torch.manual_seed(0)
    for _ in range(3):  # every replay draws fresh numbers, PyTorch's
        expected = torch.nn.functional.dropout(torch.tensor(x), 0.5) + torch.randn(3)
        assert np.array_equal(step(cr.tensor(x)).numpy(), expected.numpy())
