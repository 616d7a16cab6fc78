"""MkDocs hook: show the docstrings' doctest examples as code in the API reference.

chainrule's docstrings end with ``>>>`` examples in plain text (the test suite runs them).
Markdown would read ``>>>`` as nested quotes and ``[1, 2][0]`` as a link, so this hook adds a
Markdown preprocessor that fences each run of doctest lines as ``pycon`` code. MkDocs and
Markdown are imported inside the hook: pytest imports this file too, without the docs extra.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s*(```|~~~)")
PROMPT = re.compile(r"^(\s*)>>>( |$)")


def fence_doctests(lines: list[str]) -> list[str]:
    """``lines`` with each doctest (a ``>>>`` line up to the next blank line) outside fenced
    blocks wrapped in a ``pycon`` fence."""
    out: list[str] = []
    fence = None  # the opening fence while inside a fenced block
    i = 0
    while i < len(lines):
        line = lines[i]
        match = FENCE.match(line)
        if match and (fence is None or match.group(1) == fence):
            fence = match.group(1) if fence is None else None
        prompt = PROMPT.match(line) if fence is None else None
        if prompt is None:
            out.append(line)
            i += 1
            continue
        indent = prompt.group(1)
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        out += ["", f"{indent}```pycon", *block, f"{indent}```", ""]
    return out


def on_config(config):
    """Add the preprocessor to every Markdown conversion, mkdocstrings' included."""
    from markdown import Extension
    from markdown.preprocessors import Preprocessor

    class DoctestFences(Preprocessor):
        def run(self, lines: list[str]) -> list[str]:
            return fence_doctests(lines)

    class DoctestExtension(Extension):
        def extendMarkdown(self, md) -> None:  # noqa: N802 (Markdown's name)
            # Before the fenced-code preprocessor (priority 25), so it sees the new fences.
            md.preprocessors.register(DoctestFences(md), "doctest_fences", 30)

    config.markdown_extensions.append(DoctestExtension())
    return config


# What mkdocs.plugins.event_priority(100) sets: run before mkdocstrings copies the extensions.
on_config.mkdocs_priority = 100
