"""Run under mpirun by test_distributed: DDP's rules beyond plain training. Two backward
passes accumulate averaged gradients; an output the loss ignores is a clear error on every
rank; a penalty on a weight outside forward is averaged with the rest of its gradient. Each
check prints one line per rank."""

import gc

import numpy as np

import chainrule
from chainrule import autograd, nn
from chainrule import distributed as dist


class Net(nn.Module):
    """Returns (x @ weight + bias, x @ extra): a main output and an auxiliary one."""

    def __init__(self) -> None:
        super().__init__()
        rng = np.random.default_rng(0)
        self.weight = nn.Parameter(chainrule.tensor(rng.standard_normal((3, 2))))
        self.bias = nn.Parameter(chainrule.tensor(rng.standard_normal(2)))
        self.extra = nn.Parameter(chainrule.tensor(rng.standard_normal((3, 1))))

    def forward(self, x):
        return x @ self.weight + self.bias, x @ self.extra


def loss_of(outputs):
    main, aux = outputs
    return (main**2).sum() + aux.sum()


def check_accumulation(rank: int) -> None:
    """forward/backward twice: .grad is the sum of the two rank-averaged gradients."""
    ddp = dist.DistributedDataParallel(Net(), bucket_cap_mb=1e-5)
    rng = np.random.default_rng(10 + rank)
    batches = [chainrule.tensor(rng.standard_normal((4, 3))) for _ in range(2)]
    params = list(ddp.module.parameters())
    expected = [chainrule.zeros_like(p) for p in params]
    for x in batches:
        # autograd.grad leaves .grad and DDP's hooks alone: the local gradient, unaveraged.
        for total, g in zip(expected, autograd.grad(loss_of(ddp.module(x)), params)):
            total += g
    for total in expected:
        dist.all_reduce(total, op="mean")
    for x in batches:
        loss_of(ddp(x)).backward()
    for p, total in zip(params, expected):
        np.testing.assert_allclose(p.grad.numpy(), total.numpy(), rtol=1e-12, atol=1e-12)
    module = ddp.module
    del ddp
    gc.collect()  # the hooks hold the wrapper weakly: the bare module now trains on its own
    loss_of(module(batches[0])).backward()
    print(f"rank {rank}: accumulation ok", flush=True)


def check_unused_output(rank: int) -> None:
    ddp = dist.DistributedDataParallel(Net())
    x = chainrule.ones(4, 3, dtype=chainrule.float64)  # the weights' dtype
    main, _ = ddp(x)
    main.sum().backward()
    try:
        ddp(x)
    except dist.DistributedError as error:
        print(f"rank {rank}: unused output: {error}", flush=True)


def check_weight_outside_forward(rank: int) -> None:
    """A penalty on a weight outside forward: the weight's hook sees its total gradient once
    (as PyTorch's AccumulateGrad hooks do), so .grad is the rank average of all of it."""
    ddp = dist.DistributedDataParallel(Net())
    x = chainrule.tensor(np.random.default_rng(20 + rank).standard_normal((4, 3)))
    params = list(ddp.module.parameters())
    expected = autograd.grad(loss_of(ddp.module(x)) + (ddp.module.weight**2).sum(), params)
    for g in expected:
        dist.all_reduce(g, op="mean")
    (loss_of(ddp(x)) + (ddp.module.weight**2).sum()).backward()
    for p, g in zip(params, expected):
        np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-12)
    print(f"rank {rank}: weight outside forward: averaged with the penalty", flush=True)


def main() -> None:
    dist.init()
    rank = dist.rank()
    check_accumulation(rank)
    check_unused_output(rank)
    check_weight_outside_forward(rank)
    dist.barrier()


if __name__ == "__main__":
    main()
