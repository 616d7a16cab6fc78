"""chainrule.allocator: glibc's malloc keeps freed blocks of large arrays once a program asks
(so each step's temporaries reuse memory instead of page-faulting); importing chainrule alone
changes nothing, and CHAINRULE_MALLOC=system turns the request down."""

import os
import subprocess
import sys

import pytest

GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")

#: Minor page faults over 20 steps that each make eight 4 MiB temporaries and free them (as a
#: training step does), in a new process that runs ``setup`` first.
STEPS = (
    "import resource, numpy as np, chainrule\n"
    "{setup}\n"
    "x = np.ones(2**19)\n"
    "for _ in range(3): ys = [x * 2 for _ in range(8)]; del ys\n"
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "for _ in range(20): ys = [x * 2 for _ in range(8)]; del ys\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)"
)


def _faults(setup: str, **env: str) -> int:
    code = STEPS.format(setup=setup)
    env = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's; page faults counted on Linux")
def test_keeping_freed_memory_stops_a_repeated_large_temporary_page_faulting():
    """glibc's defaults give the freed top of the heap back to the system each step and fault
    on every page again (about 8,000 per step); asked to keep freed memory, it reuses it."""
    kept = _faults("assert chainrule.allocator.keep_freed_memory()", CHAINRULE_MALLOC="")
    untouched = _faults("pass", CHAINRULE_MALLOC="")
    assert kept < 1_000 < 50_000 < untouched, (kept, untouched)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's; page faults counted on Linux")
def test_the_environment_turns_the_request_down():
    setup = "assert not chainrule.allocator.keep_freed_memory()"
    assert _faults(setup, CHAINRULE_MALLOC="system") > 50_000
