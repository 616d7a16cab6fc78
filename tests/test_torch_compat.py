"""The modules programs import but barely use (chainrule.compat): ``torch.cuda``,
``torch.accelerator``, ``torch.backends``, ``torch.amp``, ``torch.jit``, ``torch.onnx``,
``torch.hub``, ``torch.distributed``, each answering as the installed CPU-only torch does, or
with one clear error where chainrule does not do the thing."""

import warnings

import pytest

import chainrule
from chainrule.compat import accelerator, amp, backends, cuda, hub, onnx, process_groups
from chainrule.compat import torchscript as jit
from chainrule.errors import NoCudaError, UnsupportedError

CUDA_VALUES = [
    "is_available", "is_initialized", "device_count", "is_bf16_supported", "is_tf32_supported",
    "get_arch_list", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "empty_cache", "seed", "seed_all",
]  # fmt: skip
CUDA_DEVICE_CALLS = [
    "synchronize", "current_device", "get_device_name", "get_device_properties",
    "get_device_capability", "get_rng_state", "initial_seed", "mem_get_info",
]  # fmt: skip


def test_cuda_answers_as_a_cpu_only_pytorch(torch):
    assert not torch.cuda.is_available()  # the oracle is a CPU-only build
    for name in CUDA_VALUES:
        assert getattr(cuda, name)() == getattr(torch.cuda, name)(), name
    assert cuda.manual_seed(0) is torch.cuda.manual_seed(0) is None
    assert cuda.manual_seed_all(0) is torch.cuda.manual_seed_all(0) is None
    for name in CUDA_DEVICE_CALLS:
        with pytest.raises(AssertionError):
            getattr(torch.cuda, name)()
        with pytest.raises(NoCudaError, match=rf"^torch\.cuda\.{name}: chainrule runs on the CPU"):
            getattr(cuda, name)()


def test_accelerator_says_there_is_none(torch):
    assert accelerator.is_available() is torch.accelerator.is_available() is False
    assert accelerator.current_accelerator() is torch.accelerator.current_accelerator() is None
    assert accelerator.device_count() == torch.accelerator.device_count() == 0


def test_backend_flags_read_as_pytorchs_and_can_be_set(torch):
    for name in ("cudnn", "mps", "cuda"):
        assert getattr(backends, name).is_available() is False
    assert backends.cudnn.is_available() == torch.backends.cudnn.is_available()
    assert backends.mps.is_available() == torch.backends.mps.is_available()
    assert backends.mps.is_built() == torch.backends.mps.is_built()
    assert backends.cuda.is_built() == torch.backends.cuda.is_built()
    assert backends.cudnn.version() == torch.backends.cudnn.version()
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
        assert getattr(backends.cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):  # fmt: skip
        assert getattr(backends.cuda.matmul, flag) == getattr(torch.backends.cuda.matmul, flag)
    assert backends.cuda.flash_sdp_enabled() == torch.backends.cuda.flash_sdp_enabled()
    assert backends.cuda.math_sdp_enabled() == torch.backends.cuda.math_sdp_enabled()
    backends.cuda.enable_flash_sdp(False)
    assert backends.cuda.flash_sdp_enabled() is False
    backends.cuda.enable_flash_sdp(True)
    backends.cudnn.deterministic = True
    assert backends.cudnn.deterministic is True
    backends.cudnn.deterministic = False


def test_amp_is_off_as_pytorchs_without_cuda(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that CUDA is not available
        theirs = torch.amp.GradScaler("cuda")
        with torch.autocast("cuda"):
            pass
    ours = amp.GradScaler("cuda")
    assert ours.is_enabled() == theirs.is_enabled()
    assert ours.get_scale() == theirs.get_scale()
    assert ours.state_dict() == theirs.state_dict()
    loss = chainrule.tensor(2.0)
    assert ours.scale(loss) is loss

    class Stepper:
        steps = 0

        def step(self):
            self.steps += 1

    stepper = Stepper()
    ours.scale(loss)
    ours.unscale_(stepper)
    ours.step(stepper)
    ours.update()
    assert stepper.steps == 1
    with amp.autocast("cuda", dtype=chainrule.float16):
        assert (chainrule.ones(2) @ chainrule.ones(2)).dtype == chainrule.float32

    @amp.autocast()
    def double(x):
        return 2 * x

    assert double(3) == 6


def test_jit_runs_python_as_written(torch):
    model = chainrule.nn.Linear(2, 1)
    assert jit.script(model) is model
    assert jit.trace(model, chainrule.zeros(1, 2)) is model
    assert jit.is_scripting() is torch.jit.is_scripting() is False
    assert jit.is_tracing() is torch.jit.is_tracing() is False

    def f(x):
        return x + 1

    for decorator in (jit.ignore, jit.ignore(drop=True), jit.unused, jit.export, jit.script):
        assert decorator(f) is f
        assert torch.jit.ignore(f)(1) == decorator(f)(1) == 2  # PyTorch's decorators keep it too
    with pytest.raises(UnsupportedError, match=r"^torch\.jit\.save: chainrule writes no"):
        jit.save(model, "model.pt")
    with pytest.raises(UnsupportedError, match=r"^torch\.jit\.load: chainrule cannot run"):
        jit.load("model.pt")


def test_onnx_export_says_what_chainrule_does_not_do():
    assert onnx.is_in_onnx_export() is False
    with pytest.raises(UnsupportedError, match=r"^torch\.onnx\.export: chainrule does not export"):
        onnx.export(chainrule.nn.Linear(1, 1), chainrule.zeros(1), "model.onnx")


def test_hub_keeps_pytorchs_directory_and_downloads_nothing(torch, monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert hub.get_dir() == torch.hub.get_dir()
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")
    for call in (hub.load, hub.list, hub.load_state_dict_from_url):
        with pytest.raises(UnsupportedError, match=rf"^torch\.hub\.{call.__name__}: chainrule"):
            call("pytorch/vision", "resnet18")


def test_distributed_has_no_process_group(torch):
    assert process_groups.is_initialized() is torch.distributed.is_initialized() is False
    assert process_groups.is_available() is False  # PyTorch's build has it; chainrule has not
    x = torch.zeros(1)
    calls = [("get_rank", ()), ("get_world_size", ()), ("barrier", ()), ("all_reduce", (x,)),
             ("broadcast", (x, 0)), ("destroy_process_group", ())]  # fmt: skip
    for name, args in calls:
        with pytest.raises((ValueError, AssertionError)) as theirs:
            getattr(torch.distributed, name)(*args)
        with pytest.raises(theirs.type) as ours:
            getattr(process_groups, name)(*args)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(UnsupportedError, match=r"^torch\.distributed\.init_process_group: "):
        process_groups.init_process_group("gloo")


CLOSE_CASES = [
    ([1.0, 2.0], [1.0, 2.000001], {}),
    ([1.0, 2.0], [1.0, 2.1], {}),
    ([1.0, 2.0], [1.0, 2.05], {"rtol": 0.1, "atol": 0.0}),
    ([1, 2], [1, 3], {}),
    ([1, 2], [1, 3], {"rtol": 0.0, "atol": 1.0}),
    ([float("nan")], [float("nan")], {}),
    ([float("nan")], [float("nan")], {"equal_nan": True}),
    ([[1.0, 2.0]], [1.0, 2.0], {}),
]


@pytest.mark.parametrize(("a", "b", "options"), CLOSE_CASES)
def test_assert_close_passes_and_fails_as_pytorchs(a, b, options, torch):
    from chainrule.compat.testing import assert_close

    def outcome(library, check):
        try:
            check(library.tensor(a), library.tensor(b), **options)
        except AssertionError:
            return "fails"
        return "passes"

    assert outcome(chainrule, assert_close) == outcome(torch, torch.testing.assert_close)


def test_assert_close_checks_dtype_and_containers_as_pytorchs(torch):
    from chainrule.compat.testing import assert_close

    x32, x64 = chainrule.ones(2), chainrule.ones(2, dtype=chainrule.float64)
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        assert_close(x32, x64)
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        torch.testing.assert_close(torch.ones(2), torch.ones(2, dtype=torch.float64))
    assert_close(x32, x64, check_dtype=False)
    assert_close({"w": [x32, 1.0]}, {"w": [x32, 1.0 + 1e-9]})
    with pytest.raises(AssertionError):
        assert_close({"w": x32}, {"w": x32 + 1})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(x32, x32, rtol=1e-3)
