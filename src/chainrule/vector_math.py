"""PyTorch's float32 Box-Muller block, computed as its x86-64 build computes it, so that
``randn`` and ``normal_`` give PyTorch's bits.

On a CPU with AVX2 (every x86-64 CPU since 2013; PyTorch takes the AVX2 kernel on AVX-512
CPUs too) PyTorch fills float32 normals 16 at a time with Cephes-style polynomial ``log`` and
``sincos`` evaluated in float32, where the compiler fused each multiply followed by an add into
one fused multiply-add. Here the same polynomials run in NumPy float32, each fused
multiply-add done in float64 and rounded once (a float32 product is exact in float64, so the
result is PyTorch's except where the float64 sum itself rounds onto a float32 midpoint, about
one value in 2^29).

Without AVX2 (or under ``ATEN_CPU_CAPABILITY=default``) PyTorch's block calls the C library's
``logf``, ``cosf`` and ``sinf`` instead; `box_muller_16` does the same through ctypes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import os

import numpy as np

_f32 = np.float32
_TWO_PI_32 = _f32(2.0 * math.pi)

# Cephes' single-precision coefficients (log on [sqrt(1/2), sqrt(2)), sin and cos on
# [-pi/4, pi/4]) and the three-part split of pi/4 for the argument reduction.
_LOG_POLY = (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
)  # fmt: skip
_LN2_HI, _LN2_LO = _f32(0.693359375), _f32(-2.12194440e-4)
_SQRT_HALF = _f32(0.707106781186547524)
_FOUR_OVER_PI = _f32(1.27323954473516)
_PI4_PARTS = (_f32(-0.78515625), _f32(-2.4187564849853515625e-4), _f32(-3.77489497744594108e-8))
_SIN_POLY = (_f32(-1.9515295891e-4), _f32(8.3321608736e-3), _f32(-1.6666654611e-1))
_COS_POLY = (_f32(2.443315711809948e-005), _f32(-1.388731625493765e-003),
             _f32(4.166664568298827e-002))  # fmt: skip


def fma32(a, b, c) -> np.ndarray:
    """a * b + c for float32 values, rounded once (through float64, where a * b is exact)."""
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(_f32)


def fma64(a, b, c) -> np.ndarray:
    """a * b + c for float64 values rounded (almost always) once: Dekker's exact product and
    Knuth's exact sum, then one rounding of their parts."""
    a, b, c = np.asarray(a, np.float64), np.float64(b), np.asarray(c, np.float64)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    error = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    v = s - p
    tail = (p - (s - v)) + (c - v)
    return s + (tail + error)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


def _floats(i: np.ndarray) -> np.ndarray:
    return i.view(_f32)


def log_avx2(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32s as PyTorch's AVX2 ``log256_ps`` computes it."""
    x = np.maximum(x, _floats(np.array(0x00800000, np.int32)))
    exponent = (_bits(x).view(np.uint32) >> 23).astype(np.int32)
    x = _floats((_bits(x) & np.int32(~0x7F800000)) | _bits(np.array(0.5, _f32)))
    e = (exponent - 0x7F).astype(_f32) + _f32(1)
    below = x < _SQRT_HALF
    # Below sqrt(1/2) the mantissa doubles and the exponent drops by one.
    x = (x - _f32(1)) + np.where(below, x, _f32(0))
    e = e - np.where(below, _f32(1), _f32(0))
    z = x * x
    y = np.full_like(x, _f32(_LOG_POLY[0]))
    for p in _LOG_POLY[1:]:
        y = fma32(y, x, _f32(p))
    y = fma32(y * x, z, e * _LN2_LO)
    y = y - z * _f32(0.5)
    return fma32(e, _LN2_HI, x + y)


def sincos_avx2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sin, cos) of float32s as PyTorch's AVX2 ``sincos256_ps`` computes them."""
    sin_sign = _bits(x) & np.int32(-(2**31))
    x = np.abs(x)
    octant = ((x * _FOUR_OVER_PI).astype(np.int32) + 1) & ~1
    y = octant.astype(_f32)
    for part in _PI4_PARTS:
        x = fma32(y, part, x)
    sin_sign = sin_sign ^ ((octant & 4) << 29)
    cos_sign = (~(octant - 2) & 4) << 29
    z = x * x
    c = fma32(fma32(_COS_POLY[0], z, _COS_POLY[1]), z, _COS_POLY[2])
    c = fma32(c * z, z, -(z * _f32(0.5))) + _f32(1)
    s = fma32(fma32(_SIN_POLY[0], z, _SIN_POLY[1]), z, _SIN_POLY[2])
    s = fma32(s * z, x, x)
    swap = (octant & 2) != 0  # in these octants the sine polynomial gives the cosine
    sin = np.where(swap, c, s) + _f32(0)
    cos = np.where(swap, s, c) + _f32(0)
    return _floats(_bits(sin) ^ sin_sign), _floats(_bits(cos) ^ cos_sign)


@functools.cache
def _capability() -> str:
    """The kernel set PyTorch's x86-64 build would pick here: "avx2" or "default"."""
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if wanted == "default":
        return "default"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        flags = []
    return "avx2" if {"avx2", "fma"} <= set(flags) else "default"


@functools.cache
def _libm():
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


@functools.cache
def libm_float(name: str):
    """The C library's single-precision function ``name`` (float -> float), through ctypes
    (looked up once per name)."""
    function = getattr(_libm(), name)
    function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
    return function


def _each(function, x: np.ndarray) -> np.ndarray:
    return np.array([function(v) for v in x.ravel().tolist()], _f32).reshape(x.shape)


def box_muller_16(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """PyTorch's float32 normal block on each row of ``blocks`` (rows of 16 uniforms in
    [0, 1)): radii from the first 8, angles from the last 8, results times ``std`` plus
    ``mean`` in one fused multiply-add."""
    u1, u2 = _f32(1) - blocks[:, :8], blocks[:, 8:]
    if _capability() == "avx2":
        radius = np.sqrt(_f32(-2) * log_avx2(u1))
        sin, cos = sincos_avx2(_TWO_PI_32 * u2)
    else:
        radius = np.sqrt(_f32(-2) * _each(libm_float("logf"), u1))
        theta = (2.0 * math.pi * u2.astype(np.float64)).astype(_f32)
        cos, sin = _each(libm_float("cosf"), theta), _each(libm_float("sinf"), theta)
    mean, std = _f32(mean), _f32(std)
    out = np.empty_like(blocks)
    out[:, :8] = fma32(radius * cos, std, mean)
    out[:, 8:] = fma32(radius * sin, std, mean)
    return out
