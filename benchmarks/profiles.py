"""`python -m benchmarks --profile`: where chainrule's eager step spends its time, op by op.

Each workload's ``chainrule`` row is run a few more times under `chainrule.profile`, each
call inside a ``step`` span: the table's forward rows are the ops, the ``...Backward`` rows
the graph nodes, and the ``step`` row's self time is what ran outside any op (an optimizer's
update, module calls, reading results into arrays). Times are totals over the profiled calls.
"""

from __future__ import annotations

from .suite import Workload

#: Calls profiled per workload (one with --quick), after two calls that are not.
CALLS = 10
#: Rows printed, the largest self times first.
ROWS = 15


def profile_table(workload: Workload, quick: bool) -> str | None:
    """The profile of ``workload``'s chainrule row, with a one-line header; None when the
    workload has no such row."""
    impl = next((impl for impl in workload.impls if impl.name == "chainrule"), None)
    if impl is None:
        return None
    import chainrule

    built = impl.build()
    if isinstance(built, tuple):  # (prepare, step): only the step is profiled
        prepare, step = built

        def call():
            return step(prepare())

    else:
        call = built
    calls = 1 if quick else CALLS
    for _ in range(2):
        call()
    with chainrule.profile() as prof:
        for _ in range(calls):
            with chainrule.profiler.record_function("step"):
                call()
    header = (
        f"{workload.key} chainrule: where {calls} call(s) of the step went "
        f"(chainrule.profile; 'step' self time is outside any op)"
    )
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=ROWS, header=header)
