"""Reusing freed memory for large arrays: `keep_freed_memory` tunes glibc's malloc, on request.

NumPy allocates every result with malloc. glibc serves a block above its mmap threshold with
fresh pages from the kernel and hands them back when the block is freed, so a training step
that makes the same few-MiB temporaries every step takes a page fault on every page of every
one of them, every step. On the small GPT step that was half of chainrule's time; PyTorch's
CPU ops make fewer temporaries. `keep_freed_memory` raises the mmap and trim thresholds, so
freed blocks stay in the heap and the next step's arrays reuse them: the job of a deep
learning framework's caching allocator, done by the C library's own. It changes the whole
process, so importing chainrule never calls it: a program asks for it (``chainrule run`` and
the benchmarks do), and ``CHAINRULE_MALLOC=system`` in the environment makes it leave malloc
as it is. The cost is memory: up to `TRIM_THRESHOLD` of freed memory stays with the process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: Blocks up to this size come from the heap (glibc's upper limit on 64-bit systems).
MMAP_THRESHOLD = 32 * 2**20
#: Freed memory at the top of the heap is returned to the system only beyond this.
TRIM_THRESHOLD = 512 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


def keep_freed_memory() -> bool:
    """Tune glibc's malloc, for the rest of the process, to keep and reuse freed blocks of
    large arrays; True if it did (False off glibc, or with ``CHAINRULE_MALLOC=system``).

    >>> import chainrule
    >>> chainrule.allocator.keep_freed_memory() in (True, False)
    True
    """
    if os.environ.get("CHAINRULE_MALLOC", "").lower() == "system":
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
