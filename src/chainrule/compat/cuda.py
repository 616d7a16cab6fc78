"""``torch.cuda`` on a machine without CUDA, as a CPU-only PyTorch build has it: no devices,
seeds that are accepted and ignored, memory counters at zero, and `NoCudaError` (an
AssertionError, as PyTorch's) from every call that needs a device."""

from __future__ import annotations

from typing import Any

from ..errors import NoCudaError
from . import amp  # noqa: F401  (torch.cuda.amp: autocast and GradScaler)


def _no_cuda(call: str) -> NoCudaError:
    return NoCudaError(
        f"torch.cuda.{call}: chainrule runs on the CPU only (no CUDA device), "
        "as a PyTorch built without CUDA"
    )


def is_available() -> bool:
    """False: chainrule computes on the CPU with NumPy."""
    return False


def is_initialized() -> bool:
    """False: there is no CUDA state to initialise."""
    return False


def device_count() -> int:
    """0 devices."""
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as on a machine without CUDA."""
    return False


def is_tf32_supported() -> bool:
    """False, as on a machine without CUDA."""
    return False


def get_arch_list() -> list[str]:
    """No CUDA architectures: an empty list."""
    return []


def manual_seed(seed: int) -> None:
    """Accepted and ignored (no CUDA generator), as PyTorch does without CUDA; seed the CPU
    generator with ``torch.manual_seed``."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as `manual_seed`."""


def seed() -> None:
    """Accepted and ignored (no CUDA generator)."""


def seed_all() -> None:
    """Accepted and ignored (no CUDA generator)."""


def empty_cache() -> None:
    """Nothing to free: a no-op, as in PyTorch without CUDA."""


def memory_allocated(device: Any = None) -> int:
    """0 bytes: nothing lives on a CUDA device."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """0 bytes, as `memory_allocated`."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """0 bytes, as `memory_allocated`."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """0 bytes, as `memory_allocated`."""
    return 0


def synchronize(device: Any = None) -> None:
    """Needs a device: raises `NoCudaError`, as a CPU-only PyTorch does."""
    raise _no_cuda("synchronize")


def current_device() -> int:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("current_device")


def set_device(device: Any) -> None:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("set_device")


def get_device_name(device: Any = None) -> str:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("get_device_name")


def get_device_properties(device: Any = None) -> Any:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("get_device_properties")


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("get_device_capability")


def get_rng_state(device: Any = "cuda") -> Any:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("get_rng_state")


def initial_seed() -> int:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("initial_seed")


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("mem_get_info")


def reset_peak_memory_stats(device: Any = None) -> None:
    """Needs a device: raises `NoCudaError`."""
    raise _no_cuda("reset_peak_memory_stats")
