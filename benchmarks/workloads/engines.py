"""The tensor engines compared, each as the few functions a model needs from it.

A workload writes its model once against an `Engine` and gets one implementation per
library, so no expression is copied per library. Each engine is built by a function that
imports its library there, so a missing peer only fails its own row. Every engine is used
as its users would write it: `backward()` and an optimizer where the library has them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..suite import Impl
from .compiled import COMPILED, WARMUP, CompiledStep


@dataclass
class Engine:
    """What a model needs: leaves and constants from arrays, activations, a loss, the
    gradient of a loss with respect to leaves, and an SGD update."""

    name: str
    leaf: Callable  # array -> differentiable parameter
    const: Callable  # array -> input that needs no gradient
    tanh: Callable
    relu: Callable
    cross_entropy: Callable  # (logits, integer labels) -> mean loss
    record: Callable  # (loss_fn, params) -> backward(), which returns (loss, [gradients])
    sgd: Callable  # (params, lr) -> update(grads), applied after the gradients are taken
    stack: Callable = np.stack  # several gradients -> one result (a compiled step keeps a list)

    def value_and_grad(self, loss_fn: Callable, params: list) -> tuple:
        """The loss and its gradient with respect to each of ``params``, as arrays."""
        return self.record(loss_fn, params)()


def backward_record(as_array: Callable) -> Callable:
    """``record`` for a library whose ``loss.backward()`` fills each leaf's ``.grad``, as
    its users call it; ``as_array`` turns the library's tensors into NumPy arrays."""

    def record(loss_fn, params):
        for p in params:
            p.grad = None  # backward() accumulates into .grad, as in PyTorch
        loss = loss_fn(*params)

        def backward():
            loss.backward()
            return as_array(loss), [as_array(p.grad) for p in params]

        return backward

    return record


def chainrule_engine(keep_tensors: bool = False) -> Engine:
    """chainrule as its users write it; ``keep_tensors`` returns detached Tensors instead of
    arrays, so that ``chainrule.compile`` can record the whole step (`compiled`)."""
    import chainrule as cr

    def cross_entropy(logits, labels):
        return -logits.log_softmax(1)[np.arange(len(labels)), labels].mean()

    def sgd(params, lr):
        optimizer = cr.optim.SGD(params, lr=lr)
        return lambda grads: optimizer.step()

    return Engine(
        "chainrule",
        lambda a: cr.tensor(a, requires_grad=True),
        cr.tensor,
        cr.tanh,
        cr.relu,
        cross_entropy,
        backward_record((lambda t: t.detach()) if keep_tensors else (lambda t: t.detach().numpy())),
        sgd,
        list if keep_tensors else np.stack,
    )


def torch_engine() -> Engine:
    import torch

    def sgd(params, lr):
        optimizer = torch.optim.SGD(params, lr=lr)
        return lambda grads: optimizer.step()

    def const(a):
        return torch.from_numpy(np.array(a))

    return Engine(
        "pytorch",
        lambda a: const(a).requires_grad_(),
        const,
        torch.tanh,
        torch.relu,
        torch.nn.functional.cross_entropy,
        backward_record(lambda t: t.detach().numpy()),
        sgd,
    )


def autograd_engine() -> Engine:
    import autograd
    import autograd.numpy as anp
    from autograd.extend import vspace
    from autograd.scipy.special import logsumexp

    def cross_entropy(logits, labels):
        log_p = logits - logsumexp(logits, axis=1, keepdims=True)
        return -log_p[np.arange(len(labels)), labels].mean()

    def record(loss_fn, params):
        # What autograd.value_and_grad does, split so that W6 can time the backward alone.
        vjp, loss = autograd.make_vjp(lambda ps: loss_fn(*ps))(params)
        return lambda: (loss, vjp(vspace(loss).ones()))

    def sgd(params, lr):
        def update(grads):
            for p, g in zip(params, grads):
                p -= lr * g

        return update

    return Engine(
        "autograd",
        np.array,
        np.asarray,
        anp.tanh,
        lambda x: anp.maximum(x, 0.0),
        cross_entropy,
        record,
        sgd,
    )


def mygrad_engine() -> Engine:
    import mygrad as mg
    from mygrad.nnet import relu, softmax_crossentropy

    def record(loss_fn, params):
        loss = loss_fn(*params)

        def backward():
            loss.backward()  # sets .grad afresh: MyGrad does not accumulate across graphs
            return loss.data, [p.grad for p in params]

        return backward

    def sgd(params, lr):
        def update(grads):
            for p, g in zip(params, grads):
                p.data -= lr * g

        return update

    return Engine("mygrad", mg.tensor, np.asarray, mg.tanh, relu, softmax_crossentropy, record, sgd)


def impls(
    make_step: Callable[[Engine], Callable], torch_threads=(1,), compiled: bool = False
) -> list[Impl]:
    """One Impl per engine from ``make_step(engine) -> step``; PyTorch once per thread count;
    with ``compiled``, also chainrule's step under ``chainrule.compile``."""

    def on(engine_fn):
        return lambda: make_step(engine_fn())

    rows = [Impl("chainrule", on(chainrule_engine))]
    if compiled:

        def build():
            return CompiledStep(make_step(chainrule_engine(keep_tensors=True)))

        rows.append(Impl(COMPILED, build, warmup=WARMUP))
    for n in torch_threads:
        name = "pytorch" if n == 1 else f"pytorch {n} threads"
        rows.append(Impl(name, on(torch_engine), "torch", "torch==2.13.0", torch_threads=n))
    rows.append(Impl("autograd (HIPS)", on(autograd_engine), "autograd"))
    rows.append(Impl("mygrad", on(mygrad_engine), "mygrad"))
    return rows


def train_step(engine: Engine, loss_fn: Callable, params: list, update: Callable):
    """One SGD step; returns the loss and the gradients (taken before the update)."""
    loss, grads = engine.value_and_grad(loss_fn, params)
    update(grads)
    return (loss, *grads)
