"""`Optimizer`, the base of every optimizer (parameter groups, per-parameter state, state dicts),
and `swap_in_optimizer_params_and_state`. Each optimizer is in the module of its name
(`optim.sgd`, `optim.rmsprop`, ...); the Adam family shares `optim.adam`.

Each update works on the parameters' NumPy arrays in place, in their own dtype, one array
operation per formula line; parameters whose ``.grad`` is None are skipped. Small parameters
of a group go in packs (`_Pack`), each formula line once over their arrays laid end to end.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import enable_grad
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..nn.modules.module import zero_grads
from ..observe import recorded_update
from .arithmetic import NUMPY, Arithmetic, Collector, Recording

#: What an optimizer takes as ``params``: tensors, dicts (one group each) or (name, tensor) pairs.
Params = Iterable[Tensor] | Iterable[dict] | Iterable[tuple[str, Tensor]]


#: In place, ``start += weight * (end - start)`` (`Arithmetic.lerp_` in eager mode).
_lerp_ = NUMPY.lerp_


def _numbers_of(state: dict) -> tuple:
    """A parameter's state as its formulas' numbers see it: its numbers (step counts), and
    which entries are tensors."""
    return tuple((key, None if isinstance(v, Tensor) else v) for key, v in state.items())


def _branches(value: Any) -> Any:
    """What a formula's branch may ask of a hyperparameter: a flag or a string itself; of a
    number, whether it is 0 and whether it is over 0.5; of a tuple, that of each item."""
    if type(value) in (int, float):
        return (value == 0, value > 0.5)
    if type(value) in (tuple, list):
        return tuple(_branches(v) for v in value)
    return value if value is None or type(value) in (bool, str) else type(value).__name__


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

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: to None (default) or to zeros."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    @recorded_update
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given.

        The closure (which recomputes the loss and calls backward) runs with grad enabled.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self.apply_update(NUMPY)
        return loss

    def apply_update(self, arith: Arithmetic, packs: bool = True) -> None:
        """The update of `step`, its formulas computed by ``arith``: `NUMPY` in eager mode,
        or a compiler's (`chainrule.optim.arithmetic`). Packs of small parameters are eager
        mode's alone (``packs=False``: none, so the state tensors stay the ones they are)."""
        step = f"{self._name}.step"
        packs = packs and arith is NUMPY
        packs = packs and self._update_is_elementwise and self._pack_small_params
        for group in self.param_groups:
            items = self._layout(group) if packs and self._packs_pay(group) else group["params"]
            for item in items:
                if isinstance(item, _Pack):
                    item.step(self, group, step)
                else:
                    self._step_one(item, group, step, arith)

    def record_update(self, sink: Any) -> tuple[str, ...]:
        """`step`'s update (no closure), told line by line to ``sink``, a compiler's recorder
        (`chainrule.optim.arithmetic.Recording`); returns the operations' names, in order."""
        arith = Recording(sink)
        self.apply_update(arith)
        return tuple(arith.called)

    def collect_numbers(self, expected: tuple[str, ...]) -> tuple:
        """The numbers the update's formulas take from Python now (``lr``, this step's bias
        corrections), in order, as `step` would use them; the step counts advance as a step
        does, and no array changes. A compiled step calls it at each replay; ``expected``:
        the operations its record has (another branch raises `GraphError`)."""
        collector = Collector()
        step = f"{self._name}.step"
        numbers, called = collector.numbers, collector.called
        # A parameter of a group whose step counts (its state's numbers) are another's gets the
        # same numbers and the same new counts: its formulas run once, not for each.
        done: dict[tuple, tuple] = {}
        states = self.state
        for group in self.param_groups:
            for param in group["params"]:
                if param._grad is None:
                    continue
                state = states[param]
                key = (id(group), *_numbers_of(state)) if state else (id(group),)
                known = done.get(key)
                if known is not None:
                    numbers += known[0]
                    called += known[1]
                    if known[2]:
                        state.update(known[2])
                    param._version_counter.bump(step)
                    continue
                start, begun = len(numbers), len(called)
                self._step_one(param, group, step, collector)
                after = {k: v for k, v in state.items() if not isinstance(v, Tensor)}
                done[key] = (numbers[start:], called[begun:], after)
        collector.check(expected, step)
        return tuple(numbers)

    def numbers_state(self) -> dict:
        """The numbers of each parameter's state (step counts...), as `collect_numbers`
        changes them: what `update_again` puts back."""
        saved = {}
        for group in self.param_groups:
            for param in group["params"]:
                state = self.state.get(param)
                if state is not None:
                    saved[param] = {k: v for k, v in state.items() if not isinstance(v, Tensor)}
        return saved

    def update_again(self, saved: dict) -> None:
        """Put back the state numbers `numbers_state` gave, and run the update eagerly, its
        state tensors kept (no packs): a compiled step replayed in pieces that gathered its
        numbers, then went another way before its program ran the update."""
        for param, numbers in saved.items():
            state = self.state[param]
            for key in [k for k, v in state.items() if not isinstance(v, Tensor)]:
                if key not in numbers:
                    del state[key]
            state.update(numbers)
        self.apply_update(NUMPY, packs=False)

    #: Whether `_update` is written with its ``arith`` alone (no NumPy of its own, no branch
    #: on array values, numbers made from the group and the state's numbers alone, never from
    #: an array's shape), so that a compiler records the update as equations (`apply_update`).
    records_update: bool = False

    def update_guard(self) -> tuple[tuple, tuple]:
        """(what the branches of a recorded update depend on, the state tensors read). The
        first, before a step: the groups' flags and their numbers' zeros (``momentum != 0``),
        which side of 0.5 each number is (`Arithmetic.lerp_`), the parameter counts, the
        state dict itself (a loaded one is another), and what `_state_branches` says of each
        parameter's state. A compiled step replays while this stays equal."""
        state = self.state
        # Checked before each replay: the groups' part is worked out again only when one of
        # their values changed (a scheduler's lr), which a list comparison tells at once.
        values: list = [id(state)]
        for group in self.param_groups:  # the parameters by count: never compared as tensors
            values += [len(group["params"]), *(v for k, v in group.items() if k != "params")]
        cached = self.__dict__.get("_guard_cache")
        if cached is not None and cached[0] == values:
            groups = cached[1]
        else:
            groups = tuple(
                tuple((key, _branches(value)) for key, value in group.items() if key != "params")
                + (len(group["params"]),)
                for group in self.param_groups
            )
            self._guard_cache = (values, groups)
        branches = (
            id(state),
            groups,
            tuple(self._state_branches(group) for group in self.param_groups),
        )
        # the state tensors themselves: an eager step's packs make views of their own
        tensors = tuple(
            id(v)
            for group in self.param_groups
            for p in group["params"]
            for v in state.get(p, _NO_STATE).values()
            if isinstance(v, Tensor)
        )
        return branches, tensors

    def _state_branches(self, group: dict) -> tuple:
        """What the next step's formulas decide from each parameter's state numbers (RAdam's
        rectification, from the step count); nothing for most optimizers."""
        return ()

    #: Whether `_update` works element by element (no reduction, no reshaping, each output
    #: element from the same element of ``x``, ``g`` and the state arrays): then it may run on
    #: several parameters laid end to end, as one array (see `_Pack`).
    _update_is_elementwise: bool = False

    #: Whether `step` runs `_update` on packs of small parameters, when it works element by
    #: element (set False on an optimizer for the one-parameter-at-a-time path).
    _pack_small_params: bool = True

    def _packs_pay(self, group: dict) -> bool:
        """Whether packs save time on ``group``: laying the values and gradients end to end
        and copying the values back costs about what two array operations per parameter do,
        so an update of only a line or two gains nothing from them."""
        return True

    def _step_one(self, param: Tensor, group: dict, step: str, arith: Arithmetic) -> None:
        """Update one parameter, if it has a gradient (``step`` names the op that changed
        it, for its version counter)."""
        if param.grad is None:
            return
        state = self.state[param]
        arith.begin(param, state)
        g = param.grad._array
        if group.get("maximize"):  # ascend: every update rule then sees -g
            g = arith.neg(g)
        self._update(param._array, g, state, group, arith)
        arith.end()
        # Changing the array in place is an in-place op: graphs that saved it must know.
        param._version_counter.bump(step)

    def _layout(self, group: dict) -> list:
        """The group's parameters as `step` updates them: packs of small ones, one after
        another in the group's order, and the others one at a time (kept between steps)."""
        params = group["params"]
        layouts = self.__dict__.setdefault("_layouts", {})
        cached = layouts.get(id(group))
        if (
            cached is not None
            and cached[0] is group
            and len(cached[1]) == len(params)
            and all(p is q for p, q in zip(params, cached[1]))
        ):
            return cached[2]
        groups = {id(other) for other in self.param_groups}
        for key in [key for key in layouts if key not in groups]:  # groups replaced (loaded)
            del layouts[key]
        items: list = []
        run: list[Tensor] = []
        for param in [*params, None]:
            small = param is not None and _Pack.takes(param)
            if run and (
                not small
                or param.dtype != run[0].dtype
                or sum(p._array.size for p in run) + param._array.size > _Pack.SIZE
            ):
                items += [_Pack(run)] if len(run) > 1 else run
                run = []
            if small:
                run.append(param)
            elif param is not None:
                items.append(param)
        layouts[id(group)] = (group, list(params), items)
        return items

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        """Update the parameter array ``x`` in place from its gradient ``g`` (already negated
        when the group has ``maximize``) and its ``state``, with ``arith``'s operations where
        `records_update`. With `_update_is_elementwise`, ``x``, ``g`` and the state's arrays
        may be several parameters' laid end to end."""
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


class _Pack:
    """A run of small parameters of one group that `Optimizer.step` updates as one array.

    Their values and gradients are laid end to end for the step (copies, small enough to stay
    in cache), and their state arrays for good: each parameter's state tensors are views into
    the pack's own state arrays, so the state dicts keep PyTorch's layout while `_update` runs
    each formula line once for the whole pack. A step on small parameters is mostly the fixed
    cost of each NumPy call, as PyTorch's foreach kernels are for its own; a large parameter
    gains nothing from a pack and would push the others out of cache, so it goes on its own.
    The arithmetic is elementwise, so the numbers are the one-at-a-time path's, bit for bit.
    """

    #: Parameters of fewer elements than this join packs of at most this many elements.
    SIZE = 1 << 16

    __slots__ = (
        "params",
        "shapes",
        "dtype",
        "starts",
        "stops",
        "x",
        "g",
        "pieces",
        "state",
        "views",
    )

    @staticmethod
    def takes(param: Tensor) -> bool:
        """Whether ``param`` is small and floating enough to join a pack."""
        return param._array.dtype.kind == "f" and param._array.size < _Pack.SIZE

    def __init__(self, params: list[Tensor]) -> None:
        self.params = params
        self.shapes = [p._array.shape for p in params]
        self.dtype = params[0]._array.dtype
        sizes = [p._array.size for p in params]
        self.stops = list(itertools.accumulate(sizes))
        self.starts = [stop - size for stop, size in zip(self.stops, sizes)]
        # The values and gradients laid end to end at each step, and each parameter's piece.
        self.x, self.g = np.empty(self.stops[-1], self.dtype), np.empty(self.stops[-1], self.dtype)
        self.pieces = self._pieces(self.x)
        self.state: dict[str, Any] | None = None  # as a parameter's, arrays over the pack
        # Each array of `state` and the parameters' state tensors viewing it, by state name.
        self.views: dict[str, tuple[np.ndarray, list[Tensor]]] = {}

    def step(self, optimizer: Optimizer, group: dict, name: str) -> None:
        """Update the pack's parameters: together when each has a gradient of its own dtype
        and their states agree (the same entries, the same step counts), else one by one
        (``name``: the op for their version counters)."""
        params, dtype = self.params, self.dtype
        together = all(
            p.grad is not None
            and p._array.shape == shape
            and p._array.dtype == dtype
            and p.grad._array.dtype == dtype
            for p, shape in zip(params, self.shapes)
        )
        states = [optimizer.state[p] for p in params] if together else []
        if not together or not (self._holds(states) or self._gather(states)):
            for param in params:
                optimizer._step_one(param, group, name, NUMPY)
            return
        x, g = self.x, self.g
        np.concatenate([p.grad._array.ravel() for p in params], out=g)
        if group.get("maximize"):
            np.negative(g, out=g)
        np.concatenate([p._array.ravel() for p in params], out=x)
        optimizer._update(x, g, self.state, group, NUMPY)
        self._share(states)
        for p, piece in zip(params, self.pieces):
            np.copyto(p._array, piece)
            p._version_counter.bump(name)

    def _pieces(self, array: np.ndarray) -> list[np.ndarray]:
        """Views of ``array`` (the pack's length) as each parameter's part, in its shape."""
        return [
            array[start:stop].reshape(shape)
            for start, stop, shape in zip(self.starts, self.stops, self.shapes)
        ]

    def _holds(self, states: list[dict]) -> bool:
        """Whether the parameters' states are still the pack's: its entries, its views."""
        own = self.state
        if own is None:
            return False
        numbers = [(key, value) for key, value in own.items() if not isinstance(value, Tensor)]
        views = [(key, *self.views[key]) for key in own if isinstance(own[key], Tensor)]
        for i, state in enumerate(states):
            if len(state) != len(own):
                return False
            for key, value in numbers:
                entry = state.get(key, _MISSING)
                if entry is not value and not _same(entry, value):
                    return False
            for key, array, pieces in views:
                entry = state.get(key)
                if entry is not pieces[i] or entry._array.base is not array:
                    return False
        return True

    def _gather(self, states: list[dict]) -> bool:
        """Make the pack's state from the parameters' (new, loaded, or replaced since): their
        arrays copied end to end, the numbers they share kept. False if they disagree."""
        keys = list(states[0])
        if any(len(state) != len(keys) for state in states):
            return False
        own: dict[str, Any] = {}
        for key in keys:
            values = [state.get(key, _MISSING) for state in states]
            head = values[0]
            if isinstance(head, Tensor):
                if not all(
                    isinstance(value, Tensor)
                    and value._array.shape == shape
                    and value._array.dtype == self.dtype
                    for value, shape in zip(values, self.shapes)
                ):
                    return False
                own[key] = Tensor._make(np.concatenate([v._array.reshape(-1) for v in values]))
            elif all(_same(value, head) for value in values[1:]):
                own[key] = head
            else:
                return False
        self.state, self.views = own, {}
        self._share(states)
        return True

    def _share(self, states: list[dict]) -> None:
        """Give each parameter the pack's state: its numbers, and views into its arrays (made
        for an array new to the pack, as on the first step)."""
        for key, value in self.state.items():
            if not isinstance(value, Tensor):
                for state in states:
                    state[key] = value
                continue
            made = self.views.get(key)
            if made is None or made[0] is not value._array:
                array = value._array
                made = self.views[key] = (array, [Tensor._make(a) for a in self._pieces(array)])
                for state, view in zip(states, made[1]):
                    state[key] = view


_MISSING = object()
_NO_STATE: dict = {}


def _same(a: Any, b: Any) -> bool:
    """Whether two state entries that are not arrays hold the same value (a step count...)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or type(a) is not type(b):
        return False
    return bool(a == b)


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
    # Packs would copy the swapped-in state into arrays of their own; this state is shared.
    packing = optimizer.__dict__.pop("_pack_small_params", _MISSING)
    optimizer._pack_small_params = False
    try:
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
        del optimizer._pack_small_params
        if packing is not _MISSING:
            optimizer._pack_small_params = packing
