"""PyTorch's ``torch.nn.modules.utils``: the small helpers that turn an int or a sequence into
an n-tuple (`_pair` for a 2-d kernel size...), which programs import to write their own layers,
and `consume_prefix_in_state_dict_if_present`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function that returns an iterable as a tuple and repeats anything else ``n`` times.

    >>> _ntuple(3)(5), _ntuple(3)([1, 2])
    ((5, 5, 5), (1, 2))
    """

    def parse(x: Any) -> tuple:
        return tuple(x) if isinstance(x, Iterable) else (x,) * n

    parse.__name__ = parse.__qualname__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """``t`` last element first, each element ``n`` times: a layer's per-dimension padding
    as ``F.pad`` takes it.

    >>> _reverse_repeat_tuple((1, 2), 2)
    (2, 2, 1, 1)
    """
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: int | list, defaults: list[int]) -> int | list[int]:
    """An adaptive pooling output size with each None taken from the matching trailing
    entry of ``defaults`` (the input's sizes); an int as it is.

    >>> _list_with_default([None, 3], [8, 5, 7])
    [5, 3]
    """
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(
            f"_list_with_default: the input needs at least {len(out_size) + 1} dimensions, "
            f"got {len(defaults)}"
        )
    tail = defaults[len(defaults) - len(out_size) :]
    return [default if size is None else size for size, default in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(
    state_dict: MutableMapping[str, Any], prefix: str
) -> None:
    """Strip ``prefix`` from every key of ``state_dict`` that starts with it, in place (a
    checkpoint saved from a wrapped model, keys ``"module.…"``, loads into the bare model).

    >>> state = {"module.weight": 1, "bias": 2}
    >>> consume_prefix_in_state_dict_if_present(state, "module.")
    >>> sorted(state)
    ['bias', 'weight']
    """
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
