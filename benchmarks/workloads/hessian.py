"""W7: the Hessian of sum(tanh(A @ x)) for x of size 100, against torch.func and HIPS autograd.

Each library uses its own `hessian`. The floor is the closed form: with t = tanh(A x),
the gradient is Aᵀ(1 - t²) and the Hessian Aᵀ diag(-2 t (1 - t²)) A.
"""

from __future__ import annotations

import numpy as np

from ..suite import Impl, Target, Workload


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(A, x): A is n x n with unit-variance rows after scaling, x in [-1, 1]."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) / np.sqrt(n), np.linspace(-1, 1, n)


def floor(n: int):
    a, x = data(n)

    def step():
        t = np.tanh(a @ x)
        return (a.T @ (a * (-2 * t * (1 - t * t))[:, None]),)

    return step


def on_chainrule(n: int):
    import chainrule as cr

    a_array, x_array = data(n)
    a, x = cr.tensor(a_array), cr.tensor(x_array)
    hessian = cr.func.hessian(lambda x: (a @ x).tanh().sum())
    return lambda: (hessian(x).numpy(),)


def on_torch(n: int):
    import torch

    a_array, x_array = data(n)
    a, x = torch.from_numpy(a_array), torch.from_numpy(x_array)
    hessian = torch.func.hessian(lambda x: (a @ x).tanh().sum())
    return lambda: (hessian(x).numpy(),)


def on_autograd(n: int):
    import autograd
    import autograd.numpy as anp

    a, x = data(n)
    hessian = autograd.hessian(lambda x: anp.tanh(a @ x).sum())
    return lambda: (hessian(x),)


def workloads(quick: bool) -> list[Workload]:
    """W7."""
    n = 10 if quick else 100
    return [
        Workload(
            "W7",
            f"hessian of sum(tanh(A @ x)), x of size {n}",
            "ms/hessian",
            1e3,
            [
                Impl("numpy (closed form)", lambda: floor(n)),
                Impl("chainrule", lambda: on_chainrule(n)),
                Impl(
                    "pytorch (torch.func)",
                    lambda: on_torch(n),
                    "torch",
                    "torch==2.13.0",
                    torch_threads=1,
                ),
                Impl("autograd (HIPS)", lambda: on_autograd(n), "autograd"),
            ],
            rtol=1e-9,
            repeats=5,
            targets=[Target("chainrule ≤ 1× autograd", 1.0, "autograd (HIPS)")],
        ),
    ]
