"""The bare tape: the least a Python reverse-mode engine on NumPy arrays can do per op.

Each op wraps its result with a node (parents, a backward function, a creation number);
backward pops nodes newest first from a heap and adds gradients into a dict. Nothing else:
no broadcasting, dtype or shape checks, no in-place detection, hooks, grad modes, higher
derivatives or error messages. It is not a peer: W2 shows it as the per-op cost that any
Python tape engine pays before it adds what makes it usable, the yardstick for the W2
targets against HIPS autograd and MyGrad.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from .engines import Engine, backward_record

_created = itertools.count()


class BareTensor:
    """An array, its gradient after backward, and the node that made it (None for a leaf)."""

    __slots__ = ("data", "grad", "parents", "backward_fn", "number")

    def __init__(self, data, parents=(), backward_fn=None) -> None:
        self.data, self.grad = data, None
        self.parents, self.backward_fn = parents, backward_fn
        self.number = next(_created)

    def __mul__(self, other):
        x, y = self.data, other.data
        return BareTensor(x * y, (self, other), lambda g: (g * y, g * x))

    def __add__(self, other):
        return BareTensor(self.data + other.data, (self, other), lambda g: (g, g))

    def tanh(self):
        out = np.tanh(self.data)
        return BareTensor(out, (self,), lambda g: (g * (1 - out * out),))

    def sum(self):
        shape = self.data.shape
        return BareTensor(self.data.sum(), (self,), lambda g: (np.broadcast_to(g, shape),))

    def backward(self) -> None:
        """Gradients of this scalar into every tensor it depends on (``.grad``)."""
        grads = {self: np.ones_like(self.data)}
        waiting = [(-self.number, self)]
        while waiting:
            node = heapq.heappop(waiting)[1]
            g = grads.pop(node)
            if node.backward_fn is None:
                node.grad = g if node.grad is None else node.grad + g
                continue
            for parent, parent_grad in zip(node.parents, node.backward_fn(g)):
                if parent in grads:
                    grads[parent] = grads[parent] + parent_grad
                else:
                    grads[parent] = parent_grad
                    heapq.heappush(waiting, (-parent.number, parent))


def bare_engine() -> Engine:
    """The bare tape as an Engine (only what W2's chain needs)."""

    def missing(*args):
        raise NotImplementedError("the bare tape has only W2's ops")

    def as_array(t):  # leaves hold arrays in .grad
        return t if isinstance(t, np.ndarray) else t.data

    record = backward_record(as_array)
    return Engine("bare tape", BareTensor, BareTensor, BareTensor.tanh, missing, missing, record,
                  missing)  # fmt: skip
