"""The Fold and Unfold modules against PyTorch. The unfold and fold rows themselves
(chainrule.ops.conv) are tested in test_conv.py."""

import numpy as np
from nn_checks import check_first_output as _check

from chainrule import nn


def test_fold_and_unfold_layers_match_pytorch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6))
    unfold = (nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
              torch.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))  # fmt: skip
    assert repr(unfold[0]) == repr(unfold[1])
    _check(torch, *unfold, [x])
    columns = unfold[1](torch.tensor(x)).numpy()
    fold = (nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
            torch.nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))  # fmt: skip
    assert repr(fold[0]) == repr(fold[1])
    _check(torch, *fold, [columns])
