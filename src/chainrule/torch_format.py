"""Reading files that PyTorch wrote with ``torch.save``: the zip format (a pickle plus one raw
file per storage) and the legacy format before PyTorch 1.6, through an unpickler that resolves
only an allow-list of globals, each to chainrule's own stand-in, so nothing from a file runs.

The zip archive holds ``<name>/data.pkl``, the object pickled with each storage replaced by a
persistent id ``("storage", storage type, key, location, numel)``, ``<name>/data/<key>``, each
storage's raw bytes, and ``<name>/byteorder`` (``little`` or ``big``). A tensor in the pickle is
a call to ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
hooks)``: here the allow-list answers it with a NumPy view into the storage, so tensors that
shared a storage in PyTorch share memory here too. Everything else in the pickle must be a
plain container (dict, list, tuple, set, ``OrderedDict``), a number, a string or bytes, a dtype,
``torch.Size``, ``torch.device``, an ``argparse.Namespace`` or a NumPy array or scalar (of a
plain numeric dtype, rebuilt here from its bytes); any other global is refused with
an error that names it, before anything is imported or called. Opcodes PyTorch never writes
are refused before unpickling starts, and BUILD opcodes that set a tensor's internals after.
"""

from __future__ import annotations

import argparse
import collections
import io
import math
import pickle
import pickletools
import struct
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from ._tensor import Tensor
from .dtypes import Size, bfloat16, device
from .errors import SerializationError
from .nn.parameter import Parameter

#: PyTorch's dtypes by the names they are pickled under (``torch.float32``...): NumPy's, except
#: bfloat16, which NumPy cannot hold: its storages are widened to float32 (exactly) on load.
_DTYPES = {
    **dict.fromkeys(("float32", "float"), np.dtype("float32")),
    **dict.fromkeys(("float64", "double"), np.dtype("float64")),
    **dict.fromkeys(("float16", "half"), np.dtype("float16")),
    **dict.fromkeys(("int64", "long"), np.dtype("int64")),
    **dict.fromkeys(("int32", "int"), np.dtype("int32")),
    **dict.fromkeys(("int16", "short"), np.dtype("int16")),
    "int8": np.dtype("int8"), "uint8": np.dtype("uint8"), "bool": np.dtype("bool"),
    "uint16": np.dtype("uint16"), "uint32": np.dtype("uint32"), "uint64": np.dtype("uint64"),
    **dict.fromkeys(("complex64", "cfloat"), np.dtype("complex64")),
    **dict.fromkeys(("complex128", "cdouble"), np.dtype("complex128")),
    "bfloat16": bfloat16,
}  # fmt: skip

#: The legacy storage classes (``torch.FloatStorage``...) by name, and the dtype of each.
_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8",
}  # fmt: skip

#: How a legacy PyTorch file starts: its magic number pickled (LONG1, 10 bytes), after the
#: protocol (and with protocol 4 or 5, a frame) opcode.
LEGACY_MAGIC = b"\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19."


def is_legacy(data: bytes) -> bool:
    """Whether ``data`` starts as a PyTorch file of the format before 1.6 does."""
    return data[:1] == b"\x80" and LEGACY_MAGIC in data[:32]


class _StorageType:
    """What the allow-list gives for ``torch.FloatStorage`` and the like: a dtype's name."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype


class _Storage:
    """One storage's elements as a 1-D NumPy array (bfloat16 widened to float32); tensors are
    views into it. Allocated from its element count, filled from the file's bytes."""

    def __init__(self, dtype: str, numel: int, limit: int) -> None:
        self.dtype = dtype
        self.numel = numel
        self.raw_dtype = np.dtype("<u2") if dtype == "bfloat16" else _DTYPES[dtype]
        if numel * self.raw_dtype.itemsize > limit:  # a claim the file is too short to back
            raise SerializationError(
                f"a {dtype} storage of {numel} elements needs more bytes than the file holds"
            )
        self.array = np.zeros(numel, np.float32 if dtype == "bfloat16" else self.raw_dtype)

    def fill(self, data: bytes | memoryview, big_endian: bool) -> None:
        """Copy the storage's bytes in, in the file's byte order."""
        raw_dtype = self.raw_dtype.newbyteorder(">" if big_endian else "<")
        if len(data) != self.numel * raw_dtype.itemsize:
            raise SerializationError(
                f"a {self.dtype} storage of {self.numel} elements has {len(data)} bytes, not "
                f"{self.numel * raw_dtype.itemsize}"
            )
        values = np.frombuffer(data, raw_dtype)
        if self.dtype == "bfloat16":  # a bfloat16 is the top half of a float32's bits
            self.array[...] = (values.astype(np.uint32) << 16).view(np.float32)
        elif self.dtype == "bool":
            if values.view(np.uint8).max(initial=0) > 1:
                raise SerializationError("a bool storage holds bytes other than 0 and 1")
            self.array[...] = values
        else:
            self.array[...] = values


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not (isinstance(value, (tuple, list)) and all(type(n) is int and n >= 0 for n in value)):
        raise SerializationError(f"a tensor's {what} is {value!r}, not a tuple of sizes")
    return tuple(value)


def _view(storage: Any, offset: Any, size: Any, stride: Any, dtype: Any = None) -> np.ndarray:
    """The NumPy view that a tensor of ``storage`` with this geometry is, after bounds checks."""
    if not isinstance(storage, _Storage):
        raise SerializationError(
            f"a tensor is rebuilt from {type(storage).__name__}, not a storage"
        )
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if type(offset) is not int or offset < 0 or len(size) != len(stride) or len(size) > 64:
        raise SerializationError(
            f"a tensor has offset {offset!r}, size {size} and stride {stride}, which do not fit"
        )
    array = storage.array
    if dtype is not None and dtype is not _DTYPES.get(storage.dtype):  # _rebuild_tensor_v3
        if storage.dtype != "uint8" or not isinstance(dtype, np.dtype):
            raise SerializationError(f"a tensor of dtype {dtype} is rebuilt from a typed storage")
        usable = len(array) - len(array) % dtype.itemsize
        array = array[:usable].view(dtype.newbyteorder("<")).astype(dtype, copy=False)
    if array.dtype.kind == "c":
        raise SerializationError(
            f"a tensor has dtype {array.dtype}; chainrule has no complex tensors"
        )
    if 0 in size:
        return np.zeros(size, array.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= len(array):
        raise SerializationError(
            f"a tensor of size {size}, stride {stride} and offset {offset} reaches element "
            f"{last} of a storage of {len(array)}"
        )
    steps = tuple(s * array.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(array[offset:], size, steps)


def _empty_hooks(hooks: Any) -> None:
    if hooks is not None and not (isinstance(hooks, dict) and not hooks):
        raise SerializationError("a tensor was saved with backward hooks; they are not loaded")


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks, metadata=None):
    _empty_hooks(hooks)
    if metadata:  # PyTorch's conjugate and negative bits
        raise SerializationError(f"a tensor carries metadata {metadata!r}, not loaded")
    tensor = Tensor._make(_view(storage, offset, size, stride))
    return tensor.requires_grad_(True) if requires_grad is True else tensor


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
    _empty_hooks(hooks)
    if metadata:
        raise SerializationError(f"a tensor carries metadata {metadata!r}, not loaded")
    tensor = Tensor._make(_view(storage, offset, size, stride, dtype))
    return tensor.requires_grad_(True) if requires_grad is True else tensor


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    _empty_hooks(hooks)
    if not isinstance(data, Tensor) or state:
        raise SerializationError("a Parameter is rebuilt from something other than a tensor")
    return Parameter(data, requires_grad=requires_grad is True)


class _TensorClass:
    """What the allow-list gives for ``torch.Tensor`` and ``torch.nn.Parameter`` (the classes
    that ``_rebuild_from_type_v2`` names): a marker, never called."""


def _rebuild_from_type(fn, cls, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a plain tensor or Parameter, rebuilt by ``fn``."""
    if not (isinstance(cls, _TensorClass) and isinstance(args, tuple)) or state:
        raise SerializationError("a tensor subclass or a tensor with attributes is not loaded")
    if fn not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter):
        raise SerializationError("a tensor is rebuilt by a function that is not a rebuild")
    return fn(*args)


def _size(sizes=()) -> Size:
    return Size(_ints(sizes, "torch.Size"))


def _device(*args) -> device | str:
    """A CPU device as chainrule's; another device (a GPU one) as its string."""
    if not all(isinstance(a, (str, int)) for a in args) or len(args) > 2:
        raise SerializationError(f"torch.device{args!r} cannot be read")
    text = ":".join(map(str, args))
    return device(text) if text.partition(":")[0] == "cpu" else text


def _encode(text, encoding="latin1") -> bytes:
    """``_codecs.encode``, which protocol 2 uses to pickle bytes; only as that."""
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise SerializationError("_codecs.encode is allowed only to make bytes from latin-1")
    return text.encode("latin-1")


def _container(kind: type) -> Callable:
    def make(items=()):
        if not isinstance(items, (list, tuple, set, frozenset, dict)):
            raise SerializationError(f"{kind.__name__} is built from a {type(items).__name__}")
        return kind(items)

    return make


class _NumpyDtype:
    """``numpy.dtype(code, align, copy)`` as NumPy pickles it, then filled by BUILD with its
    byte order: only plain numeric and bool dtypes (no objects, no fields)."""

    def __init__(self, code: Any = None, align: Any = False, copy: Any = True) -> None:
        if not (isinstance(code, str) and code.lstrip("<>=|") in _NUMPY_CODES):
            raise SerializationError(f"a NumPy dtype {code!r} is not a plain number or bool")
        self.dtype = np.dtype(code.lstrip("<>=|"))

    def __setstate__(self, state: Any) -> None:
        if not (isinstance(state, tuple) and len(state) >= 2 and state[1] in "<>=|"):
            raise SerializationError(f"a NumPy dtype has the state {state!r}")
        if len(state) > 2 and any(x is not None for x in state[2:5]):  # subarray, names, fields
            raise SerializationError("a NumPy dtype with fields or a subarray is not loaded")
        if state[1] in "<>":
            self.dtype = self.dtype.newbyteorder(state[1])


#: NumPy's type codes for the dtypes above (``f8``, ``i4``, ``b1``, ``?``...).
_NUMPY_CODES = {
    *(f"{kind}{size}" for kind in "iu" for size in (1, 2, 4, 8)),
    "f2", "f4", "f8", "c8", "c16", "b1", "?",
}  # fmt: skip


class _NumpyArray:
    """``numpy.core.multiarray._reconstruct(ndarray, (0,), b"b")``, then filled by BUILD with
    (version, shape, dtype, is_fortran, bytes); replaced by the array it built at the end."""

    array: np.ndarray | None = None

    def __init__(self, cls: Any = None, shape: Any = (0,), code: Any = b"b") -> None:
        if cls is not _NUMPY_NDARRAY:
            raise SerializationError("numpy's _reconstruct is called for something not an array")

    def __setstate__(self, state: Any) -> None:
        if not (isinstance(state, tuple) and len(state) == 5):
            raise SerializationError("a NumPy array's state is not (version, shape, dtype, ...)")
        _, shape, dtype, fortran, raw = state
        shape = _ints(shape, "NumPy shape")
        if not (isinstance(dtype, _NumpyDtype) and isinstance(raw, bytes)):
            raise SerializationError("a NumPy array holds objects, not numbers")
        if len(raw) != math.prod(shape) * dtype.dtype.itemsize:
            raise SerializationError(f"a NumPy array of shape {shape} has {len(raw)} bytes")
        flat = np.frombuffer(raw, dtype.dtype).astype(dtype.dtype.newbyteorder("="))
        self.array = flat.reshape(shape, order="F" if fortran is True else "C")


def _numpy_scalar(dtype: Any, raw: Any = b"") -> np.generic:
    """``numpy.core.multiarray.scalar``: a NumPy number from its dtype and bytes."""
    if not (isinstance(dtype, _NumpyDtype) and isinstance(raw, bytes)):
        raise SerializationError("a NumPy scalar is built from something not a dtype and bytes")
    if len(raw) != dtype.dtype.itemsize:
        raise SerializationError(f"a NumPy {dtype.dtype} scalar has {len(raw)} bytes")
    return np.frombuffer(raw, dtype.dtype)[0].astype(dtype.dtype.newbyteorder("="))


#: What ``numpy.ndarray`` resolves to: a marker that only `_NumpyArray` accepts.
_NUMPY_NDARRAY = object()

_NUMPY_GLOBALS = {
    (f"numpy.{core}.multiarray", name): stand_in
    for core in ("core", "_core")
    for name, stand_in in (("_reconstruct", _NumpyArray), ("scalar", _numpy_scalar))
}


#: (module, name) -> the stand-in that the unpickler is given for it. Nothing else resolves.
_ALLOWED: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): collections.OrderedDict,  # made empty, then filled
    ("builtins", "set"): _container(set),
    ("builtins", "frozenset"): _container(frozenset),
    ("builtins", "bytearray"): lambda data=b"": bytearray(_encode(data) if data else b""),
    ("builtins", "complex"): lambda re=0.0, im=0.0: complex(float(re), float(im)),
    ("_codecs", "encode"): _encode,
    ("builtins", "bytes"): lambda *args: _encode(*args) if args else b"",  # b"" in protocol 2
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type,
    ("torch", "Tensor"): _TensorClass(),
    ("torch._tensor", "Tensor"): _TensorClass(),
    ("torch.nn.parameter", "Parameter"): _TensorClass(),
    ("torch", "Size"): _size,
    ("torch", "device"): _device,
    # A Namespace is made with its class's __new__ and filled attribute by attribute (BUILD);
    # its __init__ is never called.
    ("argparse", "Namespace"): argparse.Namespace,
    # NumPy arrays and scalars, as NumPy pickles them, rebuilt here from their bytes.
    **_NUMPY_GLOBALS,
    ("numpy", "ndarray"): _NUMPY_NDARRAY,
    ("numpy", "dtype"): _NumpyDtype,
    **{("torch", name): _DTYPES[name] for name in _DTYPES},
    **{("torch", name): _StorageType(dtype) for name, dtype in _STORAGE_DTYPES.items()},
    ("torch.storage", "UntypedStorage"): _StorageType("uint8"),
}


class _Unpickler(pickle.Unpickler):
    """pickle's own unpickler with every global looked up in `_ALLOWED` and persistent ids
    (storages) answered by ``storages``."""

    def __init__(self, stream: io.BytesIO, storages: Callable, **options) -> None:
        super().__init__(stream, **options)
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        if module == "__builtin__":  # protocol 2 names builtins by their Python 2 module
            module = "builtins"
        found = _ALLOWED.get((module, name))
        if found is None:
            raise SerializationError(
                f"the pickle needs the global {module}.{name}, which is not on chainrule's "
                "allow-list (tensors, Parameters, state dicts, plain containers, numbers, "
                "strings, dtypes, torch.Size, argparse.Namespace, NumPy arrays); nothing from "
                "the file was imported or run"
            )
        return found

    def persistent_load(self, pid: Any) -> Any:
        return self._storages(pid)


def _tampered(tensor: Tensor) -> bool:
    """Whether a BUILD opcode set a tensor's internals: each slot must hold what a tensor made
    from the same array holds (the same type; the same value for numbers and None)."""
    if type(tensor._array) is not np.ndarray:
        return True
    fresh = Tensor._make(tensor._array)
    if type(tensor) is Parameter:
        fresh = Parameter(fresh, requires_grad=tensor._requires_grad is True)
    elif tensor._requires_grad is True and tensor._array.dtype.kind == "f":
        fresh.requires_grad_(True)
    slots = {name for cls in type(tensor).__mro__ for name in getattr(cls, "__slots__", ())}
    for name in slots - {"_array", "__weakref__"}:
        ours, theirs = getattr(fresh, name, None), getattr(tensor, name, None)
        if type(ours) is not type(theirs) or (
            isinstance(ours, (bool, int, type(None))) and ours != theirs
        ):
            return True
    return False


def _check_hashed(items: Any, memo: dict[int, Any]) -> None:
    """Check a set's items or a dict's keys, which cannot be replaced: none may be an array."""
    for item in list(items):
        if _finish(item, memo) is not item:
            raise SerializationError("a set or a dict key holds a NumPy array")


def _finish(obj: Any, memo: dict[int, Any]) -> Any:
    """What came out, checked and with NumPy arrays in place of their stand-ins: no other
    stand-in may be left (a storage, a marker), and no BUILD opcode may have set the internals
    of a tensor or the attributes of an OrderedDict (which would shadow its methods). Only an
    ``argparse.Namespace`` is built attribute by attribute. One object stays one object."""
    if id(obj) in memo:
        return memo[id(obj)]
    memo[id(obj)] = obj  # a container that holds itself stays as it is
    if isinstance(obj, _NumpyArray):
        if obj.array is None:
            raise SerializationError("a NumPy array is never given its contents")
        memo[id(obj)] = obj.array
    elif isinstance(obj, Tensor):
        if _tampered(obj):
            raise SerializationError("the pickle sets the internals of a tensor (BUILD)")
    elif isinstance(obj, dict):
        # A module's state dict carries its modules' versions as ``_metadata`` (a dict);
        # any other attribute of an OrderedDict (a dict has none) could shadow a method.
        attributes = getattr(obj, "__dict__", {})
        if set(attributes) - {"_metadata"} or not isinstance(attributes.get("_metadata", {}), dict):
            raise SerializationError("the pickle sets attributes of a dict (BUILD)")
        for key, value in obj.items():
            obj[key] = _finish(value, memo)
        _check_hashed(obj, memo)
    elif isinstance(obj, list):
        obj[:] = [_finish(item, memo) for item in obj]
    elif isinstance(obj, tuple) and type(obj) in (tuple, Size):
        items = [_finish(item, memo) for item in obj]
        if any(new is not old for new, old in zip(items, obj)):
            memo[id(obj)] = tuple(items)
    elif isinstance(obj, (set, frozenset)):
        _check_hashed(obj, memo)
    elif isinstance(obj, argparse.Namespace):
        for key, value in list(vars(obj).items()):
            vars(obj)[key] = _finish(value, memo)
    elif isinstance(obj, (_Storage, _StorageType, _TensorClass, _NumpyDtype)) or callable(obj):
        raise SerializationError(f"the pickle returns a bare {type(obj).__name__}")
    return memo[id(obj)]


#: Opcodes that PyTorch's pickles never hold and that are refused before unpickling starts:
#: out-of-band buffers and bytearrays (protocol 5), the extension registry, and the protocol 0
#: and 1 ways of instantiating a class.
_REFUSED_OPCODES = {
    "NEXT_BUFFER", "READONLY_BUFFER", "BYTEARRAY8", "EXT1", "EXT2", "EXT4", "INST", "OBJ",
}  # fmt: skip


def _scan(stream: io.BytesIO) -> None:
    """Read one pickle's opcodes without running any (pickletools), refusing the opcodes
    above and malformed ones (a length past the end), then rewind."""
    start = stream.tell()
    try:
        for opcode, _, _ in pickletools.genops(stream):
            if opcode.name in _REFUSED_OPCODES:
                raise SerializationError(f"the pickle uses the opcode {opcode.name}, not loaded")
    except SerializationError:
        raise
    except Exception as exc:  # genops' ValueError for a malformed opcode or argument
        raise SerializationError(f"the pickle is malformed ({exc})") from None
    stream.seek(start)


def _unpickle(stream: io.BytesIO, storages: Callable, options: dict) -> Any:
    """Scan, then run the restricted unpickler; any failure becomes a SerializationError."""
    _scan(stream)
    try:
        return _finish(_Unpickler(stream, storages, **options).load(), {})
    except SerializationError:
        raise
    except CallerError:
        raise
    except RecursionError:
        raise SerializationError("the pickle is nested too deeply") from None
    except MemoryError:
        raise SerializationError("the pickle asks for more memory than there is") from None
    except Exception as exc:  # malformed pickles raise all sorts: all mean a damaged file
        raise SerializationError(f"the pickle is malformed ({type(exc).__name__}: {exc})") from None


class CallerError(Exception):
    """Carries an exception of the caller's ``map_location`` function (its ``__cause__``) out
    through the unpickler, which would otherwise report it as a malformed pickle; `load`
    raises the exception itself."""


def apply_map_location(array: np.ndarray, location: str, map_location: Callable | None) -> None:
    """Call a ``map_location`` function as PyTorch does, ``fn(storage, location)``, with the
    storage as a Tensor; a Tensor it returns is copied in (in place: tensors may already view
    the storage), None keeps the storage."""
    if map_location is None:
        return
    result = map_location(Tensor._make(array), location)
    if isinstance(result, Tensor):
        if result._array is not array:
            if result._array.shape != array.shape:
                raise SerializationError("map_location returned a tensor of another shape")
            array[...] = result._array
    elif result is not None:
        raise SerializationError(
            f"map_location returned a {type(result).__name__}; chainrule expects None or a Tensor"
        )


def torch_archive_prefix(archive: zipfile.ZipFile) -> str | None:
    """The folder holding ``data.pkl`` in a PyTorch zip (``archive/`` or the file's stem)."""
    for name in archive.namelist():
        folder, _, leaf = name.rpartition("/")
        if leaf == "data.pkl" and folder and "/" not in folder:
            return folder + "/"
    return None


def load_zip(
    archive: zipfile.ZipFile, size: int, map_location: Callable | None, options: dict
) -> Any:
    """The object in a PyTorch zip file (``torch.save``'s format since 1.6)."""
    prefix = torch_archive_prefix(archive)
    assert prefix is not None
    names = set(archive.namelist())
    order = b"little"
    if prefix + "byteorder" in names:
        order = archive.read(prefix + "byteorder").strip()
        if order not in (b"little", b"big"):
            raise SerializationError(f"the byteorder record says {order[:20]!r}")
    storages: dict[str, _Storage] = {}

    def storage(pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise SerializationError(f"the pickle has a persistent id {pid!r}, not a storage")
        _, kind, key, location, numel = pid
        if not (isinstance(kind, _StorageType) and isinstance(key, str) and type(numel) is int):
            raise SerializationError(f"the storage id {pid!r} is malformed")
        if key not in storages:
            entry = f"{prefix}data/{key}"
            if entry not in names:
                raise SerializationError(f"the archive lacks the storage {entry!r}")
            made = _Storage(kind.dtype, numel, archive.getinfo(entry).file_size)
            made.fill(archive.read(entry), order == b"big")
            try:
                apply_map_location(made.array, str(location), map_location)
            except Exception as exc:  # the caller's code: passed on as it is, not as damage
                raise CallerError() from exc
            storages[key] = made
        if storages[key].dtype != kind.dtype:
            raise SerializationError(f"the storage {key!r} is read as two dtypes")
        return storages[key]

    return _unpickle(io.BytesIO(archive.read(prefix + "data.pkl")), storage, options)


def load_legacy(data: bytes, map_location: Callable | None, options: dict) -> Any:
    """The object in a PyTorch file of the format before 1.6 (``_use_new_zipfile_serialization
    =False``): pickles of the magic number, the protocol version, system facts and the object,
    then the storage keys, then each storage as an 8-byte count and its bytes."""
    stream = io.BytesIO(data)

    def refuse(pid: Any) -> None:
        raise SerializationError(f"a header pickle has a persistent id {pid!r}")

    for _ in range(3):  # the magic number, the protocol version (1001), system facts
        info = _unpickle(stream, refuse, options)
    big_endian = isinstance(info, dict) and info.get("little_endian") is False
    storages: dict[str, tuple[_Storage, Any]] = {}

    def storage(pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise SerializationError(f"the pickle has a persistent id {pid!r}, not a storage")
        _, kind, key, location, numel, view = pid
        if not (isinstance(kind, _StorageType) and isinstance(key, str) and type(numel) is int):
            raise SerializationError(f"the storage id {pid!r} is malformed")
        if view is not None:
            raise SerializationError("storage views of the legacy format are not read")
        if key not in storages:
            # Every storage's bytes follow in the file, so together they fit in it: a file
            # cannot make this allocate more than its own size.
            unclaimed = len(data) - sum(made.array.nbytes for made, _ in storages.values())
            storages[key] = (_Storage(kind.dtype, numel, unclaimed), location)
        return storages[key][0]

    result = _unpickle(stream, storage, options)
    keys = _unpickle(stream, refuse, options)
    if not (isinstance(keys, list) and sorted(map(str, keys)) == sorted(storages)):
        raise SerializationError("the list of storage keys does not match the pickle's")
    for key in keys:
        made, location = storages[str(key)]
        header = stream.read(8)
        if len(header) != 8:
            raise SerializationError(f"the file ends before storage {key!r}")
        (count,) = struct.unpack("<q" if not big_endian else ">q", header)
        nbytes = count * made.raw_dtype.itemsize
        if count != made.numel:
            raise SerializationError(f"storage {key!r} holds {count} elements, not {made.numel}")
        made.fill(stream.read(nbytes), big_endian)
        apply_map_location(made.array, str(location), map_location)
    if stream.read(1):
        raise SerializationError("bytes follow the last storage")
    return result
