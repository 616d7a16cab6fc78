"""``torch.onnx``: importing it works, so a program that exports at the end runs its training;
the export itself raises `chainrule.errors.UnsupportedError` (chainrule writes no ONNX)."""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError


def export(model: Any, args: Any = (), f: Any = None, *rest, **kwargs) -> None:
    """Raises `UnsupportedError`: chainrule does not export models to ONNX."""
    raise UnsupportedError(
        "torch.onnx.export: chainrule does not export models to ONNX; save "
        "the state_dict with torch.save and export from PyTorch"
    )


def is_in_onnx_export() -> bool:
    """False: no export is ever under way."""
    return False


__all__ = ["export", "is_in_onnx_export"]
