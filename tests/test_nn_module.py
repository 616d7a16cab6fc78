"""nn.Module: registration, traversal order, modes, gradients, hooks, buffers, state dicts
and reprs, checked against what PyTorch does with the same structure. The containers' own
behaviour is tested in test_nn_container.py."""

import copy

import numpy as np
import pytest

import chainrule
import chainrule.nn.functional as F
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
    assert param.requires_grad and param.detach().numpy() is data.detach().numpy()
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
    assert all(not p.grad.detach().numpy().any() for p in net.parameters())
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
    assert net[1].weight.detach().numpy().any()


# State dicts.


def test_state_dict_shares_memory_and_round_trips(both):
    ours, theirs = both
    state = ours.state_dict()
    assert (
        state["1.weight"].detach().numpy() is ours[1].weight.detach().numpy()
        and not state["1.weight"].requires_grad
    )
    ours.load_state_dict(theirs.state_dict())  # PyTorch tensors load as they are
    for mine, expected in zip(ours.state_dict().values(), theirs.state_dict().values()):
        np.testing.assert_array_equal(mine.numpy(), expected.numpy())
    fresh = model(chainrule)
    fresh.load_state_dict(ours.state_dict())
    np.testing.assert_array_equal(
        fresh[0].inner.weight.detach().numpy(), ours[0].inner.weight.detach().numpy()
    )


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
    assert np.all(net[1].weight.detach().numpy() == 7)


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


# Hooks and buffers.


def test_forward_hooks_change_inputs_and_outputs_and_are_removable():
    layer = nn.Linear(2, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = layer.register_forward_hook(lambda m, args, out: calls.append(args[0]) or out * 2)
    x = chainrule.ones(1, 2)
    np.testing.assert_allclose(layer(x).detach().numpy(), 2 * layer.bias.detach().numpy()[None])
    np.testing.assert_array_equal(
        calls[0].detach().numpy(), [[0.0, 0.0]]
    )  # the hook saw the new args
    pre.remove(), post.remove()
    pre.remove()  # a second remove does nothing
    np.testing.assert_allclose(
        layer(x).detach().numpy(), F.linear(x, layer.weight, layer.bias).detach().numpy()
    )


def test_forward_hooks_with_kwargs_and_prepend_run_in_order():
    order = []
    layer = nn.Identity()
    layer.register_forward_hook(lambda m, a, out: order.append("second"))
    layer.register_forward_hook(lambda m, a, out: order.append("first"), prepend=True)
    layer.register_forward_pre_hook(lambda m, args, kwargs: (args, kwargs), with_kwargs=True)
    layer.register_forward_hook(lambda m, a, kw, out: out + 1, with_kwargs=True)
    assert layer(chainrule.tensor([1.0])).item() == 2.0
    assert order == ["first", "second"]
    with pytest.raises(DTypeError, match="register_forward_hook: the hook must be callable"):
        layer.register_forward_hook("not a function")


def test_non_persistent_buffers_stay_out_of_state_dict_and_load_strictly(torch):
    def make(lib):
        module = lib.nn.Linear(2, 2)
        module.register_buffer("mask", lib.ones(2), persistent=False)
        module.register_buffer("scale", lib.ones(2))
        return module

    ours, theirs = make(chainrule), make(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias", "scale"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    state = {k: v * 0 + 3 for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    np.testing.assert_array_equal(ours.scale.detach().numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(ours.mask.detach().numpy(), [1.0, 1.0])
    missing = ours.load_state_dict({"weight": state["weight"]}, strict=False)
    assert missing.missing_keys == ["bias", "scale"]


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
    assert np.shares_memory(detached.detach().numpy(), weight.detach().numpy())
    layer = chainrule.nn.Linear(2, 1)
    layer.frozen = layer.weight.detach()
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
