"""chainrule.distributed: DistributedSampler and the errors before init() in this process;
collectives, DDP and faults on 2 ranks started by mpirun running tests/mpi_scripts/."""

import functools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chainrule
from chainrule import distributed as dist
from chainrule import nn
from chainrule.data import DataLoader, TensorDataset
from chainrule.errors import DomainError, DTypeError

SCRIPTS = Path(__file__).parent / "mpi_scripts"
TIMEOUT_S = 60  # a hang fails the test instead of blocking CI


# In this process: no MPI needed.


def test_import_chainrule_needs_no_mpi4py():
    code = "import sys, chainrule.distributed; print('mpi4py' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_init_without_mpi4py_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # makes `from mpi4py import MPI` fail
    with pytest.raises(ImportError, match=r"needs mpi4py .*pip install chainrule\[mpi\]"):
        dist.init()
    assert not dist.is_initialized()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(chainrule.zeros(2, 2))

    def forward(self, x):
        return x @ self.weight


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("all_reduce", lambda: dist.all_reduce(chainrule.ones(2))),
        ("broadcast", lambda: dist.broadcast(chainrule.ones(2))),
        ("barrier", dist.barrier),
        ("rank", dist.rank),
        ("world_size", dist.world_size),
        ("DistributedDataParallel", lambda: dist.DistributedDataParallel(Net())),
        (r"DistributedSampler \(num_replicas=None\)", lambda: dist.DistributedSampler(range(4))),
    ],
)
def test_collectives_before_init_are_errors(name, call):
    with pytest.raises(dist.DistributedError, match=rf"^{name}: the process group is not init"):
        call()


def test_all_reduce_checks_its_arguments_first():
    with pytest.raises(DomainError, match=r"all_reduce: op must be one of sum, mean, max, min"):
        dist.all_reduce(chainrule.ones(2), op="prod")
    with pytest.raises(DTypeError, match=r"all_reduce: op='mean' needs a floating-point"):
        dist.all_reduce(chainrule.tensor([1, 2]), op="mean")
    with pytest.raises(DTypeError, match=r"broadcast: expected a Tensor, got ndarray"):
        dist.broadcast(np.ones(2))


def shares(n: int, replicas: int, **kwargs) -> list[list[int]]:
    """Every rank's indices for one epoch."""
    return [list(dist.DistributedSampler(range(n), replicas, r, **kwargs)) for r in range(replicas)]


@pytest.mark.parametrize(("n", "replicas"), [(12, 3), (10, 2), (7, 1), (5, 5)])
def test_sampler_shares_are_disjoint_and_cover_the_epoch(n, replicas):
    parts = shares(n, replicas, seed=4)
    assert sorted(sum(parts, [])) == list(range(n))
    assert {len(part) for part in parts} == {n // replicas}


def test_sampler_pads_with_the_first_indices_of_the_permutation(torch):
    parts = shares(10, 4, seed=1)
    order = torch.randperm(10, generator=torch.Generator().manual_seed(1)).numpy()
    assert [len(part) for part in parts] == [3, 3, 3, 3]
    assert sorted(sum(parts, [])) == sorted([*range(10), *order[:2]])
    assert [part[-1] for part in parts[2:]] == order[:2].tolist()  # positions 10 and 11


def test_sampler_pads_a_dataset_smaller_than_the_ranks_by_cycling():
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]


def test_sampler_drop_last_cuts_the_tail_instead():
    parts = shares(10, 4, seed=2, drop_last=True)
    assert [len(part) for part in parts] == [2, 2, 2, 2]
    assert len(set(sum(parts, []))) == 8


def test_sampler_without_shuffle_deals_indices_in_turn():
    assert shares(6, 2, shuffle=False) == [[0, 2, 4], [1, 3, 5]]


def test_sampler_set_epoch_reshuffles_alike_on_every_rank():
    samplers = [dist.DistributedSampler(range(20), 2, r, seed=5) for r in range(2)]
    first = [list(s) for s in samplers]
    assert [list(s) for s in samplers] == first  # same epoch: same order
    for sampler in samplers:
        sampler.set_epoch(1)
    second = [list(s) for s in samplers]
    assert second != first
    assert sorted(sum(second, [])) == list(range(20))
    again = dist.DistributedSampler(range(20), 2, 1, seed=5)
    again.set_epoch(1)
    assert list(again) == second[1]  # a fresh sampler on that rank agrees


def test_sampler_batches_on_two_ranks_make_the_single_process_batches():
    data = TensorDataset(chainrule.arange(22))
    one = dist.DistributedSampler(data, num_replicas=1, rank=0, seed=9)
    single = [x.tolist() for (x,) in DataLoader(data, batch_size=8, sampler=one)]
    halves = [
        [x.tolist() for (x,) in DataLoader(data, batch_size=4, sampler=sampler)]
        for sampler in (dist.DistributedSampler(data, 2, r, seed=9) for r in range(2))
    ]
    assert [sorted(a + b) for a, b in zip(*halves)] == [sorted(batch) for batch in single]


def test_sampler_rejects_a_rank_outside_the_group():
    with pytest.raises(DomainError, match=r"DistributedSampler: rank must be from 0 to 2, got 3"):
        dist.DistributedSampler(range(4), num_replicas=3, rank=3)


def test_dataloader_takes_its_order_and_length_from_a_sampler():
    data = TensorDataset(chainrule.arange(10))
    loader = DataLoader(data, batch_size=2, sampler=[9, 8, 7])
    assert len(loader) == 2
    assert [x.tolist() for (x,) in loader] == [[9, 8], [7]]
    with pytest.raises(DomainError, match=r"DataLoader: sampler and shuffle=True cannot be"):
        DataLoader(data, sampler=[0], shuffle=True)


# On two ranks, through mpirun.


@functools.cache
def _launcher(mpirun: str) -> tuple[list[str], dict[str, str]]:
    """Command prefix and environment for 2 ranks on however many cores there are."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    command = [mpirun, "-n", "2"]
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in version:  # MPICH oversubscribes and runs as root without being asked
        command.append("--oversubscribe")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return command, env


def run_on_two_ranks(mpirun: str, script: str, *args: str) -> tuple[int, str]:
    """(exit status, stdout and stderr) of tests/mpi_scripts/``script`` on 2 ranks."""
    command, env = _launcher(mpirun)
    process = subprocess.Popen(
        [*command, sys.executable, str(SCRIPTS / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, so a hang can be killed whole
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"mpirun {script} did not finish in {TIMEOUT_S} s:\n{output}")
    return process.returncode, output


def test_collectives_on_two_ranks(mpirun):
    status, output = run_on_two_ranks(mpirun, "collectives.py")
    assert status == 0, output
    assert "collectives ok on rank 0" in output and "collectives ok on rank 1" in output


@pytest.mark.parametrize(("bucket_cap_mb", "buckets"), [(25.0, 1), (1e-4, 3)])
def test_ddp_on_two_ranks_matches_one_process_on_the_global_batch(mpirun, bucket_cap_mb, buckets):
    status, output = run_on_two_ranks(mpirun, "ddp_equivalence.py", str(bucket_cap_mb))
    assert status == 0, output
    report = json.loads(output.strip().splitlines()[-1])
    assert report["max_diff"] < 1e-6, report
    assert report["rank_diff"] == 0.0, report
    assert report["moved"] > 0.1, report  # training did move the weights
    assert report["buckets"] == buckets
    assert report["allreduce_calls"] == report["steps"] * buckets  # one call per bucket


def test_ddp_accumulates_and_names_misuse_on_every_rank(mpirun):
    status, output = run_on_two_ranks(mpirun, "ddp_rules.py")
    assert status == 0, output
    for rank in (0, 1):
        assert f"rank {rank}: accumulation ok" in output
        assert (
            f"rank {rank}: unused output: DistributedDataParallel: the last backward did not "
            "reach parameter(s) 'extra'"
        ) in output
        assert f"rank {rank}: weight outside forward: averaged with the penalty" in output


def test_a_rank_that_raises_aborts_every_rank(mpirun):
    status, output = run_on_two_ranks(mpirun, "rank_raises.py")
    assert status != 0
    assert "rank 1 of 2 raised ValueError: rank one failed on purpose" in output
    assert "rank 0 was not aborted" not in output


def test_mismatched_parameter_shapes_fail_at_wrap_on_every_rank(mpirun):
    status, output = run_on_two_ranks(mpirun, "mismatched_model.py")
    assert status == 0, output
    for rank in (0, 1):
        assert f"rank {rank} raised: DistributedDataParallel: the ranks built different" in output
    assert output.count("parameter 'weight' has shape (4, 3) on rank 0 but (4, 5) on rank 1") == 2
