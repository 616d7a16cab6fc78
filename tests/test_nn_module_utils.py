"""chainrule.nn.modules.utils against torch.nn.modules.utils, reached as a program reaches it
under ``chainrule run`` (its private helpers included)."""

import pytest

from chainrule.apps import torch_names

NAMES = ["_single", "_pair", "_triple", "_quadruple"]


@pytest.mark.parametrize("value", [3, (1, 2), [4, 5, 6]])
def test_ntuples_match_pytorch(torch, value):
    ours, theirs = torch_names.alias("torch.nn.modules.utils"), torch.nn.modules.utils
    for name in NAMES:
        assert getattr(ours, name)(value) == getattr(theirs, name)(value)
    assert ours._ntuple(5)(value) == theirs._ntuple(5)(value)


def test_helpers_match_pytorch(torch):
    ours, theirs = torch_names.alias("torch.nn.modules.utils"), torch.nn.modules.utils
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    for size in (4, [None, 3], [2, None, None]):
        defaults = [9, 8, 7, 6]
        assert ours._list_with_default(size, defaults) == theirs._list_with_default(size, defaults)
    with pytest.raises(ValueError):
        ours._list_with_default([1, 2], [3, 4])
    mine, ref = {"module.a": 1, "b": 2}, {"module.a": 1, "b": 2}
    ours.consume_prefix_in_state_dict_if_present(mine, "module.")
    theirs.consume_prefix_in_state_dict_if_present(ref, "module.")
    assert mine == ref
    with pytest.raises(AttributeError):
        ours._not_there  # noqa: B018
