"""Run under mpirun by test_distributed: ranks build models of different shapes, and wrapping
them must raise the same clear error on every rank (no hang, no silent broadcast)."""

import chainrule
from chainrule import distributed as dist
from chainrule import nn


class Net(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(chainrule.zeros(4, hidden))
        self.bias = nn.Parameter(chainrule.zeros(hidden))

    def forward(self, x):
        return x @ self.weight + self.bias


def main() -> None:
    dist.init()
    rank = dist.rank()
    try:
        dist.DistributedDataParallel(Net(hidden=3 + 2 * rank))
    except dist.DistributedError as error:
        print(f"rank {rank} raised: {error}", flush=True)
    dist.barrier()  # both ranks got here: neither hangs in the wrap


if __name__ == "__main__":
    main()
