"""`save` and `load` in the safetensors format: tensors as raw little-endian bytes, everything
else (numbers, strings, lists, nesting) as JSON in the file's metadata, with CRC-32 checksums
over both. Nothing is pickled, so loading a file never runs code from it. Needs the
``safetensors`` package (``chainrule[io]``).
"""

from __future__ import annotations

import json
import math
import os
import uuid
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._tensor import Tensor
from .errors import ChainruleError, DTypeError

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


class SerializationError(ChainruleError, ValueError):
    """A file cannot be read back (truncated, corrupted, or not a safetensors file), or an
    object cannot be saved (it is not a tensor, a plain value or a container of them)."""


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


def _encode(value: Any, name: str, arrays: dict[str, np.ndarray]) -> Any:
    """A JSON tree for ``value`` whose tensors are replaced by their names in ``arrays``.

    Containers are tagged ({"dict": pairs}, {"list": [...]}, {"tuple": [...]}) so that keys
    keep their types (an optimizer's state is keyed by int) and no user dict is misread.
    """
    if isinstance(value, (Tensor, np.ndarray)):
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
        return {"tensor": name}
    if isinstance(value, np.generic):
        return _encode(value.item(), name, arrays)  # np.datetime64 etc. fall through to the error
    if isinstance(value, _SCALARS):
        return value
    prefix = f"{name}." if name else ""
    if isinstance(value, Mapping):
        pairs = []
        for key, item in value.items():
            if not isinstance(key, _SCALARS):
                raise SerializationError(
                    f"save: key {key!r} in {name or 'the top level'!r} is a "
                    f"{type(key).__name__}; keys must be str, int, float, bool or None"
                )
            pairs.append([key, _encode(item, f"{prefix}{key}", arrays)])
        return {"dict": pairs}
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [_encode(item, f"{prefix}{i}", arrays) for i, item in enumerate(value)]}
    raise SerializationError(
        f"save: {name or 'the object'!r} has type {type(value).__name__}; only tensors, arrays, "
        "numbers, strings, None and dicts, lists or tuples of them can be saved (nothing is "
        "pickled: save an object's state_dict() instead)"
    )


def _is_pair(pair: Any) -> bool:
    """Whether ``pair`` is a [key, value] entry of an encoded dict."""
    return isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], _SCALARS)


def _decode(node: Any, tensors: dict[str, Tensor], where: str) -> Any:
    if isinstance(node, _SCALARS):
        return node
    if isinstance(node, dict) and len(node) == 1:
        ((tag, body),) = node.items()
        if tag == "tensor" and isinstance(body, str):
            if body not in tensors:
                raise SerializationError(
                    f"load: {where}: the metadata names a missing {_shown(body)}"
                )
            return tensors[body]
        if tag == "dict" and isinstance(body, list) and all(map(_is_pair, body)):
            return {key: _decode(item, tensors, where) for key, item in body}
        if tag in ("list", "tuple") and isinstance(body, list):
            items = [_decode(item, tensors, where) for item in body]
            return items if tag == "list" else tuple(items)
    raise SerializationError(f"load: {where}: the metadata's structure is malformed")


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists of tensors and plain values) to
    ``path`` as safetensors. Tensors are named by their dotted paths (``model.0.weight``).

    ``obj`` may be what a PyTorch program passes to ``torch.save`` for a checkpoint: a state
    dict, or dicts (nested) of state dicts, tensors, arrays, numbers, strings, bools, None and
    lists or tuples of them, e.g. ``{"model": model.state_dict(), "optimizer":
    optimizer.state_dict(), "step": 10}``. Tensors go to the file's data and everything else to
    JSON in its metadata, in one file; key and container types come back as they went in.
    Anything else raises `SerializationError` naming where it is (``'config.fn'``) and its
    type, and writes nothing.

    >>> import chainrule, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> save({"model": {"w": chainrule.ones(2)}, "epoch": 3}, path)
    >>> load(path)
    {'model': {'w': tensor([1., 1.])}, 'epoch': 3}
    """
    arrays: dict[str, np.ndarray] = {}
    tree = json.dumps(_encode(obj, "", arrays))
    checksums = {
        "tree": zlib.crc32(tree.encode()),
        "tensors": {name: _checksum(name, array) for name, array in arrays.items()},
    }
    metadata = {TREE_KEY: tree, CHECKSUMS_KEY: json.dumps(checksums)}
    data = _safetensors_numpy().save(arrays, metadata=metadata)
    # Write beside the target, then rename: a crash mid-write leaves the old file intact.
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


def load(path: str | os.PathLike) -> Any:
    """Read a file written by `save` and rebuild its structure, with Tensors for arrays.

    Before anything is returned, ``load`` checks, and raises `SerializationError` naming the
    file and the problem otherwise:

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

    A safetensors file from another writer (``safetensors``, PyTorch...) has no chainrule
    metadata: it loads as a flat dict of name -> Tensor after the same header checks, but it
    holds no checksum, so a flipped byte in its tensor data cannot be detected and loads as a
    different value. A chainrule file stripped of all its ``chainrule.*`` metadata keys is
    such a file. CRC-32 detects corruption, not deliberate edits: whoever rewrites the
    checksums can change anything. No code is ever executed: nothing is unpickled.
    """
    where = repr(os.fspath(path))
    with open(path, "rb") as file:
        data = file.read()
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
    tensors = {
        name: Tensor._make(array if array.flags.writeable else array.copy())
        for name, array in arrays.items()
    }
    metadata = header.get("__metadata__") or {}
    if not any(key.startswith("chainrule.") for key in metadata):
        return {name: tensors[name] for name in header if name != "__metadata__"}
    text = _checked(metadata, arrays, where)
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError):
        raise SerializationError(f"load: {where}: the chainrule metadata is corrupted") from None
    try:
        return _decode(tree, tensors, where)
    except RecursionError:
        raise SerializationError(f"load: {where}: the metadata is nested too deeply") from None
