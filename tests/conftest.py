"""Shared test set-up: hypothesis profiles, tolerances, and the PyTorch oracle fixture."""

import importlib
import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: Tolerances for float64 comparisons, in one place.
FD_TOL = {"atol": 1e-6, "rtol": 1e-5}  # central differences against backward
TORCH_TOL = {"atol": 1e-10, "rtol": 1e-9}  # chainrule against PyTorch


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the oracle: skipped when absent, but a failure when CI=true."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("PyTorch is required in CI: pip install torch==2.13.0")
        pytest.skip("PyTorch is not installed (pip install torch==2.13.0)")


@pytest.fixture(scope="session")
def dot_program():
    """Graphviz's dot program: skipped when absent, but a failure when CI=true."""
    path = shutil.which("dot")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Graphviz's dot is required in CI: apt-get install graphviz")
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")
    return path
