"""The book builds: ``mkdocs build --strict`` succeeds, writes every figure the pages show,
and the API reference has an entry for every public name. (The pages' examples run as
doctests, collected from docs/ by the ordinary test run.)"""

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Each reference page and the module whose public names it must cover.
REFERENCE = {
    "chainrule": "chainrule",
    "nn": "chainrule.nn",
    "functional": "chainrule.nn.functional",
    "optim": "chainrule.optim",
    "func": "chainrule.func",
    "data": "chainrule.data",
    "linalg": "chainrule.linalg",
    "distributions": "chainrule.distributions",
}

#: The packages of the docs extra (pip install -e .[docs]), by import name.
DOCS_PACKAGES = ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_gen_files")


@pytest.fixture(scope="module")
def site(tmp_path_factory, dot_program) -> Path:
    """The built site: skipped when the docs extra is missing, but a failure when CI=true."""
    missing = [name for name in DOCS_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"building the docs needs {missing} in CI: pip install -e .[docs]")
        pytest.skip(f"{missing} not installed (pip install -e .[docs])")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-6000:]}"
    return out


def test_every_figure_a_page_shows_is_generated(site):
    pages = list((ROOT / "docs").rglob("*.md"))
    shown = {
        name for page in pages for name in re.findall(r"figures/([\w.-]+)\)", page.read_text())
    }
    assert len(shown) >= 16  # twelve for the chapters, one per milestone
    for name in sorted(shown):
        figure = site / "figures" / name
        assert figure.exists(), f"{name} is shown on a page but was not generated"
        data = figure.read_bytes()
        assert data.startswith(b"\x89PNG") if name.endswith(".png") else b"<svg" in data[:2000]


def test_every_generated_figure_is_shown_on_a_page(site):
    pages = " ".join(page.read_text() for page in (ROOT / "docs").rglob("*.md"))
    for figure in (site / "figures").iterdir():
        assert f"figures/{figure.name})" in pages, f"{figure.name} is generated but not shown"


def test_api_reference_covers_every_public_name(site):
    for page, module_name in REFERENCE.items():
        html = (site / "reference" / page / "index.html").read_text()
        anchors = set(re.findall(r'id="([\w.]+)"', html))
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None) or [
            name for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module_name
        ]  # fmt: skip
        missing = [
            name for name in names
            if not isinstance(getattr(module, name), types.ModuleType)
            and f"{module_name}.{name}" not in anchors
        ]  # fmt: skip
        assert not missing, f"reference/{page}.md does not document {missing}"


def test_doctests_in_docstrings_render_as_code(site):
    html = (site / "reference" / "nn" / "index.html").read_text()
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html  # a highlighted prompt
    assert "<blockquote>" not in html  # not Markdown quotes
