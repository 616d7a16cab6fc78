"""Cases for chainrule/ops/scan.py."""

CASES: dict = {}
