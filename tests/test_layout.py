"""The package's layout holds: imports point down a fixed order of modules (with one documented
seam where Tensor meets the ops), a long module says why it is one concept, and the maps in
README's "Layout" and docs/book/11_layout.md (which explains the order) name every top-level
module and package and nothing that is not there."""

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Every module, lowest first: each may import only modules before it. A new module takes its
#: place here, which is the moment to ask what it stands on.
ORDER = [
    # What everything stands on: errors, the op declaration language, the graph's nodes.
    "allocator", "errors", "numpy_warnings", "signatures", "counting", "observe", "special",
    "kernels", "tensor_rules", "graph", "dtypes", "settings",
    # The scalar engine, on floats.
    "scalar.rules", "scalar.value", "scalar.dual", "scalar.nn", "scalar",
    # The tensor engine: the tensor, the backward pass, running rows, then the rows.
    "tensor_base", "methods", "methods.numeric", "methods.reductions", "methods.indexing",
    "methods.linalg", "methods.factories", "methods.special", "methods.statistics",
    "methods.aliases", "methods.variants", "_tensor", "autograd_compat", "autograd", "dispatch",
    "op", "function", "profiler", "compiler.program", "compiler.update", "compiler.tracer",
    "compiler.pieces", "compiler.passes", "compiler.backend_numba", "compiler.fusion",
    "compiler.compiled", "compiler",
    "creation", "tensor_types", "vector_math", "generator", "rejection_sampling", "random", "xp",
    "ops.arguments", "ops.elementwise", "ops.reduce", "ops.normalizers", "ops.picking",
    "ops.cumulative", "ops.sorting", "ops.indexing", "ops.selecting", "ops.scattering",
    "ops.shape", "ops.strided", "ops.joining", "ops.padding", "ops.flat_indexing", "ops.numeric",
    "ops.transcendental", "ops.statistics", "ops.calculus", "ops.histograms", "ops.windows",
    "ops.sampling",
    # All of linear algebra: the rows, torch's spellings and the torch.linalg namespace.
    "linalg.matrices", "linalg.einsum", "linalg.products", "linalg.triangular",
    "linalg.lu_factorization", "linalg.inverses", "linalg.decompositions",
    "linalg.matrix_functions", "linalg.norms", "linalg.lowrank", "linalg.structured", "linalg",
    "ops.conv", "ops.pooling", "ops.grid", "ops.activations", "ops.recurrent", "ops",
    "ops.public", "inplace",
    # What is built on the engine.
    "func.batching", "func.transforms", "func.mapping", "func.stateless", "func", "gradcheck",
    "checkpoint",
    "data.toy_datasets", "data.sampler", "data.dataset", "data.dataloader", "data",
    "nn.parameter", "nn.init",
    "nn.functional._checks", "nn.functional.activation", "nn.functional.dropout_functions",
    "nn.functional.linear_functions", "nn.functional.distance", "nn.functional.loss",
    "nn.functional.loss_ctc", "nn.functional.loss_linear_cross_entropy",
    "nn.functional.normalization", "nn.functional.sparse", "nn.functional.upsampling",
    "nn.functional.pixelshuffle", "nn.functional.attention", "nn.functional",
    "nn.functional.toplevel", "nn.grad", "nn.attention",
    "nn.modules.utils",
    "nn.modules.module", "nn.modules.container", "nn.modules.linear", "nn.modules.activation",
    "nn.modules.distance", "nn.modules.dropout", "nn.modules.flatten", "nn.modules.fold",
    "nn.modules.channelshuffle", "nn.modules.conv", "nn.modules.pooling", "nn.modules.padding",
    "nn.modules.normalization", "nn.modules.batchnorm", "nn.modules.instancenorm",
    "nn.modules.loss", "nn.modules.adaptive", "nn.modules.sparse", "nn.modules.pixelshuffle",
    "nn.modules.upsampling", "nn.utils.rnn", "nn.modules.rnn", "nn.modules.transformer",
    "nn.modules",
    "nn.utils.clip_grad", "nn.utils.convert_parameters", "nn.utils.weight_norm",
    "nn.utils.spectral_norm", "nn.utils.fusion", "nn.utils.init", "nn.utils.memory_format",
    "nn.utils.parametrize", "nn.utils.parametrizations",
    "nn.utils", "nn", "torch_format", "io",
    "optim.arithmetic", "optim.optimizer", "optim.sgd",
    "optim.adam", "optim.rmsprop", "optim.adagrad", "optim.adadelta", "optim.rprop", "optim.asgd",
    "optim.matrix", "optim.lbfgs",
    "optim.lr_scheduler.base", "optim.lr_scheduler.formulas", "optim.lr_scheduler.cyclic",
    "optim.lr_scheduler.plateau", "optim.lr_scheduler.combined",
    "optim.lr_scheduler", "optim.swa_utils", "optim", "distributed",
    "compat.amp", "compat.cuda", "compat.accelerator", "compat.backends", "compat.torchscript",
    "compat.onnx", "compat.hub", "compat.process_groups",
    "compat.testing", "compat",
    # Probability distributions on the engine, named as torch.distributions' modules.
    "distributions.utils", "distributions.constraints", "distributions.distribution",
    "distributions.exp_family", "distributions.normal", "distributions.uniform",
    "distributions.cauchy", "distributions.von_mises", "distributions.laplace",
    "distributions.exponential",
    "distributions.poisson", "distributions.gamma", "distributions.chi2", "distributions.studentT",
    "distributions.fishersnedecor", "distributions.generalized_pareto", "distributions.dirichlet",
    "distributions.beta",
    "distributions.bernoulli", "distributions.continuous_bernoulli",
    "distributions.geometric", "distributions.binomial",
    "distributions.negative_binomial", "distributions.categorical", "distributions.multinomial",
    "distributions.one_hot_categorical", "distributions.mixture_same_family",
    "distributions.multivariate_normal", "distributions.lowrank_multivariate_normal",
    "distributions.wishart",
    "distributions.independent", "distributions.transforms",
    "distributions.transformed_distribution", "distributions.constraint_registry",
    "distributions.log_normal", "distributions.logistic_normal", "distributions.kumaraswamy",
    "distributions.lkj_cholesky",
    "distributions.gumbel", "distributions.folded", "distributions.half_normal",
    "distributions.half_cauchy", "distributions.pareto",
    "distributions.weibull", "distributions.inverse_gamma", "distributions.relaxed_bernoulli",
    "distributions.relaxed_categorical", "distributions.kl",
    "distributions",
    "viz", "tensorboard", "texts", "",  # chainrule itself
    "apps", "__main__",
]  # fmt: skip

#: The upward imports there are, each at the foot of its module: Tensor's methods (in _tensor and
#: the family mixins of chainrule.methods) call the ops, the random fills, the backward pass
#: and in-place writes (which rewrite history with an op), which all make Tensors; `xp` (NumPy
#: names that record ops when given Tensors) calls the ops, whose rules call `xp`.
SEAM = {
    ("_tensor", "autograd"), ("_tensor", "inplace"), ("_tensor", "ops"), ("_tensor", "random"),
    ("xp", "ops"),
}  # fmt: skip


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


# The layout as README's "Layout" and the book's "How the code is laid out" describe it: every
# file or package they name exists, and each names every top-level module and package.

ROOT = SRC.parent
LAYOUT_TEXTS = {"README.md": "## Layout", "docs/book/11_layout.md": "## The map"}

#: A file or package as the texts write it: ``op.py``, ``ops/``, ``ops/elementwise.py``.
_PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z_]\w*/)*(?:[A-Za-z_]\w*\.py|[A-Za-z_]\w*/))")


def _src_block(text: str, heading: str) -> list[str]:
    """The lines of the section's code block that describe src/chainrule/ ("src/chainrule/"
    blanked out), up to the next entry at the block's left edge."""
    section = text.split(heading + "\n", 1)[1]
    block = section.split("```\n", 2)[1].splitlines()
    start = next(i for i, line in enumerate(block) if line.lstrip().startswith("src/chainrule/"))
    lines = [block[start].replace("src/chainrule/", " " * len("src/chainrule/"), 1)]
    for line in block[start + 1 :]:
        if line.strip() and not line[0].isspace():
            break
        lines.append(line)
    return [line for line in lines if line.strip()]


def _entries(lines: list[str]) -> list[str]:
    """One string per entry: a line at the block's least indentation and the deeper lines
    after it, split again at semicolons."""
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    entries: list[str] = []
    for line in lines:
        if len(line) - len(line.lstrip()) == indent or not entries:
            entries.append(line.strip())
        else:
            entries[-1] += " " + line.strip()
    return [piece for entry in entries for piece in entry.split(";")]


def _exists(name: str, package: str = "") -> bool:
    path = SRC / "chainrule" / package / name.rstrip("/")
    return path.is_dir() if name.endswith("/") else path.is_file()


def _named(text_path: str) -> tuple[set[str], list[str]]:
    """The top-level modules and packages a layout text names (``op.py``, ``ops/``), and the
    names it gives that are not in src/chainrule (a name inside an entry may be a file of a
    package named before it in that entry: ``scalar/ ... rules.py``)."""
    lines = _src_block((ROOT / text_path).read_text(), LAYOUT_TEXTS[text_path])
    top, missing = set(), []
    for entry in _entries(lines):
        packages = []
        for name in _PATH.findall(entry):
            if _exists(name):
                top.add(name)
            elif not any(_exists(name, package) for package in packages):
                missing.append(name)
            if name.endswith("/"):
                packages.append(name)
    return top, missing


def _top_level() -> set[str]:
    """Every top-level module and package, as the texts write them (``op.py``, ``ops/``)."""
    names = {entry for entry in ORDER if entry and "." not in entry}
    return {f"{n}/" if (SRC / "chainrule" / n).is_dir() else f"{n}.py" for n in names}


@pytest.mark.parametrize("text_path", sorted(LAYOUT_TEXTS))
def test_the_layout_texts_name_only_what_exists(text_path):
    _, missing = _named(text_path)
    assert not missing, f"{text_path} names {missing}, which src/chainrule does not have"


@pytest.mark.parametrize("text_path", sorted(LAYOUT_TEXTS))
def test_the_layout_texts_name_every_top_level_module_and_package(text_path):
    top, _ = _named(text_path)
    unnamed = sorted(_top_level() - top)
    assert not unnamed, f"{text_path}'s layout does not name {unnamed}"
