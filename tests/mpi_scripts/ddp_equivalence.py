"""Run under mpirun by test_distributed: 20 steps of DDP training on 2 ranks, each taking its
half of every global batch, against one process taking the whole global batch.

Rank 0 prints one JSON line: the largest difference between the two runs' parameters, the
largest difference between the ranks' parameters, and the allreduce and bucket counts.
Usage: mpirun -n 2 python ddp_equivalence.py BUCKET_CAP_MB
"""

import json
import sys

import numpy as np
from mpi4py import MPI

import chainrule
from chainrule import distributed as dist
from chainrule import nn, optim
from chainrule.data import DataLoader, TensorDataset

GLOBAL_BATCH, STEPS, SAMPLES, CLASSES = 16, 20, 88, 3


class MLP(nn.Module):
    """4 -> 16 -> 3, tanh, float64, initialised from ``seed``."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w1 = nn.Parameter(chainrule.tensor(rng.standard_normal((4, 16)) * 0.5))
        self.b1 = nn.Parameter(chainrule.tensor(rng.standard_normal(16) * 0.1))
        self.w2 = nn.Parameter(chainrule.tensor(rng.standard_normal((16, CLASSES)) * 0.5))
        self.b2 = nn.Parameter(chainrule.tensor(rng.standard_normal(CLASSES) * 0.1))

    def forward(self, x):
        return (x @ self.w1 + self.b1).tanh() @ self.w2 + self.b2


def cross_entropy(logits, y):
    """Mean over the batch: the mean over each rank's half, averaged over ranks, is the mean
    over the global batch."""
    one_hot = chainrule.tensor(np.eye(CLASSES)[y.numpy()])
    return -(logits.log_softmax(dim=1) * one_hot).sum(dim=1).mean()


def flat(model) -> np.ndarray:
    """Every parameter, copied into one vector."""
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def train(model, loader, sampler, steps: int) -> None:
    optimizer = optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    step, epoch = 0, 0
    while step < steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            cross_entropy(model(x), y).backward()
            optimizer.step()
            step += 1
            if step == steps:
                return
        epoch += 1


def main() -> None:
    bucket_cap_mb = float(sys.argv[1])
    dist.init()
    rank, size = dist.rank(), dist.world_size()
    rng = np.random.default_rng(7)
    data = TensorDataset(rng.standard_normal((SAMPLES, 4)), rng.integers(0, CLASSES, SAMPLES))

    # Each rank builds different weights: the wrap must broadcast rank 0's.
    ddp = dist.DistributedDataParallel(MLP(seed=100 + rank), bucket_cap_mb=bucket_cap_mb)
    sampler = dist.DistributedSampler(data, shuffle=True, seed=3)
    loader = DataLoader(data, batch_size=GLOBAL_BATCH // size, sampler=sampler)
    train(ddp, loader, sampler, STEPS)
    mine = flat(ddp.module)
    everyone = MPI.COMM_WORLD.gather(mine, root=0)

    if rank == 0:
        single = MLP(seed=100)
        initial = flat(single)
        one = dist.DistributedSampler(data, num_replicas=1, rank=0, shuffle=True, seed=3)
        train(single, DataLoader(data, batch_size=GLOBAL_BATCH, sampler=one), one, STEPS)
        reference = flat(single)
        report = {
            "max_diff": float(np.abs(mine - reference).max()),
            "rank_diff": float(max(np.abs(other - mine).max() for other in everyone)),
            "moved": float(np.abs(reference - initial).max()),
            "allreduce_calls": ddp.allreduce_calls,
            "buckets": len(ddp.bucket_sizes),
            "steps": STEPS,
        }
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
