"""Run under mpirun by test_distributed: rank 1 raises while rank 0 waits in a collective;
init()'s excepthook must abort both instead of leaving rank 0 hanging."""

import chainrule
from chainrule import distributed as dist


def main() -> None:
    dist.init()
    if dist.rank() == 1:
        raise ValueError("rank one failed on purpose")
    dist.all_reduce(chainrule.ones(3))  # rank 0 waits here for a partner that never comes
    print("rank 0 was not aborted", flush=True)


if __name__ == "__main__":
    main()
