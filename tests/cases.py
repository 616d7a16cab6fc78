"""One Case per tensor op row (REGISTRY): an expression that runs on chainrule and PyTorch
tensors alike, the shapes it takes, and the domain of each input.

Cases live in one file per op family; this module merges them into CASES. A key may carry a
variant in brackets ("getitem[mask]"); every row needs at least one case.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st
from strategies import one, reals


@dataclass
class Case:
    """How to test one op.

    ``fn(*tensors)`` (or ``fn(lib, *tensors)`` with ``needs_lib``, where lib is chainrule or
    torch, for building index tensors) must give the same result on both libraries.
    ``shapes`` draws a tuple of input shapes; ``domain`` gives each input's elements.
    ``torch_fn`` only where PyTorch spells the op differently. ``grad_inputs`` lists the
    inputs that are differentiated (default: all).
    """

    fn: Callable
    shapes: st.SearchStrategy = field(default_factory=one)
    domain: tuple = (reals(),)
    torch_fn: Callable | None = None
    needs_lib: bool = False
    grad_inputs: tuple | None = None
    atol: float = 1e-10  # against PyTorch
    rtol: float = 1e-9
    fd_atol: float | None = None  # finite differences: conftest's FD_TOL unless given
    keeps_dtype: bool = True  # False for cases that convert dtypes on purpose

    def inputs_domain(self, n):
        """One element strategy per input (the last one repeats)."""
        domain = tuple(self.domain)
        return [domain[min(i, len(domain) - 1)] for i in range(n)]


def merged():
    """Every family's cases in one dict."""
    import cases_elementwise

    families = [cases_elementwise]
    for name in (
        "cases_reduce", "cases_shape", "cases_linalg", "cases_conv", "cases_numeric",
        "cases_cumulative", "cases_sorting", "cases_scatter", "cases_transcendental",
        "cases_statistics", "cases_activations", "cases_recurrent", "cases_norms",
    ):  # fmt: skip
        try:
            families.append(__import__(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    out = {}
    for module in families:
        overlap = set(out) & set(module.CASES)
        assert not overlap, f"cases defined twice: {overlap}"
        out.update(module.CASES)
    return out


CASES = merged()
