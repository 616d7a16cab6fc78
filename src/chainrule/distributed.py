"""Data-parallel training on MPI: the process group (`init`, `rank`, `world_size`) and its
collectives (`all_reduce`, `broadcast`, `barrier`), `DistributedDataParallel` and
`DistributedSampler`. chainrule has no transport of its own: `init` imports mpi4py
(``pip install chainrule[mpi]``), so ``import chainrule`` still needs NumPy only.

A training script runs unchanged on N processes: ``mpirun -n 2 python train.py``, where
``train.py`` calls `init`, wraps its model in `DistributedDataParallel`, gives its DataLoader
a `DistributedSampler`, and prints only when ``rank() == 0``. docs/guides/distributed.md has more.
"""

from __future__ import annotations

import functools
import numbers
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ._tensor import Tensor
from .autograd import node_order, state
from .data.sampler import DistributedSampler
from .errors import ChainruleError, DomainError, DTypeError, fmt_dtype, fmt_shape
from .nn.modules.module import Module


class DistributedError(ChainruleError, RuntimeError):
    """A collective called before `init`, ranks that disagree, or DDP used in a way it cannot
    average correctly."""


#: The communicator every collective uses; None until `init` runs.
_comm = None


def _import_mpi():
    """mpi4py's ``MPI`` module, or an ImportError that names the extra to install."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError(
            "chainrule.distributed needs mpi4py and an MPI library: pip install chainrule[mpi] "
            "(pip install -e .[mpi] in a checkout)"
        ) from None
    return MPI


def _require(op: str):
    """The communicator, or a DistributedError saying that `init` has not run."""
    if _comm is None:
        raise DistributedError(
            f"{op}: the process group is not initialized; call chainrule.distributed.init() "
            "first in every process (started with mpirun -n N python script.py)"
        )
    return _comm


# The process group.


def init(comm: Any = None) -> None:
    """Join the process group: every process that ``mpirun -n N`` started calls it once, first.

    ``comm`` is an mpi4py communicator (default ``MPI.COMM_WORLD``). ``init`` also installs
    a ``sys.excepthook`` for faults: an exception that no code catches, on any rank, prints
    its traceback and ``rank R of N raised ...``, then aborts every rank (``MPI_Abort``), so
    the other ranks exit with that error named instead of waiting forever in a collective.
    Run as plain ``python script.py`` it is a process group of one.

    Raises:
        ImportError: mpi4py is not installed (the message names the extra).
        DistributedError: ``init`` already ran in this process.
    """
    global _comm
    MPI = _import_mpi()
    if _comm is not None:
        raise DistributedError(
            f"init: the process group is already initialized (rank {_comm.Get_rank()} of "
            f"{_comm.Get_size()}); call init() once per process"
        )
    _comm = MPI.COMM_WORLD if comm is None else comm
    sys.excepthook = _abort_every_rank


def _abort_every_rank(exc_type, exc, tb) -> None:
    """``sys.excepthook`` after `init`: name the error and this rank, then abort them all."""
    traceback.print_exception(exc_type, exc, tb)
    print(
        f"chainrule.distributed: rank {_comm.Get_rank()} of {_comm.Get_size()} raised "
        f"{exc_type.__name__}: {exc}; aborting every rank",
        file=sys.stderr,
        flush=True,
    )
    sys.stdout.flush()
    # The launcher forwards a rank's output on its own schedule, and MPI_Abort tears that
    # down at once: on a busy machine the message above was lost. A moment lets it through.
    time.sleep(0.5)
    _comm.Abort(1)


def is_initialized() -> bool:
    """Whether `init` has run in this process.

    >>> is_initialized()
    False
    """
    return _comm is not None


def rank() -> int:
    """This process's number in the group, 0 to ``world_size() - 1`` (rank 0 prints)."""
    return _require("rank").Get_rank()


def world_size() -> int:
    """The number of processes in the group."""
    return _require("world_size").Get_size()


def barrier() -> None:
    """Wait until every rank has called ``barrier()``."""
    _require("barrier").Barrier()


# Collectives: in place on the tensor's array, as in torch.distributed.

_REDUCE_OPS = ("sum", "mean", "max", "min")


def _in_place(tensor: Tensor, op: str, collective: Callable[[np.ndarray], None]) -> None:
    """Run ``collective`` on a C-contiguous buffer of ``tensor``'s array, then write it back."""
    array = tensor._array
    if not array.flags.writeable:
        raise DomainError(
            f"{op}: this tensor's memory is read-only (an expanded view or a read-only "
            "array); clone() it first"
        )
    buffer = array if array.flags.c_contiguous else np.ascontiguousarray(array)
    collective(buffer)
    if buffer is not array:
        array[...] = buffer
    tensor._version_counter.bump(op)


def _check_tensor(tensor: Any, op: str) -> None:
    if not isinstance(tensor, Tensor):
        raise DTypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    if tensor.dtype.kind not in "iuf":
        raise DTypeError(f"{op}: needs a numeric tensor, got {fmt_dtype(tensor.dtype)}")


def all_reduce(tensor: Tensor, op: str = "sum") -> None:
    """Replace ``tensor`` on every rank by the sum (or mean, max, min) over ranks, in place.

    Every rank must pass a tensor of the same shape and dtype. ``"mean"`` needs floats.
    Returns None, as in torch.distributed; the version counter records the change.
    """
    _check_tensor(tensor, "all_reduce")
    if op not in _REDUCE_OPS:
        raise DomainError(f"all_reduce: op must be one of {', '.join(_REDUCE_OPS)}; got {op!r}")
    if op == "mean" and tensor.dtype.kind != "f":
        raise DTypeError(
            f"all_reduce: op='mean' needs a floating-point tensor, got "
            f"{fmt_dtype(tensor.dtype)}; use op='sum', or convert with .float()"
        )
    comm = _require("all_reduce")
    MPI = _import_mpi()
    mpi_op = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]

    def reduce(buffer: np.ndarray) -> None:
        comm.Allreduce(MPI.IN_PLACE, buffer, op=mpi_op)
        if op == "mean":
            buffer /= comm.Get_size()

    _in_place(tensor, "all_reduce", reduce)


def broadcast(tensor: Tensor, src: int = 0) -> None:
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank, in place."""
    _check_tensor(tensor, "broadcast")
    comm = _require("broadcast")
    size = comm.Get_size()
    if not isinstance(src, numbers.Integral) or not 0 <= src < size:
        raise DomainError(f"broadcast: src must be a rank from 0 to {size - 1}, got {src!r}")
    _in_place(tensor, "broadcast", lambda buffer: comm.Bcast(buffer, root=int(src)))


# Data-parallel training.


def _check_same_model(comm, module: Module) -> None:
    """Raise on every rank if any rank's parameters or buffers differ from rank 0's."""
    mine = [("parameter", name, p.shape, p.dtype.name) for name, p in module.named_parameters()]
    mine += [("buffer", name, b.shape, b.dtype.name) for name, b in module.named_buffers()]
    everyone = comm.allgather(mine)  # the same list on every rank, so every rank raises alike
    first = {(kind, name): (shape, dtype) for kind, name, shape, dtype in everyone[0]}
    problems = []
    for r, theirs in enumerate(everyone[1:], start=1):
        other = {(kind, name): (shape, dtype) for kind, name, shape, dtype in theirs}
        for (kind, name), (shape, dtype) in first.items():
            if (kind, name) not in other:
                problems.append(f"{kind} {name!r} exists on rank 0 but not on rank {r}")
            elif other[kind, name][0] != shape:
                problems.append(
                    f"{kind} {name!r} has shape {fmt_shape(shape)} on rank 0 but "
                    f"{fmt_shape(other[kind, name][0])} on rank {r}"
                )
            elif other[kind, name][1] != dtype:
                problems.append(
                    f"{kind} {name!r} is {dtype} on rank 0 but {other[kind, name][1]} on rank {r}"
                )
        problems += [
            f"{kind} {name!r} exists on rank {r} but not on rank 0"
            for kind, name in other
            if (kind, name) not in first
        ]
    if problems:
        raise DistributedError(
            "DistributedDataParallel: the ranks built different models; every rank must build "
            "the same one before wrapping it:\n    " + "\n    ".join(problems)
        )


def _tensors_in(value: Any) -> Iterator[Tensor]:
    """The Tensors in a forward's output: itself, or inside tuples, lists and dicts."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _tensors_in(item)


def _assign_buckets(params: list[Tensor], cap_bytes: float) -> list[list[int]]:
    """Parameter indices grouped into buckets of one dtype and about ``cap_bytes`` each.

    Parameters go in reverse order, as in PyTorch: backward reaches the last layer first,
    so the first bucket fills first. A parameter larger than the cap gets a bucket alone.
    """
    buckets: list[list[int]] = []
    open_buckets: dict[np.dtype, tuple[list[int], int]] = {}
    for i in reversed(range(len(params))):
        dtype = params[i].dtype
        indices, size = open_buckets.pop(dtype, ([], 0))
        indices.append(i)
        size += params[i]._array.nbytes
        if size >= cap_bytes:
            buckets.append(indices)
        else:
            open_buckets[dtype] = (indices, size)
    buckets += [indices for indices, _ in open_buckets.values()]
    return buckets


class _Bucket:
    """Parameters whose gradients travel together: one flat buffer, one Allreduce."""

    def __init__(self, indices: list[int], params: list[Tensor]) -> None:
        self.indices = indices
        ends = np.cumsum([params[i]._array.size for i in indices])
        self.slices = [slice(end - params[i]._array.size, end) for i, end in zip(indices, ends)]
        self.buffer = np.empty(int(ends[-1]), params[indices[0]].dtype)


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training: each rank runs it on its own share of every
    batch, and after ``backward()`` every parameter's ``.grad`` is the mean over ranks.

    At wrap time every rank must have built the same parameters and buffers (names, shapes,
    dtypes; a mismatch raises DistributedError on every rank, naming each difference), and
    rank 0's values are broadcast to the others, so all ranks start from the same weights.

    Gradients are averaged automatically during backward. Each forward counts how many
    gradients each parameter will receive from the graph it recorded; a hook on each
    parameter sees them arrive. Parameters are packed in reverse order into buckets of
    ``bucket_cap_mb`` (one dtype each); when every parameter of a bucket has its last gradient,
    their gradients are copied into the bucket's flat buffer, summed over ranks with one
    ``Allreduce``, divided by the number of ranks and written back. Buckets are reduced in the
    same order on every rank. With each rank's loss a mean over its share of the batch, the
    result is the gradient of the mean over the global batch. ``allreduce_calls`` and
    ``allreduce_seconds`` count the gradient allreduces and the time spent in them.

    Differences from PyTorch: buffers are broadcast at wrap time only (not at each forward);
    a parameter that did not take part in forward contributes zeros, so one unused on every
    rank gets a zero gradient instead of None. A gradient for a parameter this forward did
    not use (a second backward through one forward, an un-wrapped ``model.module(x)``)
    raises DistributedError (a penalty on a weight the forward used is averaged with the
    rest of its gradient, which its hook sees once), as does a forward after a
    backward that left some parameters without their gradient (an output the loss ignores).
    ``backward(create_graph=True)`` is not supported. Save ``model.module.state_dict()``.
    """

    def __init__(self, module: Module, bucket_cap_mb: float = 25.0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise DTypeError(
                f"DistributedDataParallel: expected a Module, got {type(module).__name__}"
            )
        if not (isinstance(bucket_cap_mb, numbers.Real) and bucket_cap_mb > 0):
            raise DomainError(
                f"DistributedDataParallel: bucket_cap_mb must be a positive number, got "
                f"{bucket_cap_mb!r}"
            )
        comm = _require("DistributedDataParallel")
        self.module = module
        _check_same_model(comm, module)
        for tensor in [*module.parameters(), *module.buffers()]:
            _in_place(tensor, "DistributedDataParallel", lambda buffer: comm.Bcast(buffer, root=0))
        named = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
        self._names = [name for name, _ in named]
        self._params = [p for _, p in named]
        self._position = {id(p): i for i, p in enumerate(self._params)}
        self._buckets = [
            _Bucket(indices, self._params)
            for indices in _assign_buckets(self._params, bucket_cap_mb * 2**20)
        ]
        self._bucket_of = [0] * len(self._params)
        for b, bucket in enumerate(self._buckets):
            for i in bucket.indices:
                self._bucket_of[i] = b
        # Per backward: gradients each parameter still expects, parameters each bucket still
        # waits for, the next bucket to reduce, and whether any gradient has arrived yet.
        self._expected = [0] * len(self._params)
        self._waiting = [0] * len(self._buckets)
        self._next_bucket = len(self._buckets)
        self._has_started = False
        self.allreduce_calls = 0
        self.allreduce_seconds = 0.0
        # The hooks hold the wrapper weakly: once it is gone, the module trains on its own.
        for i, param in enumerate(self._params):
            param.register_hook(functools.partial(_gradient_hook, weakref.ref(self), i))

    @property
    def bucket_sizes(self) -> list[int]:
        """The number of parameters in each bucket, in the order they are reduced."""
        return [len(bucket.indices) for bucket in self._buckets]

    def forward(self, *args, **kwargs):
        """The wrapped module's forward, noting which gradients its backward will bring."""
        if self._has_started and self._next_bucket < len(self._buckets):
            missing = [name for name, left in zip(self._names, self._expected) if left]
            raise DistributedError(
                f"DistributedDataParallel: the last backward did not reach parameter(s) "
                f"{', '.join(map(repr, missing))}, so no gradient was averaged for them or "
                "anything after them; make the loss depend on every output of forward "
                "(add 0 * output.sum() for one you do not use)"
            )
        out = self.module(*args, **kwargs)
        self._expect_gradients(out)
        return out

    def _expect_gradients(self, out: Any) -> None:
        """Mark the parameters that the graph behind ``out`` will send a gradient to."""
        expected = [0] * len(self._params)
        nodes = []
        for tensor in _tensors_in(out):
            if tensor.grad_fn is not None:
                nodes.append(tensor.grad_fn)
            elif id(tensor) in self._position:  # forward returned a parameter itself
                expected[self._position[id(tensor)]] = 1
        # A parameter's hook runs once per backward, with its total gradient.
        for node in node_order(nodes):
            for edge in node.edges:
                if isinstance(edge, Tensor) and id(edge) in self._position:
                    expected[self._position[id(edge)]] = 1
        self._expected = expected
        self._waiting = [sum(1 for i in b.indices if expected[i]) for b in self._buckets]
        self._next_bucket = 0
        self._has_started = False

    def _on_gradient(self, index: int, g: Tensor) -> Tensor | None:
        """Hook on parameter ``index``, with its total gradient ``g``: when it is the last one
        its bucket waited for, reduce every bucket that is ready, in order."""
        if self._expected[index] == 0:
            raise DistributedError(
                f"DistributedDataParallel: parameter {self._names[index]!r} received a "
                "gradient that the last forward through DistributedDataParallel did not "
                "produce; use the wrapped model's output once per forward, and put penalties "
                "on weights in the optimizer (weight_decay=) or inside forward"
            )
        if state.grad_enabled:
            raise DistributedError(
                "DistributedDataParallel: backward(create_graph=True) is not supported; "
                "gradients are averaged as arrays"
            )
        self._has_started = True
        self._expected[index] -= 1
        if self._expected[index]:
            return None
        self._waiting[self._bucket_of[index]] -= 1
        result = None
        while self._next_bucket < len(self._buckets) and not self._waiting[self._next_bucket]:
            averaged = self._reduce(self._buckets[self._next_bucket], index, g._array)
            result = averaged if averaged is not None else result
            self._next_bucket += 1
        return result

    def _reduce(self, bucket: _Bucket, current: int, g: np.ndarray) -> Tensor | None:
        """Average the bucket's gradients over ranks and write them back to each ``.grad``.

        The hook runs before the engine adds ``g`` to parameter ``current``'s ``.grad``, so
        ``g`` is added here, and if ``current`` is in this bucket its averaged gradient is
        returned (for the engine to store) with its ``.grad`` cleared first.
        """
        MPI = _import_mpi()
        for i, part in zip(bucket.indices, bucket.slices):
            grad = self._params[i].grad
            bucket.buffer[part] = 0 if grad is None else grad._array.ravel()
            if i == current:
                bucket.buffer[part] += g.ravel()
        start = time.perf_counter()
        _comm.Allreduce(MPI.IN_PLACE, bucket.buffer, op=MPI.SUM)
        self.allreduce_seconds += time.perf_counter() - start
        self.allreduce_calls += 1
        bucket.buffer /= _comm.Get_size()
        result = None
        for i, part in zip(bucket.indices, bucket.slices):
            param = self._params[i]
            averaged = Tensor._make(bucket.buffer[part].reshape(param.shape).copy())
            if i == current:
                param.grad, result = None, averaged
            else:
                param.grad = averaged
        return result


def _gradient_hook(ddp_ref: weakref.ref, index: int, g: Tensor) -> Tensor | None:
    ddp = ddp_ref()
    return None if ddp is None else ddp._on_gradient(index, g)


__all__ = [
    "DistributedDataParallel", "DistributedError", "DistributedSampler", "all_reduce", "barrier",
    "broadcast", "init", "is_initialized", "rank", "world_size",
]  # fmt: skip
