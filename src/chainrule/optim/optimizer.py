"""`Optimizer`, the base of every optimizer (parameter groups, per-parameter state, state dicts),
and `swap_in_optimizer_params_and_state`. Each optimizer is in the module of its name
(`optim.sgd`, `optim.rmsprop`, ...); the Adam family shares `optim.adam`.

Each update works on the parameters' NumPy arrays in place, in their own dtype, one array
operation per formula line; parameters whose ``.grad`` is None are skipped.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import enable_grad
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..nn.modules.module import zero_grads
from ..observe import replayed_whole

#: What an optimizer takes as ``params``: tensors, dicts (one group each) or (name, tensor) pairs.
Params = Iterable[Tensor] | Iterable[dict] | Iterable[tuple[str, Tensor]]


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start += weight * (end - start), in place, rounded as PyTorch's lerp_ kernel does."""
    if weight < 0.5:
        step = end - start
        step *= weight
        start += step
    else:
        start[...] = end - (end - start) * (1 - weight)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of parameters and hyperparameters) and
    ``state`` (a dict per parameter). Subclasses define ``_update``.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs (``named_parameters()``;
    the names go to ``group["param_names"]``), or of dicts each making one group whose missing
    hyperparameters come from ``defaults``:

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> a, b = chainrule.zeros(2, requires_grad=True), chainrule.zeros(3, requires_grad=True)
    >>> opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1)
    >>> [group["lr"] for group in opt.param_groups]
    [0.1, 0.01]
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise DTypeError(
                f"{self._name}: params must be an iterable of Tensors or of dicts, got a single "
                "Tensor; pass [tensor]"
            )
        if isinstance(params, (set, frozenset)):
            raise DTypeError(
                f"{self._name}: parameters must be given in a fixed order (a list), not a set"
            )
        groups = list(params)
        if not groups:
            raise DomainError(f"{self._name}: got an empty parameter list")
        if not isinstance(groups[0], Mapping):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    @property
    def _name(self) -> str:
        return type(self).__name__

    def add_param_group(self, param_group: Mapping[str, Any]) -> None:
        """Add a group of parameters, with hyperparameters defaulting to the optimizer's."""
        if not isinstance(param_group, Mapping) or "params" not in param_group:
            raise DTypeError(
                f"{self._name}: a parameter group must be a dict with a 'params' entry, got "
                f"{type(param_group).__name__}"
            )
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise DTypeError(
                f"{self._name}: parameters must be given in a fixed order (a list), not a set"
            )
        params = list(params)
        if params and all(isinstance(item, tuple) and len(item) == 2 for item in params):
            group["param_names"] = [name for name, _ in params]
            params = [param for _, param in params]
        group["params"] = params
        for i, param in enumerate(params):
            if not isinstance(param, Tensor):
                raise DTypeError(
                    f"{self._name}: parameter {i} of a group is a {type(param).__name__}, "
                    "not a Tensor"
                )
            if not param.is_leaf:
                raise DomainError(
                    f"{self._name}: parameter {i} of a group is not a leaf tensor (it has a "
                    "grad_fn); an optimizer can only change leaves"
                )
        if len({id(p) for p in params}) != len(params):
            raise DomainError(f"{self._name}: a parameter group lists the same tensor twice")
        taken = {id(p) for other in self.param_groups for p in other["params"]}
        if any(id(p) in taken for p in params):
            raise DomainError(f"{self._name}: some parameters appear in more than one group")
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Raise if a hyperparameter is out of range (subclasses add their own checks)."""
        self._check_non_negative(group, "lr")

    def _check_non_negative(self, group: dict[str, Any], *names: str) -> None:
        for name in names:
            if not group[name] >= 0:
                raise DomainError(f"{self._name}: invalid {name} {group[name]!r}; it must be >= 0")

    def _check_betas(self, group: dict[str, Any]) -> None:
        betas = group["betas"]
        if len(betas) != 2 or not all(0.0 <= beta < 1.0 for beta in betas):
            raise DomainError(f"{self._name}: invalid betas {betas!r}; each must be in [0, 1)")

    @replayed_whole
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: to None (default) or to zeros."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    @replayed_whole
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given.

        The closure (which recomputes the loss and calls backward) runs with grad enabled.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        step = f"{self._name}.step"
        state = self.state
        for group in self.param_groups:
            if self._update_together(group):
                for param in group["params"]:
                    param._version_counter.bump(step)
                continue
            for param in group["params"]:
                if param.grad is None:
                    continue
                g = param.grad._array
                if group.get("maximize"):  # ascend: every update rule then sees -g
                    g = -g
                self._update(param._array, g, state[param], group)
                # Changing the array in place is an in-place op: graphs that saved it must know.
                param._version_counter.bump(step)
        return loss

    def _update_together(self, group: dict) -> bool:
        """Update every parameter of ``group`` at once, when the optimizer can (Adam and
        AdamW, where every parameter has a gradient); True if it did. Otherwise `step`
        calls `_update` per parameter."""
        return False

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        """Update the parameter array ``x`` in place from its gradient ``g`` (already negated
        when the group has ``maximize``)."""
        raise NotImplementedError(f"{self._name}: define _update (or override step)")

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters numbered.

        Parameters are numbered in group order, as in PyTorch. State tensors are shared, not
        copied: save them (`chainrule.save`) or deep-copy them to keep a snapshot.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {
            index[id(param)]: dict(values)
            for param, values in self.state.items()
            if id(param) in index
        }
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore state and hyperparameters from `state_dict` (copies the arrays).

        Everything is checked before anything changes: the groups must have the same sizes,
        and each state array the shape of its parameter.
        """
        if not isinstance(state_dict, Mapping) or not {"state", "param_groups"} <= set(state_dict):
            raise DTypeError(
                f"{self._name}.load_state_dict: expected a dict with 'state' and 'param_groups', "
                f"as state_dict() returns"
            )
        saved_groups = list(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise DomainError(
                f"{self._name}.load_state_dict: the state dict has {len(saved_groups)} parameter "
                f"groups, this optimizer {len(self.param_groups)}"
            )
        by_index = {}
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise DomainError(
                    f"{self._name}.load_state_dict: group {i} has {len(saved['params'])} "
                    f"parameters in the state dict, {len(group['params'])} in this optimizer"
                )
            by_index.update(zip((int(k) for k in saved["params"]), group["params"]))
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for key, values in state_dict["state"].items():
            if int(key) not in by_index:
                raise DomainError(
                    f"{self._name}.load_state_dict: state for parameter {key}, which no group has"
                )
            param = by_index[int(key)]
            state[param] = {
                name: self._load_value(value, param, name, key) for name, value in values.items()
            }
        self.state = state
        self.param_groups = [
            {**self.defaults, **saved, "params": group["params"]}
            for saved, group in zip(saved_groups, self.param_groups)
        ]

    #: State entries that are one number per parameter (PyTorch keeps them as 0-d tensors).
    _scalar_state: tuple[str, ...] = ()

    def _load_value(self, value: Any, param: Tensor, name: str, key: Any) -> Any:
        if not isinstance(value, (Tensor, np.ndarray)):
            return value
        array = np.array(value._array if isinstance(value, Tensor) else value)
        if name == "step":
            return int(array)
        if name in self._scalar_state:
            return float(array)
        if array.shape != param.shape:
            raise ShapeError(
                f"{self._name}.load_state_dict: state {name!r} of parameter {key} has shape "
                f"{fmt_shape(array.shape)}, the parameter {fmt_shape(param.shape)}"
            )
        if array.dtype.kind == "f":
            array = array.astype(param.dtype)
        return Tensor._make(array)

    def __repr__(self) -> str:
        lines = [f"{self._name} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"


def _zeros(x: np.ndarray) -> Tensor:
    return Tensor._make(np.zeros_like(x))


def implementation_options(name: str, differentiable: bool, **switches: Any) -> dict[str, Any]:
    """PyTorch's implementation switches, kept in each group as PyTorch keeps them.

    ``foreach``, ``fused`` and ``capturable`` choose kernels and devices in PyTorch; the update
    is the same here whatever they say. ``differentiable=True`` (autograd through ``step``)
    is refused rather than ignored.
    """
    if differentiable:
        raise DomainError(
            f"{name}: differentiable=True (recording the update for autograd) is not supported; "
            "steps change the parameters' arrays in place"
        )
    return {**switches, "differentiable": False}


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer,
    swapin_parameters: Mapping[str, Tensor],
    swapin_optim_state: Mapping[str, Any],
) -> Iterator[None]:
    """Within the block, ``optimizer`` steps ``swapin_parameters`` (in the order of its groups'
    parameters) with the state and hyperparameters of ``swapin_optim_state`` (a dict shaped as
    `Optimizer.state_dict` returns); on exit its own parameters, state and groups come back.

    The state's arrays are shared, not copied: a step inside the block updates them in place.
    The optimizer must have state already (it has stepped once), as in PyTorch.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> w = chainrule.ones(2, requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> other = chainrule.zeros(2, requires_grad=True)
    >>> other.grad = chainrule.ones(2)
    >>> with swap_in_optimizer_params_and_state(opt, {"w": other}, opt.state_dict()):
    ...     _ = opt.step()
    >>> other, opt.param_groups[0]["params"][0] is w
    (tensor([-0.2800, -0.2800], requires_grad=True), True)
    """
    name = "swap_in_optimizer_params_and_state"
    if not optimizer.state:
        raise DomainError(f"{name}: the optimizer has no state yet; take one step first")
    if not isinstance(swapin_optim_state, Mapping) or not {"state", "param_groups"} <= set(
        swapin_optim_state
    ):
        raise DTypeError(
            f"{name}: swapin_optim_state must be a dict with 'state' and 'param_groups', as "
            "optimizer.state_dict() returns"
        )
    saved_state, saved_groups = (
        swapin_optim_state["state"],
        list(swapin_optim_state["param_groups"]),
    )
    if len(saved_groups) != len(optimizer.param_groups):
        raise DomainError(
            f"{name}: swapin_optim_state has {len(saved_groups)} parameter groups, the "
            f"optimizer {len(optimizer.param_groups)}"
        )
    tensors = list(swapin_parameters.values())
    needed = sum(len(group["params"]) for group in optimizer.param_groups)
    if len(tensors) != needed:
        raise DomainError(f"{name}: got {len(tensors)} parameters, the optimizer has {needed}")
    for i, (group, saved) in enumerate(zip(optimizer.param_groups, saved_groups)):
        if set(group) != set(saved) or len(group["params"]) != len(saved["params"]):
            raise DomainError(
                f"{name}: parameter group {i} of swapin_optim_state does not match the "
                f"optimizer's (keys {sorted(saved)} and {len(saved['params'])} parameters vs "
                f"{sorted(group)} and {len(group['params'])})"
            )
    snapshots = [dict(group) for group in optimizer.param_groups]
    original_state = optimizer.state
    state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
    start = 0
    for group, saved in zip(optimizer.param_groups, saved_groups):
        params = tensors[start : start + len(saved["params"])]
        start += len(params)
        group.update({key: value for key, value in saved.items() if key != "params"})
        group["params"] = params
        for param, index in zip(params, saved["params"]):
            state[param] = dict(saved_state.get(index, {}))
    optimizer.state = state
    try:
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
