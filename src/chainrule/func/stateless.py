"""Modules as functions of their parameters, torch.func's way: `functional_call` runs a module
with other tensors in place of its parameters and buffers, `stack_module_state` stacks the
states of copies of one model (for vmap over models), `replace_all_batch_norm_modules_` stops
BatchNorm layers from keeping running statistics (which vmap cannot update)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..ops.shape import stack


def _slots(module: Any, prefix: str = "") -> Iterator[tuple[str, dict, str]]:
    """(dotted name, registry dict, key) for every parameter and buffer slot, shared ones
    under each of their names."""
    for kind in ("_parameters", "_buffers"):
        for key in module.__dict__[kind]:
            yield prefix + key, module.__dict__[kind], key
    for name, child in module.__dict__["_modules"].items():
        if child is not None:
            yield from _slots(child, f"{prefix}{name}.")


def _merged(dicts: Mapping | Sequence[Mapping]) -> dict[str, Tensor]:
    if isinstance(dicts, Mapping):
        return dict(dicts)
    merged: dict[str, Tensor] = {}
    for d in dicts:
        repeated = sorted(set(merged) & set(d))
        if repeated:
            raise DomainError(
                f"functional_call: {repeated} appear in more than one of the dicts; give each "
                "name once"
            )
        merged.update(d)
    return merged


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts``
    (dotted names, as ``named_parameters()`` gives them) standing in for its parameters and
    buffers; the module's own are back afterwards. Gradients flow to the given tensors.

    ``args`` that is not a tuple is the one positional argument. With ``tie_weights`` a
    tensor shared under several names is replaced under all of them when one is given. With
    ``strict`` every parameter and buffer must be given, and nothing else.

    >>> import chainrule
    >>> layer = chainrule.nn.Linear(2, 1)
    >>> w = chainrule.tensor([[1.0, 2.0]], requires_grad=True)
    >>> out = functional_call(layer, {"weight": w, "bias": chainrule.zeros(1)},
    ...                       (chainrule.tensor([[3.0, 4.0]]),))
    >>> out.backward(); out, w.grad
    (tensor([[11.]], grad_fn=<LinearBackward>), tensor([[3., 4.]]))
    """
    given = _merged(parameter_and_buffer_dicts)
    slots: dict[str, list[tuple[dict, str]]] = {}
    by_tensor: dict[int, list[str]] = {}
    for name, registry, key in _slots(module):
        slots.setdefault(name, []).append((registry, key))
        if registry[key] is not None:
            by_tensor.setdefault(id(registry[key]), []).append(name)
    unexpected = sorted(set(given) - set(slots))
    if unexpected:
        raise DomainError(
            f"functional_call: {type(module).__name__} has no parameter or buffer named "
            f"{unexpected}"
        )
    if strict:
        held = {name for name, places in slots.items() if places[0][0][places[0][1]] is not None}
        missing = sorted(held - set(given))
        if missing:
            raise DomainError(f"functional_call: strict=True and {missing} were not given")
    replacements = dict(given)
    if tie_weights:
        for name, value in given.items():
            for registry, key in slots[name]:
                for tied in by_tensor.get(id(registry[key]), ()):
                    replacements.setdefault(tied, value)
    originals = []
    try:
        for name, value in replacements.items():
            if value is not None and not isinstance(value, Tensor):
                raise DTypeError(
                    f"functional_call: the value for {name!r} is a {type(value).__name__}, "
                    "not a Tensor"
                )
            for registry, key in slots[name]:
                originals.append((registry, key, registry[key]))
                registry[key] = value  # written directly: a plain Tensor may stand for a Parameter
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for registry, key, value in reversed(originals):
            registry[key] = value


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: for each name, the tensors of all ``models`` stacked along a new
    first dimension, as new leaves (parameters require grad when the models' do). With
    `functional_call` and `chainrule.func.vmap` this runs an ensemble in one call.

    >>> import chainrule
    >>> params, buffers = stack_module_state([chainrule.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    ((4, 2, 3), True, {})
    """
    models = list(models)
    if not models:
        raise DomainError("stack_module_state: got no models; give at least one")
    if len({m.training for m in models}) != 1:
        raise DomainError(
            "stack_module_state: the models must all be in training mode or all in eval mode"
        )

    def gather(kind: str) -> dict[str, Tensor]:
        named = [dict(getattr(m, f"named_{kind}")()) for m in models]
        names = list(named[0])
        for i, other in enumerate(named[1:], start=1):
            if list(other) != names:
                raise DomainError(
                    f"stack_module_state: model {i} has {kind} {list(other)}, model 0 {names}; "
                    "the models must have the same structure"
                )
        stacked = {}
        for name in names:
            shapes = {t.shape for t in (n[name] for n in named)}
            if len(shapes) != 1:
                raise ShapeError(
                    f"stack_module_state: {name!r} has different shapes across models: "
                    + ", ".join(fmt_shape(s) for s in sorted(shapes))
                )
            tensors = [n[name].detach() for n in named]
            grad = kind == "parameters" and all(n[name].requires_grad for n in named)
            stacked[name] = stack(tensors).detach().requires_grad_(grad)
        return stacked

    return gather("parameters"), gather("buffers")


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Make every BatchNorm in ``root`` use batch statistics only, in place: its running mean,
    variance and batch count become None and ``track_running_stats`` False (vmap cannot update
    one running buffer from many examples). Returns ``root``.

    >>> import chainrule
    >>> net = replace_all_batch_norm_modules_(chainrule.nn.Sequential(chainrule.nn.BatchNorm1d(3)))
    >>> net[0].running_mean is None, net[0].track_running_stats
    (True, False)
    """
    # The nn package stands above func (its layers run ops transformed here), so the BatchNorm
    # classes are looked up when called rather than imported.
    batchnorm = importlib.import_module("chainrule.nn.modules.batchnorm")
    instancenorm = importlib.import_module("chainrule.nn.modules.instancenorm")
    for module in root.modules():
        if isinstance(module, batchnorm._BatchNorm) and not isinstance(
            module, instancenorm._InstanceNorm
        ):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
