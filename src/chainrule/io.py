"""`save` and `load`: chainrule's own file format, and reading what PyTorch's ``torch.save``
wrote. Nothing is ever unpickled with a free hand, so loading a file never runs code from it.
Needs the ``safetensors`` package (``chainrule[io]``).

chainrule's format is a safetensors file: every tensor and NumPy array in the saved object is
one safetensors entry, named by its dotted path (``model.0.weight``), as raw little-endian bytes.
The object itself is JSON in the file's metadata, key ``chainrule.tree``: a tree whose leaves are
JSON's null, true/false, numbers (``Infinity`` and ``NaN`` too) and strings, and whose other
nodes are one-key objects (a tensor node may add ``requires_grad``):

- ``{"dict": [[key, node], ...]}``, ``{"odict": [...]}`` (an ``OrderedDict``): pairs, so keys
  keep their types (str, int, float, bool, None; an optimizer's state is keyed by int);
- ``{"namespace": [[name, node], ...]}`` (an ``argparse.Namespace``, a program's flags);
- ``{"list": [node, ...]}``, ``{"tuple": [...]}``; ``{"complex": [real, imag]}``;
- ``{"tensor": name}`` (a Tensor; ``"requires_grad": true`` if it had it), ``{"parameter":
  name, "requires_grad": bool}`` (an ``nn.Parameter``), ``{"ndarray": name}`` (a NumPy array,
  loaded back as one). One object saved twice is one entry, named twice in the tree, and comes
  back as one object.

Key ``chainrule.checksums`` holds CRC-32s of the tree's text and of every tensor's name, dtype,
shape and bytes (JSON). PyTorch's files (a zip of a pickle and raw storages, or the format
before 1.6) are read by `chainrule.torch_format` through an allow-listed unpickler.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import math
import os
import pickle
import uuid
import zipfile
import zlib
from collections.abc import Callable, Mapping
from typing import IO, Any

import numpy as np

from . import torch_format
from ._tensor import Tensor
from .dtypes import device
from .errors import ArgumentError, DTypeError, SerializationError
from .nn.parameter import Parameter

#: Metadata keys: the nested structure (JSON), and CRC-32 checksums (JSON) of that structure's
#: text and of every tensor's name, dtype, shape and bytes.
TREE_KEY = "chainrule.tree"
CHECKSUMS_KEY = "chainrule.checksums"
#: Written before CHECKSUMS_KEY: a CRC-32 of every tensor's bytes alone. `load` still checks it.
CRC_KEY = "chainrule.crc32"

_SCALARS = (type(None), bool, int, float, str)

#: The safetensors dtypes chainrule saves and loads, as little-endian NumPy dtypes.
_DTYPES = {
    tag: np.dtype(code)
    for tag, code in [
        ("F64", "<f8"), ("F32", "<f4"), ("F16", "<f2"), ("I64", "<i8"), ("I32", "<i4"),
        ("I16", "<i2"), ("I8", "i1"), ("U64", "<u8"), ("U32", "<u4"), ("U16", "<u2"),
        ("U8", "u1"), ("BOOL", "?"),
    ]
}  # fmt: skip
_TAGS = {dtype.str: tag for tag, dtype in _DTYPES.items()}


def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "chainrule.save and chainrule.load need the safetensors package: "
            "pip install chainrule[io]"
        ) from None
    return safetensors.numpy


def _shown(value: Any) -> str:
    """``repr(value)`` cut to a length that fits in a message: these values come from the file."""
    try:
        text = repr(value)
    except RecursionError:
        return "(a value nested too deeply to show)"
    return text if len(text) <= 60 else f"{text[:50]}...{text[-7:]}"


def _checksum(name: str, array: np.ndarray) -> int:
    """CRC-32 of a tensor's name, safetensors dtype and shape (as JSON), then its bytes: the same
    bytes reinterpreted (F32 read as I32), reshaped or renamed no longer match."""
    label = json.dumps([name, _TAGS[array.dtype.str], list(array.shape)]).encode()
    return zlib.crc32(memoryview(np.ascontiguousarray(array)), zlib.crc32(label))


def _encode(value: Any, name: str, arrays: dict[str, np.ndarray], seen: dict[int, Any]) -> Any:
    """A JSON tree for ``value`` whose tensors and arrays are replaced by their names in
    ``arrays``; ``seen`` maps an array or tensor already written (by id) to its node.

    Containers are tagged ({"dict": pairs}, {"list": [...]}, {"tuple": [...]}) so that keys
    keep their types (an optimizer's state is keyed by int) and no user dict is misread.
    """
    if isinstance(value, (Tensor, np.ndarray)):
        if id(value) in seen:
            return seen[id(value)]
        array = value._array if isinstance(value, Tensor) else value
        little = array.dtype.newbyteorder("<")
        if array.dtype.kind not in "biuf" or little.str not in _TAGS:
            raise DTypeError(
                f"save: {name!r} holds {array.dtype} data; only bool, (u)int8-64 and "
                "float16-64 tensors are saved"
            )
        if name in arrays:
            raise SerializationError(
                f"save: two entries both flatten to the tensor name {name!r}; rename one"
            )
        if name == "__metadata__":
            raise SerializationError(
                "save: the tensor name '__metadata__' is reserved by safetensors; rename it"
            )
        # C order and little-endian, as the file stores it, so that the checksum matches the
        # bytes read back (np.ascontiguousarray would also turn a 0-d array into shape (1,)).
        arrays[name] = np.asarray(array, dtype=little, order="C")
        if isinstance(value, Parameter):
            node = {"parameter": name, "requires_grad": value.requires_grad}
        elif isinstance(value, Tensor):
            node = (
                {"tensor": name, "requires_grad": True} if value.requires_grad else {"tensor": name}
            )
        else:
            node = {"ndarray": name}
        seen[id(value)] = node
        return node
    if isinstance(value, np.generic):
        return _encode(value.item(), name, arrays, seen)  # np.datetime64 etc.: the error below
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    prefix = f"{name}." if name else ""
    if isinstance(value, argparse.Namespace):  # a program's parsed flags, often saved
        pairs = [
            [key, _encode(x, f"{prefix}{key}", arrays, seen)] for key, x in vars(value).items()
        ]
        return {"namespace": pairs}
    if isinstance(value, Mapping):
        pairs = []
        for key, item in value.items():
            if not isinstance(key, _SCALARS):
                raise SerializationError(
                    f"save: key {key!r} in {name or 'the top level'!r} is a "
                    f"{type(key).__name__}; keys must be str, int, float, bool or None"
                )
            pairs.append([key, _encode(item, f"{prefix}{key}", arrays, seen)])
        return {"odict" if isinstance(value, collections.OrderedDict) else "dict": pairs}
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [_encode(x, f"{prefix}{i}", arrays, seen) for i, x in enumerate(value)]}
    raise SerializationError(
        f"save: {name or 'the object'!r} has type {type(value).__name__}; only tensors, arrays, "
        "numbers, strings, None and dicts, lists or tuples of them can be saved (nothing is "
        "pickled: save an object's state_dict() instead)"
    )


def _is_pair(pair: Any) -> bool:
    """Whether ``pair`` is a [key, value] entry of an encoded dict."""
    return isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], _SCALARS)


#: The tags of nodes that name an array, and whether each may carry "requires_grad".
_ARRAY_TAGS = {"tensor": False, "parameter": True, "ndarray": False}


def _leaf(node: dict, arrays: dict[str, np.ndarray], made: dict, where: str) -> Any:
    """The Tensor, Parameter or NumPy array a node names; one object per distinct node."""
    tag = next(iter(node))
    name, requires_grad = node[tag], node.get("requires_grad", tag == "parameter")
    if not (
        isinstance(name, str)
        and type(requires_grad) is bool
        and set(node) <= {tag, "requires_grad"}
        and (tag != "ndarray" or len(node) == 1)
    ):
        raise SerializationError(f"load: {where}: the metadata's structure is malformed")
    if name not in arrays:
        raise SerializationError(f"load: {where}: the metadata names a missing {_shown(name)}")
    key = (tag, name, requires_grad)
    if key not in made:
        array = arrays[name]
        if requires_grad and array.dtype.kind != "f":  # what Tensor would refuse
            raise SerializationError(
                f"load: {where}: {_shown(name)} holds {array.dtype} data yet requires grad"
            )
        if tag == "ndarray":
            made[key] = array
        elif tag == "parameter":
            made[key] = Parameter(Tensor._make(array), requires_grad=requires_grad)
        else:
            made[key] = Tensor._make(array).requires_grad_(requires_grad)
    return made[key]


def _decode(node: Any, arrays: dict[str, np.ndarray], made: dict, where: str) -> Any:
    if isinstance(node, _SCALARS):
        return node
    if isinstance(node, dict) and node:
        tag = next(iter(node))
        if tag in _ARRAY_TAGS:
            return _leaf(node, arrays, made, where)
        body = node[tag]
        pairs = isinstance(body, list) and all(map(_is_pair, body))
        if len(node) != 1 or not isinstance(body, list):
            pass
        elif tag in ("dict", "odict") and pairs:
            kind = dict if tag == "dict" else collections.OrderedDict
            return kind((key, _decode(item, arrays, made, where)) for key, item in body)
        elif tag == "namespace" and pairs and all(isinstance(key, str) for key, _ in body):
            namespace = argparse.Namespace()  # filled as unpickling does: no setattr runs
            vars(namespace).update((key, _decode(x, arrays, made, where)) for key, x in body)
            return namespace
        elif tag in ("list", "tuple"):
            items = [_decode(item, arrays, made, where) for item in body]
            return items if tag == "list" else tuple(items)
        elif tag == "complex" and len(body) == 2 and all(type(x) in (int, float) for x in body):
            return complex(*body)
    raise SerializationError(f"load: {where}: the metadata's structure is malformed")


def _where(f: Any) -> str:
    """How messages name a file: its path, or the file object's name, or its type."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"a {type(f).__name__}"


def save(
    obj: Any,
    f: str | os.PathLike | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Write ``obj`` to ``f``, a path or a binary file object (``open(path, "wb")``,
    ``io.BytesIO()``), in chainrule's format (see this module's docstring): a safetensors file
    whose tensors are named by their dotted paths (``model.0.weight``).

    ``obj`` is what PyTorch programs pass to ``torch.save``: a state dict, an optimizer's
    ``state_dict()``, a checkpoint such as ``{"epoch": 3, "model": model.state_dict(),
    "optimizer": optimizer.state_dict(), "loss": 0.12, "args": {...}}``, or any nesting of
    dicts (also ``OrderedDict``), lists and tuples of tensors, Parameters, NumPy arrays,
    numbers (bool, int, float, complex), strings, None and ``argparse.Namespace`` (a program's
    flags). `load` gives back the same types. Anything else (a function, a Module, a set)
    raises `SerializationError` naming where it is (``'config.fn'``) and its type, and writes
    nothing. PyTorch's remaining arguments are accepted and have no effect: nothing is pickled.

    A path is written atomically (beside the target, then renamed); a file object is written
    at its position, as ``torch.save`` does.

    >>> import chainrule, io
    >>> buffer = io.BytesIO()
    >>> save({"model": {"w": chainrule.ones(2)}, "epoch": 3}, buffer)
    >>> _ = buffer.seek(0)
    >>> load(buffer)
    {'model': {'w': tensor([1., 1.])}, 'epoch': 3}
    """
    arrays: dict[str, np.ndarray] = {}
    tree = json.dumps(_encode(obj, "", arrays, {}))
    checksums = {
        "tree": zlib.crc32(tree.encode()),
        "tensors": {name: _checksum(name, array) for name, array in arrays.items()},
    }
    metadata = {TREE_KEY: tree, CHECKSUMS_KEY: json.dumps(checksums)}
    data = _safetensors_numpy().save(arrays, metadata=metadata)
    if not isinstance(f, (str, os.PathLike)):
        write = getattr(f, "write", None)
        if write is None:
            raise ArgumentError(
                f"save: f must be a path or a binary file object, not {type(f).__name__}"
            )
        try:
            write(data)
        except TypeError:
            raise ArgumentError(
                f"save: {_where(f)} is open in text mode; open it with 'wb'"
            ) from None
        return
    _write_atomically(data, f)


def _write_atomically(data: bytes, path: str | os.PathLike) -> None:
    """Write beside the target, then rename: a crash mid-write leaves the old file intact."""
    directory, filename = os.path.split(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"save: the folder {directory!r} of {os.fspath(path)!r} does not exist"
        )
    temporary = os.path.join(directory, f".{filename}.{uuid.uuid4().hex[:12]}.tmp")
    # Mode 0o666 less the umask, as open() gives (tempfile.mkstemp's 0o600 would hide the file
    # from the group); O_EXCL never reuses an existing file.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())  # the bytes reach the disk before the rename does
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


class _RepeatedKey(ValueError):
    """A key that appears twice in one JSON object of a header."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's dict; a repeated key raises, since readers disagree on which one wins."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _RepeatedKey(key)
        seen.add(key)
    return dict(pairs)


def _read_header(data: bytes, where: str) -> tuple[dict, int]:
    """The JSON header of a safetensors file and the size of the data after it, with checks
    that name what is wrong."""
    if len(data) < 8:
        raise SerializationError(
            f"load: {where} has {len(data)} bytes, too few to be a safetensors file "
            "(truncated, or not safetensors)"
        )
    length = int.from_bytes(data[:8], "little")
    if length > len(data) - 8:
        raise SerializationError(
            f"load: {where}: the header claims {length} bytes but only {len(data) - 8} follow "
            "(truncated, or not a safetensors file)"
        )
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"), object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        key = _shown(exc.args[0])
        raise SerializationError(f"load: {where}: the header repeats the key {key}") from None
    except RecursionError:
        raise SerializationError(f"load: {where}: the header is nested too deeply") from None
    except (UnicodeDecodeError, ValueError):
        raise SerializationError(
            f"load: {where}: the header is not valid JSON (corrupted, or not a safetensors file)"
        ) from None
    if not isinstance(header, dict):
        raise SerializationError(f"load: {where}: the header is not a JSON object")
    return header, len(data) - 8 - length


def _check_layout(header: dict, size: int) -> str | None:
    """What is wrong with the header's tensor entries for ``size`` bytes of data, or None.

    Checked here rather than left to safetensors so that absurd shapes or offsets are refused
    before anything is allocated, and every problem gets a message that names the tensor.
    """
    metadata = header.get("__metadata__")
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        return "__metadata__ is not a map of strings to strings"
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        # Other fields are allowed: safetensors ignores them, and so do the checksums.
        if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(entry):
            return f"the entry of {_shown(name)} lacks its dtype, shape or data_offsets"
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(dtype, str) or dtype not in _DTYPES:
            return (
                f"tensor {_shown(name)} has dtype {_shown(dtype)}; load reads {', '.join(_DTYPES)}"
            )
        if not (
            isinstance(shape, list)
            and len(shape) <= 64  # NumPy's limit; it also keeps math.prod below cheap
            and all(type(n) is int and 0 <= n < 2**63 for n in shape)
        ):
            return (
                f"tensor {_shown(name)} has shape {_shown(shape)}, not a list of at most 64 sizes"
            )
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(n) is int for n in offsets)
            and 0 <= offsets[0] <= offsets[1]
        ):
            return f"tensor {_shown(name)} has data_offsets {_shown(offsets)}, not [begin, end]"
        expected = math.prod(shape) * _DTYPES[dtype].itemsize
        if offsets[1] - offsets[0] != expected:
            return (
                f"tensor {_shown(name)} of shape {tuple(shape)} and dtype {dtype} needs {expected} "
                f"bytes but its data_offsets {offsets} span {offsets[1] - offsets[0]}"
            )
        spans.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            what = "overlaps the tensor before it" if begin < end else "leaves a gap before it"
            return f"tensor {_shown(name)} at data_offsets {[begin, stop]} {what}"
        end = stop
    if end != size:
        return f"the tensors take {end} bytes but {size} bytes of data follow the header"
    return None


def _bytes_crc(name: str, array: np.ndarray) -> int:
    """CRC-32 of a tensor's bytes alone: the checksum of files written before CHECKSUMS_KEY."""
    return zlib.crc32(memoryview(np.ascontiguousarray(array)))


def _checked(metadata: dict, arrays: dict[str, np.ndarray], where: str) -> str:
    """The chainrule tree's JSON text, once the checksums in ``metadata`` match."""
    keys = {key for key in metadata if key.startswith("chainrule.")}
    if keys not in ({TREE_KEY, CHECKSUMS_KEY}, {TREE_KEY, CRC_KEY}):
        raise SerializationError(
            f"load: {where}: the chainrule metadata has the keys {sorted(keys)}, not "
            f"{[CHECKSUMS_KEY, TREE_KEY]} (corrupted, or written by a newer chainrule)"
        )
    tree = metadata[TREE_KEY]
    corrupted = SerializationError(f"load: {where}: the chainrule checksums are corrupted")
    try:
        if CHECKSUMS_KEY in metadata:
            checksums = json.loads(metadata[CHECKSUMS_KEY])
            tree_crc, expected, actual = checksums["tree"], checksums["tensors"], _checksum
        else:  # a file from before CHECKSUMS_KEY: the tree is not covered, each tensor's bytes are
            tree_crc, expected, actual = None, json.loads(metadata[CRC_KEY]), _bytes_crc
    except (KeyError, TypeError, ValueError, RecursionError):
        raise corrupted from None
    if not isinstance(expected, dict):
        raise corrupted
    # surrogatepass: a lone surrogate escaped in the JSON must fail the checksum, not encode().
    if actual is _checksum and not (
        type(tree_crc) is int and tree_crc == zlib.crc32(tree.encode("utf-8", "surrogatepass"))
    ):
        raise SerializationError(
            f"load: {where}: the structure and plain values ({TREE_KEY}) do not match their "
            "checksum (the file is corrupted)"
        )
    unmatched = sorted(set(arrays) ^ set(expected))
    if unmatched:
        name = unmatched[0]
        has = "a checksum but no tensor" if name in expected else "no checksum"
        raise SerializationError(f"load: {where}: {_shown(name)} has {has} (the file is corrupted)")
    for name, array in arrays.items():
        crc = expected[name]
        if type(crc) is not int or crc != actual(name, array):
            raise SerializationError(
                f"load: {where}: tensor {_shown(name)} does not match its checksum "
                "(the file is corrupted)"
            )
    return tree


def _map_location(map_location: Any) -> Callable | None:
    """The function to call per storage, or None once ``map_location`` is checked to mean the
    CPU: None, "cpu", a device, a dict whose targets are all the CPU, or a function."""
    if map_location is None:
        return None
    targets = map_location.values() if isinstance(map_location, dict) else [map_location]
    if callable(map_location) and not isinstance(map_location, dict):
        return map_location
    for target in targets:
        if not (isinstance(target, str) or hasattr(target, "type")):
            raise ArgumentError(
                f"load: map_location={map_location!r}: expected None, 'cpu', a device, a dict "
                "or a function"
            )
        if str(target).partition(":")[0] != "cpu":
            raise ArgumentError(
                f"load: map_location={map_location!r} maps to {str(target)!r}, but chainrule "
                "computes with NumPy on the CPU only; use map_location='cpu' (or leave it out)"
            )
        device(str(target))  # "cpu:1" and the like are refused by device's own message
    return None


def _read(f: Any, where: str) -> bytes:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return file.read()
    read = getattr(f, "read", None)
    if read is None:
        raise ArgumentError(
            f"load: f must be a path or a binary file object, not {type(f).__name__}"
        )
    data = read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ArgumentError(f"load: {where} is open in text mode; open it with 'rb'")
    return bytes(data)


def load(
    f: str | os.PathLike | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Read what `save` wrote, or what PyTorch's ``torch.save`` wrote, from ``f``: a path or a
    binary file object (``open(path, "rb")``, ``io.BytesIO``), read from its position.

    A chainrule file gives back the saved structure with its types: dicts (``OrderedDict``
    too), lists, tuples, Tensors (``requires_grad`` kept), Parameters, NumPy arrays, numbers,
    strings and None; an object saved twice comes back as one object. A safetensors file from
    another writer loads as a flat dict of name -> Tensor. A PyTorch file (the zip format, or
    the format before 1.6) is read through an allow-listed unpickler, as PyTorch's
    ``weights_only=True`` reads it: tensors (bfloat16 widened to float32, which NumPy can
    hold), Parameters, state dicts, plain containers, numbers, strings, ``torch.Size``,
    dtypes, ``argparse.Namespace`` and NumPy arrays and scalars; any other global in its
    pickle is refused with a `SerializationError` naming it, before anything is imported or
    called. Tensors that shared a storage in PyTorch share memory here. Any other file says
    what it is (an empty file, a bare pickle, a zip without ``data.pkl``, a NumPy ``.npy``, a
    TorchScript archive).

    Keywords as in ``torch.load``: ``map_location`` may be None, ``"cpu"``, a CPU device, a
    dict of locations to the CPU, or a function ``fn(storage, location)`` (called per
    storage, with the storage as a Tensor; return None or a Tensor). A GPU target raises:
    chainrule has only the CPU, and loads tensors saved on a GPU onto it. ``weights_only`` is
    accepted either way and loading is always the restricted kind; ``mmap`` is accepted (the
    file is read into memory); ``pickle_module`` may be ``pickle``; ``pickle_load_args`` may
    hold ``encoding`` and ``errors`` (for pickles from Python 2).

    Before anything is returned from a chainrule file, ``load`` checks, and raises
    `SerializationError` naming the file and the problem otherwise:

    - the header: its length fits the file, it is a JSON object (no repeated keys), every
      tensor has a known dtype, a shape and data offsets, each tensor's offsets span exactly
      shape x item size bytes, and the tensors tile the data after the header with no gap,
      overlap or extra byte; BOOL tensors hold only bytes 0 and 1;
    - for a file written by `save`: a CRC-32 of each tensor's name, dtype, shape and bytes
      (so bytes read under another dtype, shape or name fail it), a CRC-32 of the metadata
      that holds the structure and plain values (numbers, strings), and that the checksums
      name exactly the tensors in the file. A file from an earlier chainrule (metadata key
      ``chainrule.crc32``) is still read, checked by what it stores: a CRC-32 of each
      tensor's bytes alone, which misses a dtype or shape edited in its header.

    A safetensors file from another writer has no chainrule metadata and so no checksum: a
    flipped byte in its tensor data cannot be detected and loads as a different value. A
    chainrule file stripped of all its ``chainrule.*`` metadata keys is such a file. CRC-32
    detects corruption, not deliberate edits: whoever rewrites the checksums can change
    anything. No code from a file is ever executed.
    """
    relocate = _map_location(map_location)
    if pickle_module is not None and pickle_module is not pickle:
        raise ArgumentError(
            f"load: pickle_module={pickle_module!r}: chainrule reads PyTorch's pickles with its "
            "own allow-listed unpickler only; leave pickle_module out"
        )
    if weights_only not in (None, True, False) or mmap not in (None, True, False):
        raise ArgumentError(
            f"load: weights_only and mmap take True, False or None, not {weights_only!r} and "
            f"{mmap!r}"
        )
    unknown = set(pickle_load_args) - {"encoding", "errors"}
    if unknown:
        raise ArgumentError(
            f"load: got unexpected keyword arguments {sorted(unknown)}; the unpickler takes "
            "encoding and errors"
        )
    where = _where(f)
    data = _read(f, where)
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _load_zip(data, where, relocate, pickle_load_args)
    if torch_format.is_legacy(data):
        try:
            return torch_format.load_legacy(data, relocate, pickle_load_args)
        except SerializationError as exc:
            raise SerializationError(f"load: {where} (a legacy PyTorch file): {exc}") from None
    kind = _kind(data)
    if kind is not None:
        raise SerializationError(f"load: {where} is {kind}")
    return _load_safetensors(data, where, relocate)


def _kind(data: bytes) -> str | None:
    """What a file that is neither chainrule's, safetensors nor PyTorch's is, if it can tell."""
    if not data:
        return "an empty file"
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return (
            "a pickle, not a chainrule or PyTorch file: chainrule never unpickles a bare pickle, "
            "since unpickling can run any code (load it with pickle only if you trust it)"
        )
    if data.startswith(b"\x93NUMPY"):
        return "a NumPy .npy file, not a chainrule or PyTorch file: read it with numpy.load"
    if data[257:262] == b"ustar":
        return (
            "a tar archive (PyTorch's oldest format, before 0.4, is one): load it in PyTorch "
            "and save it again"
        )
    return None


def _load_zip(data: bytes, where: str, relocate: Callable | None, options: dict) -> Any:
    """A zip file: PyTorch's format if it holds ``<name>/data.pkl``, else an error saying what
    it is."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except Exception as exc:  # zipfile raises many kinds for a damaged directory
        raise SerializationError(f"load: {where} is a damaged zip archive ({exc})") from None
    if any(name.endswith("/constants.pkl") or "/code/" in name for name in names):
        raise SerializationError(
            f"load: {where} is a TorchScript archive (torch.jit.save), which chainrule does "
            "not load; save the model's state_dict() with torch.save instead"
        )
    if torch_format.torch_archive_prefix(archive) is None:
        hint = (
            " (a NumPy .npz? read it with numpy.load)"
            if any(name.endswith(".npy") for name in names)
            else ""
        )
        raise SerializationError(
            f"load: {where} is a zip archive without data.pkl, so not a PyTorch file{hint}"
        )
    try:
        return torch_format.load_zip(archive, len(data), relocate, options)
    except SerializationError as exc:
        raise SerializationError(f"load: {where} (a PyTorch file): {exc}") from None
    except torch_format.CallerError as carried:
        raise carried.__cause__ from None
    except Exception as exc:  # a damaged entry: a bad CRC, header or compressed stream
        raise SerializationError(f"load: {where} is a damaged zip archive ({exc})") from None


def _load_safetensors(data: bytes, where: str, relocate: Callable | None) -> Any:
    """A safetensors file: chainrule's format, or a flat dict from another writer."""
    header, size = _read_header(data, where)
    problem = _check_layout(header, size)
    if problem is not None:
        raise SerializationError(f"load: {where} is not a valid safetensors file: {problem}")
    try:
        arrays = _safetensors_numpy().load(data)
    except Exception as exc:  # safetensors' own checks, in case they are stricter than ours
        raise SerializationError(f"load: {where} is not a valid safetensors file: {exc}") from None
    for name, array in arrays.items():
        if array.dtype == bool and np.ascontiguousarray(array).view(np.uint8).max(initial=0) > 1:
            raise SerializationError(
                f"load: {where}: BOOL tensor {_shown(name)} holds bytes other than 0 and 1 "
                "(the file is corrupted)"
            )
    metadata = header.get("__metadata__") or {}
    text = None
    if any(key.startswith("chainrule.") for key in metadata):
        text = _checked(metadata, arrays, where)
    arrays = {
        name: array if array.flags.writeable else array.copy() for name, array in arrays.items()
    }
    for array in arrays.values():
        torch_format.apply_map_location(array, "cpu", relocate)
    if text is None:
        return {name: Tensor._make(arrays[name]) for name in header if name != "__metadata__"}
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError):
        raise SerializationError(f"load: {where}: the chainrule metadata is corrupted") from None
    try:
        return _decode(tree, arrays, {}, where)
    except RecursionError:
        raise SerializationError(f"load: {where}: the metadata is nested too deeply") from None
