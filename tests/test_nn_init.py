"""The initialisers of `chainrule.nn.init`: eye_, orthogonal_ and trunc_normal_, and that
chainrule.manual_seed makes initialisation reproducible."""

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DomainError


def test_init_is_seeded():
    chainrule.manual_seed(3)
    first = nn.Linear(4, 4).weight.detach().numpy().copy()
    chainrule.manual_seed(3)
    np.testing.assert_array_equal(nn.Linear(4, 4).weight.data, first)


def test_eye_orthogonal_and_trunc_normal():
    np.testing.assert_array_equal(nn.init.eye_(chainrule.zeros(2, 3)).data, np.eye(2, 3))
    for shape in ((3, 5), (5, 3), (4, 2, 2)):
        w = nn.init.orthogonal_(chainrule.zeros(*shape), gain=2.0).data.reshape(shape[0], -1)
        small = min(w.shape)
        gram = w @ w.T if w.shape[0] == small else w.T @ w
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    chainrule.manual_seed(0)
    w = nn.init.trunc_normal_(chainrule.zeros(20000), mean=1.0, std=2.0, a=0.0, b=1.5).data
    assert w.min() >= 0.0 and w.max() <= 1.5
    # The truncated normal's mean: 1 + 2 (phi(-0.5) - phi(0.25)) / (Phi(0.25) - Phi(-0.5)).
    assert abs(w.mean() - 0.7615) < 0.02
    with pytest.raises(DomainError, match="eye_: needs a 2-D tensor"):
        nn.init.eye_(chainrule.zeros(2, 2, 2))
