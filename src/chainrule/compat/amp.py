"""``torch.amp`` (and ``torch.cuda.amp``) for a program that can switch mixed precision on:
`autocast` computes as written (chainrule has no automatic casting, as PyTorch does for a CUDA
autocast on a machine without CUDA) and `GradScaler` is disabled, passing losses and steps
through unchanged, as PyTorch's is without CUDA."""

from __future__ import annotations

import contextlib
from typing import Any


class autocast(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's name)
    """A context manager and decorator that leaves dtypes as the code writes them: chainrule
    does not cast to lower precision for you."""

    def __init__(
        self,
        device_type: str = "cuda",
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class GradScaler:
    """A loss scaler that is always disabled: `scale` returns its argument, `step` calls the
    optimizer's ``step``, `update` and `unscale_` do nothing.

    >>> GradScaler().scale(2.0), GradScaler().is_enabled()
    (2.0, False)
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self.device = device

    def is_enabled(self) -> bool:
        """False: nothing is scaled."""
        return False

    def scale(self, outputs: Any) -> Any:
        """``outputs`` unchanged."""
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        """Nothing to unscale."""

    def step(self, optimizer: Any, *args, **kwargs) -> Any:
        """``optimizer.step(*args, **kwargs)``."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Nothing to update."""

    def get_scale(self) -> float:
        """1.0, as a disabled PyTorch scaler reports."""
        return 1.0

    def state_dict(self) -> dict:
        """An empty dict, as a disabled PyTorch scaler's."""
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        """Nothing to load."""
