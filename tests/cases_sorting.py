"""Cases for chainrule/ops/sorting.py."""

CASES: dict = {}
