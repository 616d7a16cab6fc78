"""PyTorch's CPU random number generator, rebuilt on NumPy: a Mersenne Twister (mt19937)
seeded as PyTorch seeds it, its state in PyTorch's byte layout, and the ways PyTorch's CPU
kernels turn its 32-bit words into numbers. ``manual_seed(s)`` followed by the same calls
therefore gives PyTorch's numbers, bit for bit.

The conversions, as PyTorch 2.x computes them on the CPU:

- a float32 in [0, 1) is the low 24 bits of one word times 2^-24; a float64 the low 53 bits
  of a 64-bit number made of two words (the first the high half) times 2^-53;
- an integer in [low, low + range) is ``word % range + low``, with a 64-bit number once
  ``range`` reaches 2^28;
- a normal number comes by Box-Muller, in one of two ways: one at a time from two float64
  uniforms, the second number of each pair kept for the next draw (`Generator.normals`), or
  for a contiguous tensor of 16 or more elements in blocks of 16 (`Generator.normal_fill`),
  which for float32 is PyTorch's AVX2 kernel on x86-64 (`chainrule.vector_math`).
"""

from __future__ import annotations

import math
import numbers
import os
import struct

import numpy as np

from . import vector_math
from ._tensor import Tensor
from .dtypes import as_device, uint8
from .errors import DTypeError, ShapeError, fmt_dtype, fmt_shape

#: The seed of a new `Generator`, PyTorch's (so a fresh generator draws the same each run).
DEFAULT_SEED = 67280421310721

_WORDS = 624  # the twister's state, in 32-bit words
# PyTorch's state tensor: seed, left, seeded, next, 624 words widened to 64 bits, three
# doubles and a flag of an older normal cache (only normal_y and the flag are used), padding,
# then the float cache and its flag.
_LAYOUT = struct.Struct(f"<qiiQ{_WORDS}Qdddi4xf?3x")
STATE_BYTES = _LAYOUT.size  # 5056
_LEGACY_BYTES = STATE_BYTES - 8  # states saved before the float cache existed
_TWO_PI = 2.0 * math.pi


def seed_words(seed: int) -> np.ndarray:
    """The twister's 624 words after seeding with the low 32 bits of ``seed`` (Knuth's
    multiplier, as the reference mt19937 and PyTorch seed it)."""
    key = np.empty(_WORDS, np.uint32)
    s = seed & 0xFFFFFFFF
    key[0] = s
    for j in range(1, _WORDS):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        key[j] = s
    return key


def _entropy_seed() -> int:
    return int.from_bytes(os.urandom(8), "little") & (2**63 - 1)


def _describe(x) -> str:
    if isinstance(x, Tensor):
        return f"a {fmt_dtype(x.dtype)} tensor of shape {fmt_shape(x.shape)}"
    return type(x).__name__


class Generator:
    """A random number generator (``torch.Generator``): PyTorch's CPU generator, so the same
    seed draws the same numbers as PyTorch. Pass one as ``generator=`` for a stream of its own,
    apart from `chainrule.default_generator`, the one `manual_seed` seeds.

    >>> g = Generator().manual_seed(3)
    >>> a = g.words(2)
    >>> bool((a == Generator().manual_seed(3).words(2)).all()), g.initial_seed()
    (True, 3)
    >>> Generator().manual_seed(0).get_state().shape
    (5056,)
    """

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device, "Generator")
        self._twister = np.random.MT19937()
        self.manual_seed(DEFAULT_SEED)

    # Seeding and state.

    def manual_seed(self, seed: int) -> Generator:
        """Seed this generator; returns it (so ``Generator().manual_seed(0)`` chains).
        As in PyTorch, a negative seed is taken modulo 2**64 and only its low 32 bits seed
        the twister (``initial_seed`` gives the whole seed back)."""
        if not isinstance(seed, numbers.Real) or isinstance(seed, bool):
            raise DTypeError(f"manual_seed: the seed must be a number, got {seed!r}")
        seed = int(seed)  # PyTorch takes a float seed as its integer part
        if not -(2**63) <= seed < 2**64:
            raise ValueError(f"manual_seed: the seed {seed} does not fit in 64 bits")
        self._seed = seed % 2**64
        self._load(seed_words(self._seed), 624, fresh=True)
        self._next_double = self._next_float = None
        return self

    def seed(self) -> int:
        """Seed this generator from the operating system's entropy; returns that seed."""
        seed = _entropy_seed()
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state: a uint8 tensor of 5056 bytes laid out as PyTorch's, so
        ``torch.set_rng_state`` takes it and `set_state` takes PyTorch's."""
        state = self._twister.state["state"]
        pos = int(state["pos"])
        left, next_ = (1, 0) if self._fresh else (_WORDS + 1 - pos, pos)
        raw = _LAYOUT.pack(
            self._seed - 2**64 if self._seed >= 2**63 else self._seed, left, 1, next_,
            *state["key"].tolist(),
            0.0, 0.0 if self._next_double is None else self._next_double, 0.0,
            self._next_double is not None,
            0.0 if self._next_float is None else self._next_float,
            self._next_float is not None,
        )  # fmt: skip
        return Tensor._make(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from `get_state` (or PyTorch's ``get_rng_state``); returns this
        generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
            raise TypeError(
                f"set_state: expected the uint8 tensor get_state returns, got "
                f"{_describe(new_state)}"
            )
        raw = new_state._array.tobytes()
        if len(raw) == _LEGACY_BYTES:
            raw = raw + bytes(8)
        if len(raw) != STATE_BYTES:
            raise ShapeError(
                f"set_state: a state has {STATE_BYTES} bytes (or {_LEGACY_BYTES} in the older "
                f"layout), got shape {fmt_shape(new_state.shape)}"
            )
        fields = _LAYOUT.unpack(raw)
        seed, left, seeded, next_ = fields[:4]
        words = np.array(fields[4 : 4 + _WORDS], np.uint64)
        normal_y, normal_valid, float_cache, float_valid = fields[-5], fields[-3], *fields[-2:]
        if not seeded or not 0 < left <= _WORDS or next_ > _WORDS:
            raise ValueError("set_state: not a valid mt19937 state (left, next or seeded)")
        if left != 1 and left + next_ != _WORDS + 1:
            raise ValueError(
                f"set_state: left ({left}) and next ({next_}) disagree; chainrule continues "
                "only states a generator wrote"
            )
        self._seed = seed % 2**64
        self._load((words & 0xFFFFFFFF).astype(np.uint32), 624 if left == 1 else next_,
                   fresh=left == 1 and next_ == 0)  # fmt: skip
        self._next_double = normal_y if normal_valid else None
        self._next_float = float_cache if float_valid else None
        return self

    def _load(self, key: np.ndarray, pos: int, fresh: bool) -> None:
        self._twister.state = {
            "bit_generator": "MT19937",
            "state": {"key": key, "pos": pos},
        }
        self._fresh = fresh

    def snapshot(self) -> tuple:
        """The state as a cheap Python value for `restore` (checkpoint and vmap's
        ``randomness='same'`` replay draws with it)."""
        return (self._twister.state, self._fresh, self._next_double, self._next_float)

    def restore(self, snapshot: tuple) -> None:
        """Go back to a `snapshot`."""
        state, self._fresh, self._next_double, self._next_float = snapshot
        self._twister.state = state

    # Raw words.

    def words(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (uint32)."""
        if n == 0:
            return np.empty(0, np.uint32)
        self._fresh = False
        return self._twister.random_raw(n).astype(np.uint32)

    def words64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit numbers (uint64), each two words, the first the high half."""
        pairs = self.words(2 * n).astype(np.uint64)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    # The conversions PyTorch's kernels make.

    def unit(self, n: int, dtype) -> np.ndarray:
        """``n`` uniforms in [0, 1) of ``dtype`` as PyTorch makes them: the dtype's mantissa
        bits of a word (float64: of a 64-bit number) over 2**bits. float16 and bfloat16 are
        made in float32 from their own bit counts."""
        dtype = np.dtype(dtype)
        if dtype == np.float64:
            return (self.words64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
        bits = np.finfo(dtype).nmant + 1 if dtype.kind == "f" else 24
        scale = np.float32(2.0**-bits)
        return (self.words(n) & np.uint32(2**bits - 1)).astype(np.float32) * scale

    def integers(self, n: int, span: int) -> np.ndarray:
        """``n`` integers in [0, span) as ``word % span`` (uint64), from 64-bit numbers once
        ``span`` reaches 2**28, as PyTorch's ``randint`` and ``random_(from, to)``."""
        if span >= 2**28:
            return self.words64(n) % np.uint64(span)
        return self.words(n).astype(np.uint64) % np.uint64(span)

    def normals(self, n: int) -> np.ndarray:
        """``n`` standard normal float64s one at a time, as PyTorch's scalar path draws them:
        each pair of float64 uniforms (u1, u2) gives r cos(2 pi u1) and, kept for the next
        draw, r sin(2 pi u1), with r = sqrt(-2 log1p(-u2)). The C library's functions (through
        `math`) compute them, as in PyTorch."""
        out = np.empty(n)
        start = 0
        if n and self._next_double is not None:
            out[0], self._next_double, start = self._next_double, None, 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self.unit(2 * pairs, np.float64).tolist()
            cos, sin, log1p, sqrt = math.cos, math.sin, math.log1p, math.sqrt
            values = []
            for u1, u2 in zip(u[0::2], u[1::2]):
                r, theta = sqrt(-2.0 * log1p(-u2)), _TWO_PI * u1
                values += (r * cos(theta), r * sin(theta))
            if (n - start) % 2:
                self._next_double = values.pop()
            out[start:] = values
        return out

    def normal_fill(self, n: int, dtype, mean: float, std: float) -> np.ndarray:
        """``n >= 16`` normal numbers of ``dtype`` as PyTorch fills a contiguous tensor: all
        ``n`` uniforms first, Box-Muller on each block of 16 (the first 8 give the radii, the
        last 8 the angles), and when 16 does not divide ``n``, 16 fresh uniforms for the
        last 16 elements."""
        dtype = np.dtype(dtype)
        work = np.float64 if dtype == np.float64 else np.float32
        data = self.unit(n, work)
        whole = n - n % 16
        data[:whole] = _box_muller_16(data[:whole], work, mean, std)
        if n % 16:
            data[n - 16 :] = _box_muller_16(self.unit(16, work), work, mean, std)
        return data.astype(dtype, copy=False)


def _box_muller_16(uniforms: np.ndarray, work, mean: float, std: float) -> np.ndarray:
    blocks = uniforms.reshape(-1, 16)
    if work == np.float32:
        return vector_math.box_muller_16(blocks, mean, std).reshape(-1)
    u1, u2 = (1.0 - blocks[:, :8]).ravel().tolist(), blocks[:, 8:].ravel().tolist()
    log, cos, sin, sqrt = math.log, math.cos, math.sin, math.sqrt
    radius = np.array([sqrt(-2.0 * log(v)) for v in u1]).reshape(-1, 8)
    theta = [_TWO_PI * v for v in u2]
    cosines = np.array([cos(t) for t in theta]).reshape(-1, 8)
    sines = np.array([sin(t) for t in theta]).reshape(-1, 8)
    out = np.empty_like(blocks)
    out[:, :8] = vector_math.fma64(radius * cosines, std, mean)
    out[:, 8:] = vector_math.fma64(radius * sines, std, mean)
    return out.reshape(-1)
