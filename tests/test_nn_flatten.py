"""Flatten (and Identity): shapes and errors. Unflatten is a row of the table in
test_nn_surface.py."""

import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DomainError


def test_identity_and_flatten():
    x = chainrule.zeros(2, 3, 4, 5)
    assert nn.Identity(1, key=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    with pytest.raises(DomainError, match=r"Flatten: start_dim 2 comes after end_dim 1"):
        nn.Flatten(2, 1)(x)
