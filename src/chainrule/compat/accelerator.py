"""``torch.accelerator`` without an accelerator, as PyTorch reports on a CPU-only machine:
nothing is available, there is no current accelerator and no device."""

from __future__ import annotations

from typing import Any


def is_available() -> bool:
    """False: chainrule computes on the CPU."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0 accelerator devices."""
    return 0


def synchronize(device: Any = None) -> None:
    """Nothing runs asynchronously: a no-op."""


def empty_cache() -> None:
    """No accelerator memory to free: a no-op."""
