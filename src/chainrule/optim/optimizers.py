"""`Optimizer` (parameter groups, per-parameter state, state dicts) and SGD, Adam, AdamW,
RMSprop, Adagrad with PyTorch's update formulas.

Each update works on the parameters' NumPy arrays in place, in their own dtype, one array
operation per formula line; parameters whose ``.grad`` is None are skipped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import enable_grad
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..nn.utils import zero_grads


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start += weight * (end - start), in place, rounded as PyTorch's lerp_ kernel does."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of parameters and hyperparameters) and
    ``state`` (a dict per parameter). Subclasses define ``_update``.

    ``params`` is an iterable of tensors, or of dicts each making one group whose missing
    hyperparameters come from ``defaults``:

    >>> import chainrule
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
        group["params"] = params = list(params)
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

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: to None (default) or to zeros."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

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
            for param in group["params"]:
                if param.grad is None:
                    continue
                self._update(param.data, param.grad.data, state[param], group)
                # Changing the array in place is an in-place op: graphs that saved it must know.
                param._version_counter.bump(step)
        return loss

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        """Update the parameter array ``x`` in place from its gradient ``g``."""
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

    def _load_value(self, value: Any, param: Tensor, name: str, key: Any) -> Any:
        if not isinstance(value, (Tensor, np.ndarray)):
            return value
        array = np.array(value.data if isinstance(value, Tensor) else value)
        if name == "step":
            return int(array)
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


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (heavy-ball or Nesterov).

    PyTorch's algorithm: ``g += weight_decay * x``; ``b = momentum * b + (1 - dampening) * g``
    (``b = g`` on the first step); ``g = g + momentum * b`` (Nesterov) or ``g = b``;
    ``x -= lr * g``. With ``maximize`` the gradient's sign is flipped first.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "momentum", "weight_decay")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise DomainError(
                f"SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got momentum="
                f"{group['momentum']} and dampening={group['dampening']}"
            )

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        momentum, weight_decay = group["momentum"], group["weight_decay"]
        if group["maximize"]:
            g = -g
        if weight_decay != 0:
            g = g + weight_decay * x
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = Tensor._make(np.array(g, dtype=x.dtype))
            else:
                buffer.data *= momentum
                buffer.data += (1 - group["dampening"]) * g
            g = g + momentum * buffer.data if group["nesterov"] else buffer.data
        x -= group["lr"] * g


class Adam(Optimizer):
    """Adam: steps along bias-corrected running means of the gradient and its square.

    PyTorch's algorithm: ``m = lerp(m, g, 1 - β1)``; ``v = β2 v + (1 - β2) g²``;
    ``x -= lr / (1 - β1^t) * m / (sqrt(v) / sqrt(1 - β2^t) + eps)``, with ``v`` replaced by its
    running maximum when ``amsgrad``. ``weight_decay`` adds ``weight_decay * x`` to the gradient
    (L2); `AdamW` decays the weights directly instead.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adam([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # the first Adam step moves each coordinate by about lr
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _decoupled_weight_decay = False

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay")
        betas = group["betas"]
        if len(betas) != 2 or not all(0.0 <= beta < 1.0 for beta in betas):
            raise DomainError(f"{self._name}: invalid betas {betas!r}; each must be in [0, 1)")

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"], state["exp_avg_sq"] = _zeros(x), _zeros(x)
        if group["amsgrad"] and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = _zeros(x)
        if group["maximize"]:
            g = -g
        state["step"] += 1
        step = state["step"]
        if weight_decay != 0:
            if self._decoupled_weight_decay:
                x *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * x
        exp_avg, exp_avg_sq = state["exp_avg"].data, state["exp_avg_sq"].data
        _lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * (g * g)
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            max_exp_avg_sq = state["max_exp_avg_sq"].data
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
        else:
            denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        x -= step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``x *= 1 - lr * weight_decay`` before the Adam step.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = AdamW([x], lr=0.1, weight_decay=0.5)
    >>> x.grad = chainrule.tensor([0.0])
    >>> _ = opt.step()
    >>> x  # a zero gradient: only the decay acts
    tensor([0.9500], requires_grad=True)
    """

    _decoupled_weight_decay = True

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class RMSprop(Optimizer):
    """RMSprop: divides the gradient by a running root mean square of past gradients.

    PyTorch's algorithm: ``v = α v + (1 - α) g²``; ``avg = sqrt(v - ḡ²) + eps`` when
    ``centered`` (``ḡ`` a running mean of g), else ``sqrt(v) + eps``; with momentum
    ``b = momentum * b + g / avg`` and ``x -= lr * b``, else ``x -= lr * g / avg``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = RMSprop([x], lr=0.01)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # g / sqrt(0.01 g²) = 10: the first step is lr * 10
    tensor([0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "alpha", "eps", "weight_decay", "momentum")

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = _zeros(x)
        if group["maximize"]:
            g = -g
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * x
        square_avg = state["square_avg"].data
        square_avg *= alpha
        square_avg += (1 - alpha) * (g * g)
        if group["centered"]:
            grad_avg = state.setdefault("grad_avg", _zeros(x)).data
            _lerp_(grad_avg, g, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps
        if momentum > 0:
            buffer = state.setdefault("momentum_buffer", _zeros(x)).data
            buffer *= momentum
            buffer += g / avg
            x -= group["lr"] * buffer
        else:
            x -= group["lr"] * (g / avg)


class Adagrad(Optimizer):
    """Adagrad: divides the gradient by the root of the sum of all past squared gradients.

    PyTorch's algorithm: ``lr_t = lr / (1 + (t - 1) * lr_decay)``; ``s += g²``;
    ``x -= lr_t * g / (sqrt(s) + eps)``, with ``s`` starting at ``initial_accumulator_value``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = Adagrad([x], lr=0.5)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([0.5000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(
            group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"
        )

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = Tensor._make(np.full_like(x, group["initial_accumulator_value"]))
        if group["maximize"]:
            g = -g
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * x
        lr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = state["sum"].data
        total += g * g
        x -= lr * (g / (np.sqrt(total) + group["eps"]))
