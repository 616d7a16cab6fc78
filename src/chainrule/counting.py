"""``count_ops``: how many elementary ops (and matmul FLOPs) a forward and backward pass run.

Convention: each forward op counts 1. In backward, each gradient sent along an edge counts 2:
one multiply by the incoming gradient (the VJP) and one add into the input's gradient. So
the cheap-gradient principle reads: backward ops <= 4 x forward ops for binary ops.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager


class OpCounts:
    """Counts by op name for the forward and the backward pass, and matmul FLOPs.

    Prints as a table; ``forward_total`` and ``backward_total`` sum the columns.
    """

    def __init__(self) -> None:
        self.forward: Counter[str] = Counter()
        self.backward: Counter[str] = Counter()
        self.forward_flops = 0
        self.backward_flops = 0

    @property
    def forward_total(self) -> int:
        """Elementary forward ops counted."""
        return sum(self.forward.values())

    @property
    def backward_total(self) -> int:
        """Elementary backward ops counted."""
        return sum(self.backward.values())

    @property
    def ratio(self) -> float:
        """backward_total / forward_total (0 when nothing ran forward)."""
        return self.backward_total / self.forward_total if self.forward_total else 0.0

    def record_forward(self, name: str, flops: int = 0) -> None:
        """Count one forward op."""
        self.forward[name] += 1
        self.forward_flops += flops

    def record_backward(self, name: str, edges: int, flops: int = 0) -> None:
        """Count the backward of one op that sent gradients along ``edges`` inputs."""
        self.backward[name] += 2 * edges
        self.backward_flops += flops

    def __str__(self) -> str:
        names = sorted(set(self.forward) | set(self.backward))
        width = max([len(n) for n in names] + [5])
        lines = [f"{'op':<{width}}  {'forward':>8}  {'backward':>8}"]
        lines += [f"{n:<{width}}  {self.forward[n]:>8}  {self.backward[n]:>8}" for n in names]
        lines.append(f"{'total':<{width}}  {self.forward_total:>8}  {self.backward_total:>8}")
        if self.forward_flops or self.backward_flops:
            lines.append(f"{'FLOPs':<{width}}  {self.forward_flops:>8}  {self.backward_flops:>8}")
        lines.append(f"backward / forward = {self.ratio:.2f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


#: The counter in use, or None outside ``count_ops`` (the engines check it on every op).
active: OpCounts | None = None


@contextmanager
def count_ops():
    """Count the ops run inside the block, on both engines.

    >>> import chainrule as cr
    >>> with count_ops() as counts:
    ...     x, y = cr.Value(2.0), cr.Value(3.0)
    ...     z = x * y + x
    ...     z.backward()
    >>> counts.forward_total, counts.backward_total
    (2, 8)
    """
    global active
    previous, active = active, OpCounts()
    try:
        yield active
    finally:
        active = previous
