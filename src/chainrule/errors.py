"""Exception classes for chainrule and small helpers that format values in messages.

Each error also inherits the builtin exception a user would catch, so ``except ValueError``
keeps working, and also the class PyTorch raises for the same mistake (RuntimeError from its
ops, IndexError for an index out of range), so a PyTorch program's ``except`` keeps working.
Messages start with the op name, then say what is wrong and how to fix it.
"""

from __future__ import annotations

import pickle


class ChainruleError(Exception):
    """Base class of every error chainrule raises on purpose."""


class ShapeError(ChainruleError, ValueError, RuntimeError):
    """Shapes of the operands do not fit the op (matmul, broadcasting, cat, reshape...).

    A ValueError in Python's terms and a RuntimeError in PyTorch's (``except RuntimeError``
    around a PyTorch program's shape mistakes keeps working)."""


class EmptyReductionError(ShapeError, IndexError):
    """A reduction that picks an element (max, argmax) asked to reduce a dimension of size 0.
    PyTorch raises IndexError ("Expected reduction dim 0 to have non-zero size"), or a
    RuntimeError without a dim, so this is both, and a ShapeError."""


class DomainError(ChainruleError, ValueError, RuntimeError):
    """An input lies outside the op's domain (log of 0, sqrt of a negative number...)."""


class DTypeError(ChainruleError, TypeError, RuntimeError):
    """An operand has a type or dtype the op cannot take."""


class DTypeNotImplementedError(DTypeError, NotImplementedError):
    """The op has no version for the dtype it would compute in: bitwise ops of floats, shifts
    of bools, rounding of bools. PyTorch's kernels raise NotImplementedError there ("bitwise_and
    not implemented for 'Float'"), so this is one too (and a DTypeError)."""


class OutOfRangeError(ChainruleError, IndexError, ValueError, RuntimeError):
    """An index, a dimension number or a class label lies outside its range (PyTorch raises
    IndexError, and RuntimeError for an index out of range in gather and scatter; a
    ValueError too, as chainrule's shape and domain errors are)."""


class GraphError(ChainruleError, RuntimeError):
    """The autograd graph cannot be used as asked (freed, modified in place, no gradient)."""


class CompileError(ChainruleError, RuntimeError):
    """`chainrule.compile` cannot record a function as asked: with ``fullgraph=True``, what
    would have been a graph break (a tensor's values read into Python, a `Function`
    subclass). A RuntimeError, as PyTorch's for the same case under ``torch.compile``."""


class ArgumentError(ChainruleError, TypeError):
    """A call's arguments cannot be taken as given: an argument PyTorch has that chainrule
    refuses on purpose (``out=``), or one argument given under two names (``dim`` and ``axis``).
    A TypeError, as Python's own for a bad keyword."""


class UnsupportedError(ChainruleError, RuntimeError):
    """A PyTorch feature chainrule does not do on purpose, reached from a program: exporting to
    ONNX, downloading from the Hub, CUDA devices, process groups. The message names the PyTorch
    call and what chainrule does instead, if anything. ``chainrule run`` reports it in one line."""


class NoCudaError(UnsupportedError, AssertionError):
    """A ``torch.cuda`` call that needs a CUDA device. A CPU-only PyTorch raises AssertionError
    ("Torch not compiled with CUDA enabled") there, so this is one too."""


class SerializationError(ChainruleError, ValueError, pickle.UnpicklingError):
    """A file cannot be read back (truncated, corrupted, of another kind, or a PyTorch file whose
    pickle needs a global outside the allow-list), or an object cannot be saved (it is not a
    tensor, an array, a plain value or a container of them). Also the UnpicklingError that
    PyTorch's ``torch.load(weights_only=True)`` raises for a refused global."""


def fmt_shape(shape: tuple[int, ...]) -> str:
    """Format a shape the way messages show it: ``(3, 4)``, ``(5,)``, ``()``."""
    return str(tuple(int(n) for n in shape))


def fmt_dtype(dtype: object) -> str:
    """Format a NumPy dtype or Python type by its short name: ``float32``, ``int``."""
    return getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)


def fmt_value(x: float) -> str:
    """Format a float compactly for messages: ``0.0``, ``-2.5``, ``1e+300``."""
    return repr(float(x))
