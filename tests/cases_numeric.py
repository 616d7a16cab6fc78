"""Cases for chainrule/ops/numeric.py."""

CASES: dict = {}
