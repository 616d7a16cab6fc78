"""The lookup tables: Embedding's initialisation and max_norm, embedding's gradient over
repeated and padding indices, one_hot's dtype. More embedding and one_hot cases are rows of the
tables in test_nn_layers.py, test_nn_functional.py and test_nn_surface.py."""

import numpy as np

import chainrule
import chainrule.nn.functional as F
from chainrule import nn


def test_embedding_init():
    chainrule.manual_seed(2)
    table = nn.Embedding(1000, 50, padding_idx=-1)
    assert table.padding_idx == 999
    assert not table.weight.data[999].any()
    assert abs(table.weight.data.mean()) < 0.01 and abs(table.weight.data.std() - 1) < 0.01


def test_embedding_max_norm_renormalises_the_rows_it_looks_up():
    table = nn.Embedding(4, 2, max_norm=1.0)
    with chainrule.no_grad():
        table.weight.copy_(chainrule.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]]))
    table(chainrule.tensor([0, 1]))
    norms = np.linalg.norm(table.weight.data, axis=1)
    np.testing.assert_allclose(norms[:2], [1.0, 0.5], rtol=1e-6)
    assert norms[2] == 10.0  # not looked up: unchanged


def test_one_hot_is_int64():
    assert F.one_hot(chainrule.tensor([0, 2])).dtype == np.int64


def test_embedding_gradient_accumulates_repeats_and_skips_padding():
    weight = chainrule.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    out = F.embedding(chainrule.tensor([2, 0, 2, 2]), weight, padding_idx=0)
    np.testing.assert_array_equal(out.data[1], [0.0, 1.0, 2.0])  # looked up as usual
    out.sum().backward()
    np.testing.assert_array_equal(weight.grad.data.sum(axis=1), [0.0, 0.0, 9.0, 0.0])
