"""chainrule's benchmarks: each module prints a table of ratios measured in one run."""
