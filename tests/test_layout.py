"""The package's layout holds: imports point down a fixed order of modules (with one documented
seam where Tensor meets the ops), and a long module says why it is one concept.
docs/book/11_layout.md explains the order."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Every module, lowest first: each may import only modules before it. A new module takes its
#: place here, which is the moment to ask what it stands on.
ORDER = [
    # What everything stands on: errors, the op declaration language, the graph's nodes.
    "allocator", "errors", "numpy_warnings", "signatures", "counting", "special", "kernels", "op",
    "graph", "dtypes", "settings",
    "ops.dims",
    # The scalar engine, on floats.
    "scalar.rules", "scalar.value", "scalar.dual", "scalar.nn", "scalar",
    # The tensor engine: the tensor, the backward pass, running rows, then the rows.
    "tensor_base", "methods.numeric", "methods.reductions", "methods.indexing", "methods.linalg",
    "methods.factories", "methods.special", "methods.statistics", "methods.aliases",
    "methods.variants", "methods", "_tensor", "autograd_compat", "autograd", "function",
    "profiler", "compiler.program", "compiler.tracer", "compiler.passes", "compiler.compiled",
    "compiler",
    "creation", "random", "xp",
    "ops.elementwise", "ops.numeric", "ops.reduce", "ops.normalizers", "ops.scan", "ops.sorting",
    "ops.indexing", "ops.selecting",
    "ops.scattering", "ops.shape", "ops.strided", "ops.joining", "ops.padding", "ops.linalg",
    "ops.products", "ops.decompositions", "ops.factorizations", "ops.spectral",
    "ops.transcendental",
    "ops.statistics", "ops.calculus", "ops.histograms", "ops.windows",
    "ops.arranging", "ops.conv", "ops.pool",
    "ops.pool3d", "ops.unpool", "ops.grid", "ops.activations", "ops.aliases", "ops",
    "ops.public", "inplace",
    # What is built on the engine.
    "func.batching", "func.transforms", "func.mapping", "func.stateless", "func", "gradcheck",
    "checkpoint", "io",
    "data.datasets", "data.sampler", "data.dataset", "data.loader", "data", "nn.grads",
    "nn._checks", "nn.init", "nn.module", "nn.container", "nn.distance", "nn.losses",
    "nn.norms", "nn.sparse", "nn.sampling", "nn.activation_functions", "nn.dropouts",
    "nn.losses_margin", "nn.linear_losses", "nn.ctc", "nn.multihead", "nn.spatial_functions",
    "nn.functional", "nn.activation", "nn.layers",
    "nn.dropout_layers", "nn.loss_layers", "nn.linear_loss_layers", "nn.adaptive",
    "nn.conv", "nn.pooling", "nn.unpooling", "nn.padding", "nn.normalization", "nn.legacy",
    "nn.attention", "nn.recurrent", "nn.transformer", "nn.reparam", "nn.utils", "nn",
    "nn.torch_functions", "nn.torch_layer_functions", "linalg_solvers", "linalg",
    "optim.optimizers",
    "optim.adam", "optim.adaptive", "optim.classic", "optim.matrix", "optim.lbfgs",
    "optim.scheduler", "optim.cyclic",
    "optim.lr_scheduler", "optim", "distributed",
    "viz", "texts", "",  # chainrule itself
    "apps", "__main__",
]  # fmt: skip

#: The upward imports there are, each at the foot of its module: Tensor's methods (in _tensor and
#: the family mixins of chainrule.methods) call the ops,
#: the backward pass and in-place writes (which rewrite history with an op), which all make
#: Tensors; `xp` (NumPy names that record
#: ops when given Tensors) calls the ops, whose rules call `xp`.
SEAM = {("_tensor", "autograd"), ("_tensor", "inplace"), ("_tensor", "ops"), ("xp", "ops")}


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC / "chainrule").with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _place(module: str) -> int:
    """A module's position in ORDER: its own, else its package's (apps.* are all "apps")."""
    while module not in ORDER:
        if not module:
            raise KeyError(module)
        module = module.rpartition(".")[0]
    return ORDER.index(module)


def _imports(path: Path) -> set[str]:
    """The chainrule modules ``path`` imports (anywhere in it), as names inside chainrule."""
    module = _name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module.startswith("chainrule"):
                target = node.module.removeprefix("chainrule").lstrip(".")
            else:
                continue
            for alias in node.names:  # `from . import ops` imports the module chainrule.ops
                sub = f"{target}.{alias.name}".lstrip(".")
                is_module = (SRC / "chainrule" / sub.replace(".", "/")).with_suffix(".py")
                is_package = SRC / "chainrule" / sub.replace(".", "/")
                found.add(sub if is_module.exists() or is_package.is_dir() else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("chainrule"):
                    found.add(alias.name.removeprefix("chainrule").lstrip("."))
    return found - {module}


MODULES = sorted(SRC.joinpath("chainrule").rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _name(p) or "chainrule")
def test_imports_point_down_except_at_the_seam(path):
    module = _name(path)
    upward = [
        target
        for target in sorted(_imports(path))
        if _place(target) > _place(module) and (module, target) not in SEAM
    ]
    assert not upward, f"{module or 'chainrule'} imports {upward}, which come after it in ORDER"


def test_every_module_has_its_place_and_the_seam_is_only_what_is_used():
    names = {_name(path) for path in MODULES}
    unplaced = [name for name in names if not any(name == o or name.startswith(o + ".")
                                                  for o in ORDER if o)]  # fmt: skip
    assert unplaced == [""], f"add these to ORDER: {sorted(set(unplaced) - {''})}"
    used = {(m, t) for path in MODULES for t in _imports(path) if (m := _name(path), t) in SEAM}
    assert used == SEAM


#: Past this many lines a module's docstring says why it stays whole: a module holds one
#: concept, and splitting by a line count scatters one (docs/book/11_layout.md).
LONG = 800


def test_a_module_over_800_lines_says_in_its_docstring_why_it_stays_whole():
    unexplained = []
    for path in MODULES:
        source = path.read_text()
        if len(source.splitlines()) > LONG:
            docstring = ast.get_docstring(ast.parse(source)) or ""
            if "stays whole" not in docstring:
                unexplained.append(f"{_name(path)} ({len(source.splitlines())} lines)")
    assert not unexplained, (
        f"{', '.join(unexplained)}: split by concept, or say in the module docstring why it "
        "stays whole (the words 'stays whole' mark the reason)"
    )
