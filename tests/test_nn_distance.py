"""pdist against PyTorch, gradients included. The other distances (normalize,
cosine_similarity, pairwise_distance and their modules) are rows of the tables in
test_nn_surface.py."""

import numpy as np
from nn_checks import check_with_weights as _check

import chainrule.nn.functional as F

RNG = np.random.default_rng(0)


def test_pdist_gradient_matches_pytorch_including_repeated_rows(torch):
    x = RNG.normal(size=(5, 3))
    x[3] = x[1]
    for p in (2.0, 1.0, 3.0):
        _check(torch, lambda a, p=p: F.pdist(a, p),
               lambda a, p=p: torch.nn.functional.pdist(a, p), x)  # fmt: skip
