"""``torch.distributed`` in a program that runs as one process: there are no process groups
(`is_available` is False, as on a PyTorch build without distributed support, so a program
takes its single-process path), and starting one raises `chainrule.errors.UnsupportedError`.
chainrule's own data-parallel training on MPI is `chainrule.distributed`."""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError


def is_available() -> bool:
    """False: chainrule has no ``torch.distributed`` process groups (PyTorch's CPU build says
    True; its programs then check `is_initialized`, False here too)."""
    return False


def is_initialized() -> bool:
    """False: no process group is ever started."""
    return False


def _no_group() -> ValueError:
    # PyTorch raises ValueError when asked for the rank before a process group exists.
    return ValueError(
        "Default process group has not been initialized, please make sure to "
        "call init_process_group."
    )


def get_rank(group: Any = None) -> int:
    """Raises ValueError, as PyTorch does without a process group."""
    raise _no_group()


def get_world_size(group: Any = None) -> int:
    """Raises ValueError, as PyTorch does without a process group."""
    raise _no_group()


def init_process_group(*args, **kwargs) -> None:
    """Raises `UnsupportedError`: chainrule starts no process groups (see
    `chainrule.distributed` for data-parallel training on MPI)."""
    raise UnsupportedError(
        "torch.distributed.init_process_group: chainrule has no process "
        "groups; chainrule.distributed trains data-parallel on MPI"
    )


def destroy_process_group(group: Any = None) -> None:
    """Raises AssertionError, as PyTorch does when no process group exists to destroy."""
    raise AssertionError("Process group cannot be None")


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    """Raises ValueError, as PyTorch does without a process group."""
    raise _no_group()


def all_reduce(tensor: Any, op: Any = None, group: Any = None, async_op: bool = False) -> None:
    """Raises ValueError, as PyTorch does without a process group."""
    raise _no_group()


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> None:
    """Raises ValueError, as PyTorch does without a process group."""
    raise _no_group()


__all__ = [
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_rank", "get_world_size",
    "init_process_group", "is_available", "is_initialized",
]  # fmt: skip
