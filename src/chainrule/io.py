"""`save` and `load` in the safetensors format: tensors as raw little-endian bytes, everything
else (numbers, strings, lists, nesting) as JSON in the file's metadata. Nothing is pickled, so
loading a file never runs code from it. Needs the ``safetensors`` package (``chainrule[io]``).
"""

from __future__ import annotations

import json
import os
import uuid
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._tensor import Tensor
from .errors import ChainruleError, DTypeError

#: Metadata keys: the nested structure (JSON) and a CRC-32 of every tensor's bytes.
TREE_KEY = "chainrule.tree"
CRC_KEY = "chainrule.crc32"

_SCALARS = (type(None), bool, int, float, str)


class SerializationError(ChainruleError, ValueError):
    """A file cannot be read back: truncated, corrupted, or not a safetensors file."""


def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "chainrule.save and chainrule.load need the safetensors package: "
            "pip install chainrule[io]"
        ) from None
    return safetensors.numpy


def _encode(value: Any, name: str, arrays: dict[str, np.ndarray]) -> Any:
    """A JSON tree for ``value`` whose tensors are replaced by their names in ``arrays``.

    Containers are tagged ({"dict": pairs}, {"list": [...]}, {"tuple": [...]}) so that keys
    keep their types (an optimizer's state is keyed by int) and no user dict is misread.
    """
    if isinstance(value, (Tensor, np.ndarray)):
        array = value.data if isinstance(value, Tensor) else value
        if array.dtype.kind not in "biuf":
            raise DTypeError(f"save: {name!r} holds {array.dtype} data; only numbers are saved")
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
        little = array.dtype.newbyteorder("<")
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
                raise DTypeError(
                    f"save: key {key!r} in {name or 'the top level'!r} is a "
                    f"{type(key).__name__}; keys must be str, int, float, bool or None"
                )
            pairs.append([key, _encode(item, f"{prefix}{key}", arrays)])
        return {"dict": pairs}
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [_encode(item, f"{prefix}{i}", arrays) for i, item in enumerate(value)]}
    raise DTypeError(
        f"save: {name or 'the object'!r} has type {type(value).__name__}; only tensors, arrays, "
        "numbers, strings, None and dicts, lists or tuples of them can be saved"
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
                raise SerializationError(f"load: {where}: the metadata names a missing {body!r}")
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

    >>> import chainrule, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> save({"model": {"w": chainrule.ones(2)}, "epoch": 3}, path)
    >>> load(path)
    {'model': {'w': tensor([1., 1.])}, 'epoch': 3}
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, "", arrays)
    crcs = {name: zlib.crc32(array.tobytes()) for name, array in arrays.items()}
    metadata = {TREE_KEY: json.dumps(tree), CRC_KEY: json.dumps(crcs)}
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


def _read_header(data: bytes, where: str) -> dict:
    """The JSON header of a safetensors file, with checks that name what is wrong."""
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
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise SerializationError(
            f"load: {where}: the header is not valid JSON (corrupted, or not a safetensors file)"
        ) from None
    if not isinstance(header, dict):
        raise SerializationError(f"load: {where}: the header is not a JSON object")
    return header


def load(path: str | os.PathLike) -> Any:
    """Read a file written by `save` and rebuild its structure, with Tensors for arrays.

    A safetensors file from another library loads as a flat dict of name -> Tensor. A
    truncated, corrupted or foreign file raises `SerializationError`; no code is executed.
    """
    where = repr(os.fspath(path))
    with open(path, "rb") as file:
        data = file.read()
    header = _read_header(data, where)
    metadata = header.get("__metadata__") or {}
    safetensors_numpy = _safetensors_numpy()
    try:
        arrays = safetensors_numpy.load(data)
    except Exception as exc:  # safetensors raises its own SafetensorError, or numpy's errors
        raise SerializationError(f"load: {where} is not a valid safetensors file: {exc}") from None
    try:
        crcs = json.loads(metadata.get(CRC_KEY, "{}"))
        tree = json.loads(metadata[TREE_KEY]) if TREE_KEY in metadata else None
        if not isinstance(crcs, dict):
            raise ValueError
    except (AttributeError, TypeError, ValueError, RecursionError):
        raise SerializationError(f"load: {where}: the chainrule metadata is corrupted") from None
    for name, crc in crcs.items():
        if name not in arrays or zlib.crc32(np.ascontiguousarray(arrays[name]).tobytes()) != crc:
            raise SerializationError(
                f"load: {where}: the data of tensor {name!r} does not match its checksum "
                "(the file is corrupted)"
            )
    tensors = {
        name: Tensor._make(array if array.flags.writeable else array.copy())
        for name, array in arrays.items()
    }
    if tree is None:
        return {name: tensors[name] for name in header if name != "__metadata__"}
    try:
        return _decode(tree, tensors, where)
    except RecursionError:
        raise SerializationError(f"load: {where}: the metadata is nested too deeply") from None
