"""nn.Module and the containers: registration, traversal order, modes, gradients, state dicts
and reprs, checked against what PyTorch does with the same structure."""

import copy
from collections import OrderedDict

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, DTypeError


def block_class(lib):
    """The same little structure in both libraries: a weight, buffers, two submodules."""

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(3))
            self.register_buffer("count", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)
            self.inner = lib.nn.Linear(3, 2)
            self.act = lib.nn.ReLU()

        def forward(self, x):
            return self.act(self.inner(x * self.scale))

    return Block


Block = block_class(chainrule)


def model(lib):
    block = Block() if lib is chainrule else block_class(lib)()
    return lib.nn.Sequential(block, lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))


@pytest.fixture
def both(torch):
    """(ours, theirs): the same model built in each library."""
    return model(chainrule), model(torch)


# Registration and traversal.


def test_names_and_orders_match_torch(both):
    ours, theirs = both
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [type(m).__name__ for m in ours.modules()][:3] == ["Sequential", "Block", "Linear"]


def test_assignment_registers_parameters_modules_but_not_plain_tensors():
    block = Block()
    block.plain = chainrule.ones(2)
    block.extra = nn.Parameter(chainrule.zeros(1))
    assert [n for n, _ in block.named_parameters(recurse=False)] == ["scale", "extra"]
    assert "plain" not in dict(block.state_dict())
    assert [n for n, _ in block.named_buffers()] == ["count", "scratch"]
    assert "scratch" not in block.state_dict()  # not persistent
    del block.extra
    assert [n for n, _ in block.named_parameters(recurse=False)] == ["scale"]
    block.inner = None
    assert [n for n, _ in block.named_children()] == ["act"]


def test_shared_parameters_are_listed_once():
    first = nn.Linear(2, 2)
    tied = nn.Sequential(first, nn.Linear(2, 2))
    tied[1].weight = first.weight
    assert len(list(tied.parameters())) == 3
    assert list(tied.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    repeated = nn.Sequential(first, first)
    assert len(list(repeated.modules())) == 2 and len(list(repeated.children())) == 1


def test_registration_errors():
    block = Block()
    with pytest.raises(DTypeError, match=r"Block: cannot assign a Tensor to parameter 'scale'"):
        block.scale = chainrule.ones(3)
    with pytest.raises(DTypeError, match=r"register_buffer: 'b' must be a Tensor or None"):
        block.register_buffer("b", [1.0])
    with pytest.raises(DomainError, match=r"invalid name 'a.b'"):
        block.register_parameter("a.b", None)
    with pytest.raises(DomainError, match=r"Block already has an attribute 'forward'"):
        block.register_buffer("forward", chainrule.zeros(1))
    with pytest.raises(DTypeError, match=r"'w' must be a Parameter or None, got Tensor; wrap"):
        block.register_parameter("w", chainrule.ones(1))

    class Forgetful(nn.Module):
        def __init__(self):
            self.weight = nn.Parameter(chainrule.ones(1))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Forgetful()
    with pytest.raises(AttributeError, match=r"'Block' object has no attribute 'missing'"):
        block.missing  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"Module: forward is not defined"):
        nn.Module()(1)


def test_parameter_shares_memory_and_requires_grad():
    data = chainrule.zeros(2)
    param = nn.Parameter(data)
    assert param.requires_grad and param.data is data.data
    assert repr(param) == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"


# Modes and gradients.


def test_train_and_eval_reach_every_submodule():
    net = model(chainrule)
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net[0].train()
    assert net[0].inner.training and not net.training
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(DTypeError, match=r"train: mode must be a bool"):
        net.train("no")


def test_zero_grad_and_requires_grad():
    net = model(chainrule)
    net(chainrule.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not p.grad.data.any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first_and_to_converts_in_place():
    net = model(chainrule)
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Block", "Linear", "BatchNorm1d", "Sequential"]
    weight = net[1].weight
    net.double()
    assert net[1].weight is weight and weight.dtype == np.float64
    assert net[2].running_mean.dtype == np.float64
    assert net[2].num_batches_tracked.dtype == np.int64  # integers stay


def test_deepcopy_gives_independent_weights():
    net = model(chainrule)
    twin = copy.deepcopy(net)
    assert list(twin.state_dict()) == list(net.state_dict())
    with chainrule.no_grad():
        twin[1].weight.fill_(0.0)
    assert net[1].weight.data.any()


# State dicts.


def test_state_dict_shares_memory_and_round_trips(both):
    ours, theirs = both
    state = ours.state_dict()
    assert state["1.weight"].data is ours[1].weight.data and not state["1.weight"].requires_grad
    ours.load_state_dict(theirs.state_dict())  # PyTorch tensors load as they are
    for mine, expected in zip(ours.state_dict().values(), theirs.state_dict().values()):
        np.testing.assert_array_equal(mine.numpy(), expected.numpy())
    fresh = model(chainrule)
    fresh.load_state_dict(ours.state_dict())
    np.testing.assert_array_equal(fresh[0].inner.weight.data, ours[0].inner.weight.data)


def _weights(net):
    return {k: v.numpy().copy() for k, v in net.state_dict().items()}


def _unchanged(net, before):
    return all(np.array_equal(v.numpy(), before[k]) for k, v in net.state_dict().items())


def test_load_state_dict_strict_errors_leave_the_model_unchanged():
    net = model(chainrule)
    before = _weights(net)
    state = {k: v.numpy() * 0 + 7 for k, v in net.state_dict().items()}
    del state["1.bias"]
    state["1.extra"] = np.zeros(1)
    with pytest.raises(nn.StateDictError, match=r"(?s)Missing key\(s\) in state_dict: '1.bias'"
                                                r".*Unexpected key\(s\) in state_dict: "
                                                r"'1.extra'"):  # fmt: skip
        net.load_state_dict(state)
    assert _unchanged(net, before)
    result = net.load_state_dict(state, strict=False)
    assert result == nn.IncompatibleKeys(missing_keys=["1.bias"], unexpected_keys=["1.extra"])
    assert np.all(net[1].weight.data == 7)


class Unreadable:
    """Claims to be array-like but refuses (as a PyTorch tensor that requires grad does)."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("call detach() first")


def test_load_state_dict_shape_mismatch_is_an_error_even_when_not_strict():
    net = model(chainrule)
    before = _weights(net)
    state = dict(net.state_dict())
    state["0.scale"] = chainrule.zeros(3)
    state["1.weight"] = chainrule.zeros(3, 2)
    with pytest.raises(nn.StateDictError, match=r"size mismatch for '1.weight': the checkpoint "
                                                r"has shape \(3, 2\), the current model "
                                                r"\(2, 2\)"):  # fmt: skip
        net.load_state_dict(state, strict=False)
    assert _unchanged(net, before)  # 0.scale was not written either
    with pytest.raises(nn.StateDictError, match=r"'0.scale' is a builtins.str"):
        net.load_state_dict({**state, "0.scale": "zeros"}, strict=False)
    with pytest.raises(nn.StateDictError, match=r"'0.scale' cannot be read as an array"):
        net.load_state_dict({**state, "0.scale": Unreadable()}, strict=False)
    with pytest.raises(DTypeError, match=r"load_state_dict: expected a mapping"):
        net.load_state_dict([1, 2])


# Printing.


def test_repr_matches_torch(both, torch):
    ours, theirs = both
    assert repr(ours) == repr(theirs)
    stack = [chainrule.nn.Linear(2, 2)] * 3 + [chainrule.nn.ReLU()]
    their_stack = [torch.nn.Linear(2, 2)] * 3 + [torch.nn.ReLU()]
    assert repr(nn.ModuleList(stack)) == repr(torch.nn.ModuleList(their_stack))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    their_dict = torch.nn.ModuleDict({"a": torch.nn.ReLU()})
    assert repr(nn.ModuleDict({"a": nn.ReLU()})) == repr(their_dict)
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())


# Containers.


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


def test_identity_and_flatten():
    x = chainrule.zeros(2, 3, 4, 5)
    assert nn.Identity(1, key=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    with pytest.raises(DomainError, match=r"Flatten: start_dim 2 comes after end_dim 1"):
        nn.Flatten(2, 1)(x)


def test_module_to_takes_pytorchs_forms_and_refuses_a_gpu():
    layer = chainrule.nn.Linear(2, 3)
    assert layer.to("cpu") is layer and layer.cpu() is layer
    assert layer.to("cpu", chainrule.float64).weight.dtype == chainrule.float64
    assert layer.to(chainrule.zeros(1)).weight.dtype == chainrule.float32
    assert layer.to(device="cpu", dtype="float64").bias.dtype == chainrule.float64
    with pytest.raises(chainrule.DomainError, match="'cuda' is not available"):
        layer.to("cuda")
    with pytest.raises(chainrule.DomainError, match="'cuda' is not available"):
        layer.cuda()
    draws = [chainrule.Generator().manual_seed(3) for _ in range(2)]
    seeded = [nn.init.normal_(chainrule.empty(4), generator=g) for g in draws]
    assert seeded[0].tolist() == seeded[1].tolist()


def test_a_detached_parameter_is_a_plain_tensor_as_in_pytorch():
    weight = chainrule.nn.Parameter(chainrule.ones(2))
    detached = weight.detach()
    assert type(detached) is chainrule.Tensor and not detached.requires_grad
    assert np.shares_memory(detached.data, weight.data)
    layer = chainrule.nn.Linear(2, 1)
    layer.frozen = layer.weight.detach()
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
