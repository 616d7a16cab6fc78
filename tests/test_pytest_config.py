"""The pytest configuration in pyproject.toml: every invocation ends with its count line
("3 passed in 0.1s"), even under ``-q`` (an ``-q`` in ``addopts`` would make that ``-qq``,
which prints no count line)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pytest_q_prints_the_count_line(tmp_path):
    (tmp_path / "test_two.py").write_text(
        "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("2 passed"), result.stdout
