"""Data-parallel training of the medium MLP (784-512-256-10, float32) on 1 and N MPI ranks.

Run: mpirun -n 2 python -m benchmarks.distributed_mlp [--steps 30]
(plain ``python -m benchmarks.distributed_mlp`` measures the one-process rows only).

Each rank uses one BLAS thread: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are set to 1 here,
before NumPy loads, unless already set; so N ranks use N cores. The rows:
  1 process                one core, global batch 256: the baseline
  1 process, N threads     the same N cores used through BLAS threads instead (threadpoolctl)
  N ranks, batch split     global batch 256, 256/N per rank (strong scaling)
  N ranks, 256 per rank    global batch 256*N (weak scaling)
A step is zero_grad, forward, cross-entropy, backward (with DDP's gradient allreduce) and an
SGD step on a fixed batch. Step time is the median over steps of the slowest rank; efficiency
is throughput / (N x the baseline's); "allreduce" is the time per step spent in DDP's
Allreduce calls, waiting for the slower rank included. The last line times an Allreduce of
the gradient's size alone.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402  (after the BLAS settings, which must precede NumPy)
import time  # noqa: E402

import numpy as np  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule import distributed as dist  # noqa: E402
from chainrule import nn, optim  # noqa: E402

SIZES = (784, 512, 256, 10)
GLOBAL_BATCH = 256


class MLP(nn.Module):
    """784-512-256-10 with ReLU, float32, He-initialised from ``seed``."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        for i, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:])):
            weight = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)
            setattr(self, f"weight{i}", nn.Parameter(cr.tensor(weight.astype(np.float32))))
            setattr(self, f"bias{i}", nn.Parameter(cr.zeros(fan_out)))

    def forward(self, x):
        layers = len(SIZES) - 1
        for i in range(layers):
            x = x @ getattr(self, f"weight{i}") + getattr(self, f"bias{i}")
            x = x.relu() if i < layers - 1 else x
        return x


def make_batch(size: int, seed: int) -> tuple[cr.Tensor, cr.Tensor]:
    """Random float32 inputs and one-hot float32 targets."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((size, SIZES[0])).astype(np.float32)
    one_hot = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], size)]
    return cr.tensor(x), cr.tensor(one_hot)


def time_steps(model: nn.Module, x: cr.Tensor, one_hot: cr.Tensor, steps: int) -> float:
    """Median seconds of one training step, after two warm-up steps."""
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(steps + 2):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = -(model(x).log_softmax(dim=1) * one_hot).sum(dim=1).mean()
        loss.backward()
        optimizer.step()
        if step >= 2:
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def slowest(seconds: float) -> float:
    """The largest of every rank's ``seconds``."""
    value = cr.tensor(np.array([seconds]))
    dist.all_reduce(value, op="max")
    return float(value[0])


def measure_ranks(per_rank: int, steps: int) -> tuple[float, float, list[int]]:
    """(step seconds, allreduce seconds per step, bucket sizes) with DDP on every rank."""
    model = dist.DistributedDataParallel(MLP(seed=0))
    x, one_hot = make_batch(per_rank, seed=1 + dist.rank())
    dist.barrier()
    seconds = slowest(time_steps(model, x, one_hot, steps))
    allreduce = slowest(model.allreduce_seconds / (steps + 2))  # warm-up steps included
    return seconds, allreduce, model.bucket_sizes


def measure_one_process(threads: int, steps: int) -> float:
    """Step seconds of the plain model with ``threads`` BLAS threads, batch 256."""
    x, one_hot = make_batch(GLOBAL_BATCH, seed=1)
    if threads == 1:
        return time_steps(MLP(seed=0), x, one_hot, steps)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        return time_steps(MLP(seed=0), x, one_hot, steps)


def measure_allreduce_alone(size: int, repeats: int = 20) -> float:
    """Median seconds of an Allreduce of ``size`` float32 numbers, every rank at the barrier."""
    buffer = cr.zeros(size)
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(buffer)
        times.append(time.perf_counter() - start)
    return slowest(float(np.median(times)))


def wait_quietly(comm) -> None:
    """Wait for rank 0 without spinning a core (MPI's blocking waits poll)."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.01)


def main() -> None:
    """Measure, then print the table on rank 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="timed steps per row")
    args = parser.parse_args()
    dist.init()
    n, rank = dist.world_size(), dist.rank()
    parameters = sum(p.numel() for p in MLP().parameters())
    rows = []  # (label, ranks, global batch, step seconds, allreduce seconds)
    if n > 1:
        for label, per_rank in (("batch split", GLOBAL_BATCH // n), ("256 per rank", 256)):
            seconds, allreduce, buckets = measure_ranks(per_rank, args.steps)
            rows.append((f"{n} ranks, {label}", n, per_rank * n, seconds, allreduce))
        alone = measure_allreduce_alone(parameters)
    # The one-process rows run on rank 0 while the other ranks sleep, leaving their cores.
    from mpi4py import MPI

    if rank == 0:
        base = measure_one_process(1, args.steps)
        rows.insert(0, ("1 process", 1, GLOBAL_BATCH, base, 0.0))
        if n > 1:
            threaded = measure_one_process(n, args.steps)
            rows.insert(1, (f"1 process, {n} BLAS threads", 1, GLOBAL_BATCH, threaded, 0.0))
        MPI.COMM_WORLD.Ibarrier().Wait()
    else:
        wait_quietly(MPI.COMM_WORLD)
    if rank != 0:
        return
    threads = os.environ["OPENBLAS_NUM_THREADS"]
    print(f"MLP {'-'.join(map(str, SIZES))} float32, {parameters:,} parameters "
          f"({parameters * 4 / 2**20:.2f} MiB of gradient per step); BLAS threads per rank: "
          f"{threads}; {args.steps} steps per row")  # fmt: skip
    print(f"{'setup':<28} {'batch':>5} {'step ms':>8} {'samples/s':>10} {'efficiency':>10} "
          f"{'allreduce ms':>12} {'of step':>7}")  # fmt: skip
    for label, ranks, batch, seconds, allreduce in rows:
        throughput = batch / seconds
        cores = ranks if "threads" not in label else n
        efficiency = throughput / (cores * GLOBAL_BATCH / base)
        share = f"{allreduce / seconds:>7.0%}" if allreduce else f"{'-':>7}"
        reduce_ms = f"{allreduce * 1e3:>12.2f}" if allreduce else f"{'-':>12}"
        print(f"{label:<28} {batch:>5} {seconds * 1e3:>8.2f} {throughput:>10.0f} "
              f"{efficiency:>10.0%} {reduce_ms} {share}")  # fmt: skip
    if n > 1:
        print(
            f"DDP buckets (parameters each): {buckets}; an Allreduce of {parameters:,} "
            f"float32 alone: {alone * 1e3:.2f} ms ({parameters * 4 / alone / 1e9:.2f} GB/s)"
        )
    else:
        print("Run it under mpirun -n 2 for the rows with ranks.")


if __name__ == "__main__":
    main()
