"""The containers: Sequential, ModuleList and ModuleDict (indexing, slicing, editing,
forward), ParameterList and ParameterDict, registered as PyTorch registers them. Their reprs
are checked in test_nn_module.py."""

from collections import OrderedDict

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DTypeError


def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.Identity(), nn.Flatten(), nn.ReLU()
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and len(seq) == 3 and list(seq) == [a, b, c]
    part = seq[1:]
    assert isinstance(part, nn.Sequential) and list(part._modules) == ["1", "2"]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[1] is c
    seq.append(nn.Sigmoid()).extend([nn.SiLU()])
    assert [type(m).__name__ for m in seq] == ["Tanh", "ReLU", "Sigmoid", "SiLU"]
    named = nn.Sequential(OrderedDict([("first", a), ("second", c)]))
    assert named.first is a and [n for n, _ in named.named_children()] == ["first", "second"]
    with pytest.raises(IndexError, match=r"Sequential: index 9 is out of range for 4 modules"):
        seq[9]  # noqa: B018
    with pytest.raises(IndexError, match=r"Sequential: index -5 is out of range"):
        del seq[-5]


def test_sequential_forward_applies_in_order():
    seq = nn.Sequential(nn.Flatten(), nn.ReLU())
    out = seq(chainrule.tensor([[[-1.0, 2.0]], [[3.0, -4.0]]]))
    np.testing.assert_array_equal(out.numpy(), [[0.0, 2.0], [3.0, 0.0]])


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
    layers.append(nn.ReLU())
    layers += [nn.Tanh()]
    layers.insert(1, nn.Sigmoid())
    assert [type(m).__name__ for m in layers] == ["Linear", "Sigmoid", "Linear", "ReLU", "Tanh"]
    assert list(layers._modules) == ["0", "1", "2", "3", "4"]
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    layers[-1] = nn.SiLU()
    del layers[1]
    assert [type(m).__name__ for m in layers] == ["Linear", "Linear", "ReLU", "SiLU"]
    assert len(list(layers.parameters())) == 4
    with pytest.raises(DTypeError, match=r"ModuleList.extend: expected an iterable of modules"):
        layers.extend(nn.ReLU())
    with pytest.raises(IndexError, match=r"ModuleList: index 4 is out of range for 4 modules"):
        layers[4]  # noqa: B018


def test_module_dict():
    heads = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(heads) == ["b", "a"] and "a" in heads and len(heads) == 2
    heads.update([("c", nn.SiLU())])
    heads.update(nn.ModuleDict({"d": nn.Sigmoid()}))
    heads["a"] = nn.Identity()
    assert list(heads.keys()) == ["b", "a", "c", "d"]
    assert isinstance(heads.pop("c"), nn.SiLU) and list(heads) == ["b", "a", "d"]
    del heads["b"]
    assert [type(m).__name__ for m in heads.values()] == ["Identity", "Sigmoid"]
    with pytest.raises(KeyError, match=r"ModuleDict: no module named 'x'"):
        heads["x"]  # noqa: B018
    heads.clear()
    assert len(heads) == 0


def test_parameter_list_and_dict_register_like_torch(torch):
    def make(lib):
        outer = lib.nn.Module()
        outer.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])
        outer.pdict = lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(1))})
        outer.pdict["a"] = lib.zeros(2, 2)
        outer.plist.append(lib.ones(1))
        return outer

    ours, theirs = make(chainrule), make(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours.parameters())
    assert len(ours.plist) == 3 and list(ours.pdict) == ["b", "a"] and "a" in ours.pdict
    assert ours.pdict.pop("b").shape == (1,) and list(ours.pdict.keys()) == ["a"]
    ours.plist[0] = chainrule.zeros(4)
    assert ours.plist[0].shape == (4,) and ours.plist[-1].shape == (1,)
    with pytest.raises(KeyError, match="no parameter named 'z'"):
        ours.pdict["z"]
    with pytest.raises(DTypeError, match="ParameterList: expected a Parameter or Tensor"):
        ours.plist.append(3.0)
