"""The compiled rows: a chainrule step wrapped in ``chainrule.compile``, checked and explained;
and PyTorch's own ``torch.compile`` of the same step, where it runs.

The step is the eager chainrule row's, built on an engine that hands back Tensors (detached)
instead of arrays, because reading a tensor's values into NumPy inside the step would end
the record. The arrays the suite compares are taken after the compiled call returns. The
first two calls trace (`WARMUP`); the suite times them as the compile cost. Whatever
``compile`` warned about while tracing, and how many calls ran eagerly instead of replaying,
goes into the row's note, so a step that cannot be replayed is never passed off as compiled.

``torch.compile`` (inductor, which writes C++ and needs a compiler) compiles in its first call
(`TORCH_WARMUP`); where it cannot, the row is unavailable and its note says why.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..suite import Unavailable

#: The rows' name.
COMPILED = "chainrule compiled"

#: Calls that trace: the first records, the second records again and must agree.
WARMUP = 2

#: PyTorch's compiled rows' name.
TORCH_COMPILED = "pytorch compiled"

#: Calls in which ``torch.compile`` traces and compiles: the first (the second finds it done).
TORCH_WARMUP = 1


def as_arrays(result) -> list[np.ndarray]:
    """A compiled step's Tensors as the arrays the eager row returns: a Tensor gives its
    array, a list of Tensors one stacked array (W2's three gradients)."""
    arrays = []
    for item in result:
        if isinstance(item, (list, tuple)):
            arrays.append(np.stack([t.numpy() for t in item]))
        else:
            arrays.append(item.numpy())
    return arrays


class CompiledStep:
    """``step`` compiled; each call returns arrays. ``describe()`` says how it ran."""

    def __init__(self, step: Callable, convert: Callable = as_arrays) -> None:
        import chainrule

        self.compiled = chainrule.compile(step, name="step")
        self.convert = convert
        self.warnings: list[str] = []
        self._calls = 0

    def __call__(self):
        self._calls += 1
        if self._calls > WARMUP:
            return self.convert(self.compiled())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = self.compiled()
        for warning in caught:
            text = str(warning.message)
            if text.startswith("compile(") and text not in self.warnings:
                self.warnings.append(text)
        return self.convert(result)

    def describe(self) -> str:
        """Empty when every call after the warm-up replayed; else the counts and warnings."""
        stats = self.compiled.stats
        if stats["eager"] == 0 and not self.warnings:
            return ""
        counts = ", ".join(f"{key} {value}" for key, value in stats.items())
        return "; ".join([f"not replayed ({counts})", *self.warnings])


class TorchCompiledStep:
    """``step`` under ``torch.compile`` (its default backend, inductor); each call returns
    arrays. If the first call fails (no C++ compiler, a graph inductor cannot compile), it
    raises `Unavailable`: the row says torch.compile cannot run here, and the note why."""

    def __init__(self, step: Callable) -> None:
        import torch

        self.compiled = torch.compile(step)
        self._calls = 0

    def __call__(self):
        self._calls += 1
        if self._calls > TORCH_WARMUP:
            return [t.numpy() for t in self.compiled()]
        try:
            result = self.compiled()
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise Unavailable(
                "unavailable: torch.compile cannot run here", note=f"{type(exc).__name__}: {reason}"
            ) from exc
        return [t.numpy() for t in result]
