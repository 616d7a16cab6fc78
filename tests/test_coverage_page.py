"""docs/pytorch-coverage.md is current: regenerating it from the installed torch gives the same
page, so every name it marks present exists in chainrule and every missing one is listed."""

import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def test_the_coverage_page_matches_chainrule_and_torch(torch):
    sys.path.insert(0, str(TOOLS))
    try:
        import pytorch_coverage
    finally:
        sys.path.remove(str(TOOLS))
    rows = pytorch_coverage.survey()
    page = pytorch_coverage.PAGE.read_text()
    assert page == pytorch_coverage.render(rows), "stale: run python tools/pytorch_coverage.py"
    for row in rows:
        assert not set(row["present"]) & set(row["missing"])
