"""Cases for chainrule/ops/scatter.py."""

CASES: dict = {}
