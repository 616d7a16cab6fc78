"""chainrule's benchmarks: each module prints a table of ratios measured in one run.

`python -m benchmarks` runs the suite (W1 to W9 against PyTorch, HIPS autograd, MyGrad,
micrograd and hand-written floors, and W10, the corpus of tests/programs/ run as written; see
docs/guides/benchmarks.md); `forward_vs_reverse`, `checkpoint_memory` and `optim_group` are
smaller studies run on their own with `python -m benchmarks.<name>`.
"""
