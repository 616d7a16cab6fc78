"""Cases for chainrule/ops/decompositions.py."""

CASES: dict = {}
