"""Run under mpirun by test_distributed: all_reduce, broadcast and barrier on every rank."""

import numpy as np

import chainrule
from chainrule import distributed as dist


def main() -> None:
    dist.init()
    rank, size = dist.rank(), dist.world_size()
    assert dist.is_initialized() and size == 2, (rank, size)

    x = chainrule.tensor(np.array([1.0, 2.0, 3.0]) * (rank + 1))  # float64
    dist.all_reduce(x)
    np.testing.assert_array_equal(x.numpy(), [3.0, 6.0, 9.0])

    y = chainrule.tensor(np.full((2, 2), rank + 1, np.float32))
    dist.all_reduce(y, op="mean")
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), np.full((2, 2), 1.5))

    counts = chainrule.tensor(np.array([rank, 10 * rank]))  # int64
    dist.all_reduce(counts, op="max")
    np.testing.assert_array_equal(counts.numpy(), [1, 10])

    # A non-contiguous view is reduced through a contiguous copy and written back.
    base = chainrule.tensor(np.arange(6.0).reshape(2, 3) + rank)
    view = base.T
    dist.all_reduce(view, op="min")
    np.testing.assert_array_equal(base.numpy(), np.arange(6.0).reshape(2, 3))

    z = chainrule.tensor(np.array([10.0 * rank, -1.0 * rank]))
    dist.broadcast(z, src=1)
    np.testing.assert_array_equal(z.numpy(), [10.0, -1.0])

    dist.barrier()
    print(f"collectives ok on rank {rank}", flush=True)


if __name__ == "__main__":
    main()
