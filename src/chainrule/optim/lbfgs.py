"""`LBFGS`: limited-memory BFGS on all parameters flattened into one vector, with an optional
strong-Wolfe line search, following PyTorch's algorithm step for step (itself after minFunc).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import enable_grad
from ..errors import DomainError
from ..observe import replayed_whole
from .optimizer import Optimizer

Objective = Callable[[float, np.ndarray], tuple[float, np.ndarray]]


def _cubic_minimum(
    x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds=None
) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clipped
    to ``bounds`` (default: between x1 and x2); the midpoint if the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


def _strong_wolfe(
    evaluate: Objective,
    t: float,
    d: np.ndarray,
    f: float,
    g: np.ndarray,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, np.ndarray, float, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: bracket, then zoom.

    ``evaluate(t, d)`` returns the loss and flat gradient at ``x + t d``. Returns the loss,
    gradient and step found, and how many evaluations it took.
    """
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = evaluate(t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # Bracketing: grow the step until the interval surely holds a point meeting the conditions.
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t, t_prev = (
            _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (min_step, max_step)),
            t,
        )
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # Zoom: shrink the bracket by cubic interpolation until the conditions hold.
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # Keep away from the bracket's ends, where interpolation makes little progress.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS: quasi-Newton steps from the last ``history_size`` gradient differences.

    ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` loss evaluations,
    default ``max_iter * 5 // 4``), each calling the closure, which must zero the gradients,
    compute the loss, call ``backward`` and return the loss. It stops early when the largest
    gradient entry is at most ``tolerance_grad`` or the loss or step changes by less than
    ``tolerance_change``. ``line_search_fn="strong_wolfe"`` picks each step length by a line
    search; otherwise the step is ``lr`` (the first one scaled by ``1 / sum|g|``). As in
    PyTorch, one parameter group only; the state lives under the first parameter.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - 3.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(value, 4) for value in x.tolist()]
    [3.0, 3.0]
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict] | Iterable[tuple[str, Tensor]],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise DomainError(
                f"LBFGS: got {len(self.param_groups)} parameter groups; LBFGS takes one (no "
                "per-parameter options)"
            )

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "tolerance_grad", "tolerance_change")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise DomainError(
                f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                f"{group['line_search_fn']!r}"
            )

    @property
    def _params(self) -> list[Tensor]:
        return self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate(
            [
                np.zeros(p._array.size, p._array.dtype) if p.grad is None else p.grad._array.ravel()
                for p in self._params
            ]
        )

    def _add(self, step_size: float, direction: np.ndarray) -> None:
        """Move every parameter by ``step_size * direction`` (its slice of the flat vector)."""
        offset = 0
        for p in self._params:
            size = p._array.size
            p._array += step_size * direction[offset : offset + size].reshape(p.shape)
            p._version_counter.bump("LBFGS.step")
            offset += size

    def _set(self, arrays: list[np.ndarray]) -> None:
        for p, array in zip(self._params, arrays):
            p._array[...] = array
            p._version_counter.bump("LBFGS.step")

    def _directional(
        self, evaluate: Callable, start: list[np.ndarray], t: float, d: np.ndarray
    ) -> tuple[float, np.ndarray]:
        """The loss and flat gradient at ``start + t d``; the parameters go back to start."""
        self._add(t, d)
        loss = evaluate()[1]
        grad = self._flat_grad()
        self._set(start)
        return loss, grad

    @replayed_whole
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss the closure gave first."""
        if closure is None:
            raise DomainError("LBFGS.step: needs a closure that recomputes the loss")
        if len(self.param_groups) != 1:
            raise DomainError(
                f"LBFGS.step: there are {len(self.param_groups)} parameter groups; LBFGS takes one"
            )

        def evaluate() -> tuple[Any, float]:
            with enable_grad():
                loss = closure()
            return loss, float(loss)

        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss, loss = evaluate()
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return first_loss

        unwrap = _arrays
        d, t = unwrap(state.get("d")), state.get("t")
        old_dirs, old_stps = unwrap(state.get("old_dirs")), unwrap(state.get("old_stps"))
        ro, h_diag = state.get("ro"), state.get("H_diag")
        prev_flat_grad, prev_loss = unwrap(state.get("prev_flat_grad")), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                # Two-loop recursion: d = -H g with H the L-BFGS inverse-Hessian estimate.
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d += (al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            # The first step is scaled down by the gradient's size; later ones are lr.
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            evals = 0
            if group["line_search_fn"] is not None:
                along = functools.partial(
                    self._directional, evaluate, [p._array.copy() for p in self._params]
                )
                loss, flat_grad, t, evals = _strong_wolfe(
                    along, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add(t, d)
                converged = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add(t, d)
                converged = False
                if n_iter != max_iter:
                    loss = evaluate()[1]
                    flat_grad = self._flat_grad()
                    converged = np.abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals

            if n_iter == max_iter or current_evals >= max_eval or converged:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        wrap = _tensors
        state.update(
            d=wrap(d), t=t, old_dirs=wrap(old_dirs), old_stps=wrap(old_stps), ro=ro,
            H_diag=h_diag, prev_flat_grad=wrap(prev_flat_grad), prev_loss=prev_loss,
        )  # fmt: skip
        return first_loss

    def _load_value(self, value: Any, param: Tensor, name: str, key: Any) -> Any:
        # The state is of the flat vector, not shaped like the first parameter: copy it as is.
        if name in ("d", "prev_flat_grad", "old_dirs", "old_stps"):
            return _tensors(_arrays(value), copy=True)
        if isinstance(value, (Tensor, np.ndarray)):
            return np.asarray(value._array if isinstance(value, Tensor) else value).item()
        return list(value) if isinstance(value, (list, tuple)) else value


def _arrays(value: Any) -> Any:
    """The arrays inside a state entry (a Tensor, or a list of them); others as they are."""
    if isinstance(value, Tensor):
        return value._array
    if isinstance(value, (list, tuple)):
        return [_arrays(item) for item in value]
    return value


def _tensors(value: Any, copy: bool = False) -> Any:
    """State entries as Tensors (so that `chainrule.save` and state dicts hold them)."""
    if isinstance(value, np.ndarray):
        return Tensor._make(np.array(value) if copy else value)
    if isinstance(value, list):
        return [_tensors(item, copy) for item in value]
    return value
