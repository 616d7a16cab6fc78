"""Shared test set-up: hypothesis profiles, tolerances, and the PyTorch oracle fixture."""

import importlib
import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

import chainrule

# Each run (and CI) draws 10 examples per property: every op's eight properties in
# tests/test_ops.py are half of the suite's time, and CI must stay under 15 minutes as the
# op table grows. HYPOTHESIS_PROFILE=thorough draws 200 (the nightly-style run).
settings.register_profile(
    "default", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: Tolerances for float64 comparisons, in one place.
FD_TOL = {"atol": 1e-6, "rtol": 1e-5}  # central differences against backward
TORCH_TOL = {"atol": 1e-10, "rtol": 1e-9}  # chainrule against PyTorch


class Cube(chainrule.Function):
    """x**3 with a hand-written backward on arrays (the tests' custom Function)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x**3

    def backward(self, g):
        (x,) = self.saved_tensors
        return 3 * x**2 * g


def optional_module(name: str, install: str):
    """The optional library ``name`` for a test: skipped when absent, but a failure when CI=true
    (a module-level ``pytest.importorskip`` would skip a whole file silently even in CI)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is required in CI: {install}")
        pytest.skip(f"{name} is not installed ({install})")


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the oracle: skipped when absent, but a failure when CI=true."""
    return optional_module("torch", "pip install torch==2.13.0")


@pytest.fixture(scope="session")
def safetensors_numpy():
    """safetensors' NumPy API (chainrule.save and load need the package): skipped when absent,
    but a failure when CI=true."""
    return optional_module("safetensors.numpy", "pip install -e .[io]")


@pytest.fixture(scope="session")
def safetensors_torch(torch):
    """safetensors' PyTorch API, to write files as PyTorch programs do: skipped when absent,
    but a failure when CI=true."""
    return optional_module("safetensors.torch", "pip install -e .[io] torch==2.13.0")


@pytest.fixture(scope="session")
def graphviz():
    """The graphviz Python package (not the dot program: see `dot_program`): skipped when
    absent, but a failure when CI=true."""
    return optional_module("graphviz", "pip install -e .[viz]")


@pytest.fixture(scope="session")
def sklearn_datasets():
    """scikit-learn's data sets (the digits' reference copy): skipped when absent, but a
    failure when CI=true."""
    return optional_module("sklearn.datasets", "pip install -e .[data]")


@pytest.fixture(scope="session")
def tqdm():
    """tqdm, the demos' progress bar: skipped when absent, but a failure when CI=true."""
    return optional_module("tqdm", "pip install -e .[demo]")


@pytest.fixture(scope="session")
def dot_program():
    """Graphviz's dot program: skipped when absent, but a failure when CI=true."""
    path = shutil.which("dot")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Graphviz's dot is required in CI: apt-get install graphviz")
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")
    return path


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium driven by Playwright (the system browser, never a download):
    skipped when either is absent, but a failure when CI=true."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        sync_api = importlib.import_module("playwright.sync_api")
    except ImportError:
        sync_api = None
    if sync_api is None or path is None:
        if sync_api is None:
            missing = "the playwright package (pip install playwright)"
        else:
            missing = "the chromium browser (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests need {missing} in CI")
        pytest.skip(f"{missing} is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def mpirun():
    """MPI's launcher (next to this Python first: pip's mpich puts it there) with mpi4py:
    skipped when either is absent, but a failure when CI=true."""
    import importlib.util
    import sys

    here = os.path.dirname(sys.executable)
    path = shutil.which("mpirun", path=here + os.pathsep + os.environ.get("PATH", ""))
    if path is None or importlib.util.find_spec("mpi4py") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mpirun and mpi4py are required in CI: pip install -e .[mpi]")
        pytest.skip("mpirun or mpi4py is not installed (pip install -e .[mpi])")
    return path
