"""chainrule's benchmarks: each module prints a table of ratios measured in one run.

`python -m benchmarks` runs the suite (W1 to W8 against PyTorch, HIPS autograd, MyGrad,
micrograd and hand-written floors; see docs/guides/benchmarks.md); `forward_vs_reverse` and
`checkpoint_memory` are smaller studies run on their own with `python -m benchmarks.<name>`.
"""
