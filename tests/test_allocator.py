"""chainrule.allocator: glibc's malloc keeps freed blocks of large arrays when chainrule is
imported (so each step's temporaries reuse memory instead of page-faulting), unless
CHAINRULE_MALLOC=system."""

import os
import subprocess
import sys

import pytest

import chainrule
from chainrule import allocator

GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_importing_chainrule_tunes_glibc_malloc():
    assert chainrule.allocator.TUNED is (os.environ.get("CHAINRULE_MALLOC") != "system")
    assert allocator.keep_freed_memory() is (os.environ.get("CHAINRULE_MALLOC") != "system")


def test_the_environment_can_leave_malloc_alone():
    code = "import chainrule; print(chainrule.allocator.TUNED)"
    env = {**os.environ, "CHAINRULE_MALLOC": "system"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.skipif(not GLIBC, reason="page faults counted on Linux")
def test_a_repeated_large_temporary_stops_page_faulting():
    """Minor page faults over 20 steps that each make eight 4 MiB temporaries and free them
    (as a training step does): with the tuning, the freed blocks are reused; glibc's defaults
    give the freed top of the heap back to the system each step and fault on every page again
    (about 8,000 per step), as a new process with CHAINRULE_MALLOC=system shows."""
    code = (
        "import resource, numpy as np, chainrule\n"
        "x = np.ones(2**19)\n"
        "for _ in range(3): ys = [x * 2 for _ in range(8)]; del ys\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(20): ys = [x * 2 for _ in range(8)]; del ys\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)"
    )
    faults = {}
    for mode in ("tuned", "system"):
        env = {**os.environ, "CHAINRULE_MALLOC": mode}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        faults[mode] = int(out.stdout)
    assert faults["tuned"] < 1_000 < 50_000 < faults["system"], faults
