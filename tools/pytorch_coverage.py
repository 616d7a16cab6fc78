"""Write docs/pytorch-coverage.md: which of PyTorch's public names chainrule has, per namespace,
and which of its module paths a program can import under ``chainrule run``.

Walks the installed torch (2.13): every public name of each namespace below, less submodules,
re-exports of the standard library and typing, and the groups out of scope (listed on the page
with the reason). A name counts as present when chainrule's matching namespace has it. Then
every public submodule of the packages in `SUBMODULE_ROOTS`: it resolves when
`chainrule.apps.torch_names` answers its import with a chainrule module. The page also
lists the corpus of programs in tests/programs/, each with its docstring's first sentence.

    python tools/pytorch_coverage.py          # rewrite the page
    python tools/pytorch_coverage.py --check  # exit 1 if the page is stale
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
import types
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "pytorch-coverage.md"
PROGRAMS = PAGE.parents[1] / "tests" / "programs"

#: (PyTorch namespace, chainrule's, target %). "Tensor" means the Tensor class's methods.
NAMESPACES = [
    ("torch", "chainrule", 90),
    ("torch.Tensor", "chainrule.Tensor", 90),
    ("torch.nn", "chainrule.nn", 90),
    ("torch.nn.functional", "chainrule.nn.functional", 90),
    ("torch.nn.init", "chainrule.nn.init", 100),
    ("torch.nn.utils", "chainrule.nn.utils", None),
    ("torch.optim", "chainrule.optim", 100),
    ("torch.optim.lr_scheduler", "chainrule.optim.lr_scheduler", 100),
    ("torch.utils.data", "chainrule.data", 100),
    ("torch.autograd", "chainrule.autograd", None),
    ("torch.func", "chainrule.func", None),
    ("torch.linalg", "chainrule.linalg", None),
    ("torch.distributions", "chainrule.distributions", None),
]

#: Out of scope: (reason, pattern on the name[, the namespaces it applies to]). The first match
#: decides.
OUT_OF_SCOPE = [
    (
        "quantized tensors",
        r"quantiz|dequant|fake_quant|qint|quint|^q_|qscheme|fbgemm|per_channel|per_tensor|int_repr"
        r"|^Q[A-Z]",
    ),
    (
        "sparse tensors",
        r"sparse|spmm|^smm$|^hspmm$|^dsmm$|sspaddmm|indices_copy|^coalesce|"
        r"^indices$|^values$|^is_coalesced$|^sparse|^to_dense$|^row_indices|^crow|^ccol|"
        r"^col_indices|^dense_dim$|^sparse_dim$|^_nnz$|^nnz$|csr|csc|bsr|bsc|^coo",
    ),
    (
        "complex numbers",
        r"complex|^cfloat$|^cdouble$|^chalf$|conj|view_as_real|polar|^real$|"
        r"^imag$|^angle$|resolve_neg|^is_neg$|^i?stft$",  # stft: complex spectra
    ),
    ("named tensors", r"^names$|refine_names|align_to|align_as|^rename_?$|has_names"),
    (
        "GPU, accelerators and other backends",
        r"cuda|cudnn|miopen|mkldnn|mps|xpu|vulkan|(^|_)hip|(^|_)ipu($|_)|"
        r"^accelerator|^Stream|^Event|stream|nccl|^is_pinned$|^pin_memory$|^get_device$|^mtia|"
        r"^hpu|^xla|^ort$|^ve$|^maia|^privateuse|^share_memory_|^is_shared$|metal|^is_meta$",
    ),
    (
        "storage and legacy typed tensors",
        r"Storage|storage|^BFloat16Tensor$|^data_ptr$|"
        r"^set_$|^new$|^is_set_to$|^untyped|^as_strided",
    ),
    (
        "TorchScript, FX, export and compiler internals",
        r"^jit|^fx|Script|^Type$|Type$|^Graph|"
        r"^Node$|^Block$|^Value$|^Use$|^Future|^Code$|^Argument|^Capsule|^Aggregation|^AVG$|"
        r"^SUM$|^FileCheck|^CompilationUnit|^ConcreteModule|^DeepCopy|^Dispatch|^ExcludeDispatch|"
        r"^ExecutionPlan|^FunctionSchema|^Gradient$|^GraphExecutor|^InferredType|^IODescriptor|"
        r"^LiteScript|^Logger|Logger$|^OperatorInfo|^PRIVATE_OPS|^StaticModule|^Tag$|^TracingState|"
        r"^ThroughputBenchmark|^Benchmark|^ErrorReport|^CallStack|^AliasDb|^Sym[A-Z]|^sym_|"
        r"^DisableTorchFunction|torch_function|^classproperty|^export|^compiled_with|"
        r"^library|^ops$|^classes$|^while_loop$|^Buffer|^BufferDict|^PyTorchFile|"
        r"Serializ|^DeserializationStorageContext|^get_file_path|^import_ir|^merge_type|"
        r"^parse_ir|^parse_schema|^parse_type|^unify_type|^fork$|^wait$|^vitals|^read_vitals|"
        r"^set_vital|^autocast|^clear_autocast|^get_autocast|^set_autocast|^is_autocast|"
        r"^is_anomaly|^set_anomaly|^candidate|^dynamo|^export|Error$|Exception$|^GradScaler$|"
        r"^CompleteArgumentSpec|^hash_tensor|^has_[a-z]+$|^jagged$|^get_device_module|"
        r"^from_dlpack|^to_dlpack|^frombuffer|^hsmm$|^geqrf$|^ormqr$|^get_deterministic_debug|"
        r"^set_deterministic_debug|^is_deterministic_algorithms_warn|^strided$|^sparse_coo$|"
        r"^layout$|^memory_format$|^contiguous_format$|^channels_last|^preserve_format$",
    ),
    (
        "TorchScript, FX, export and compiler internals",
        r"^cond$|^vmap$",  # torch.cond is control flow for export; torch.vmap is torch.func.vmap
        ("torch",),
    ),
    (
        "removed from PyTorch (calling it raises)",
        r"^(symeig|eig|lstsq|solve|matrix_rank|reinforce)$",
        ("torch", "torch.Tensor"),
    ),
    (
        "low-level and backward kernels",
        r"_backward|^native_|(?<!^index)_copy$|^batch_norm_|^segment_reduce|"
        r"^fused_|^affine_grid_generator|^constant_pad_nd|^conv_tbc|^convolution$|^cudnn|"
        r"^embedding_renorm_|^empty_permuted|^empty_strided|^slice_scatter|^select_scatter|"
        r"^diagonal_scatter|^as_strided_scatter|^choose_qparams|^unsafe_|^_|^set_flush_denormal|"
        r"^saddmm|^result_type_|^rsub$|^can_cast$|^promote_types$|^is_nonzero$|^is_same_size$|"
        r"^is_signed$|^is_inference$|^is_distributed$|^sym_|^is_warn_always|^set_warn_always",
    ),
    (
        "dtypes NumPy cannot carry",
        r"^float8|^float4|^uint[1-7]$|^int[1-7]$|^bits|^bit$|"
        r"^uint(16|32|64)$",
    ),
    (
        "in-place function forms (the Tensor method is in scope)",
        r"^[a-z0-9_]+[a-z0-9]_$",
        ("torch",),
    ),
    (
        "deprecated names (PyTorch warns; the current name is in scope)",
        r"^(constant|dirac|eye|orthogonal|"
        r"kaiming_normal|kaiming_uniform|normal|uniform|xavier_normal|xavier_uniform)$",
        ("torch.nn.init",),
    ),
    (
        "DataPipes (deprecated in PyTorch)",
        r"DataPipe|DataChunk|datapipe|^argument_validation$|"
        r"^non_deterministic$|^runtime_validation",
        ("torch.utils.data",),
    ),
    (
        "process and deployment machinery",
        r"^distributed|^multiprocessing|^package|^hub$|^onnx|"
        r"^deploy|^testing|^DataParallel|^parallel|^SyncBatchNorm|^Lazy|^Uninitialized|"
        r"^factory_kwargs$|^get_num_interop|^set_num_interop|^init_num_threads|^manager_path|"
        r"^from_file$|^get_default_device$|^set_default_device$|^default_worker_info|"
        r"^register_",
        ("torch", "torch.nn", "torch.nn.utils"),
    ),
]

#: Standard-library and typing names that namespaces re-export (not PyTorch's API).
NOT_API = {
    "Any",
    "Callable",
    "Dict",
    "Iterable",
    "Iterator",
    "List",
    "Optional",
    "Sequence",
    "Tuple",
    "TypeVar",
    "Union",
    "Generic",
    "TYPE_CHECKING",
    "USE_GLOBAL_DEPS",
    "USE_RTLD_GLOBAL_WITH_LIBTORCH",
    "builtins",
    "ctypes",
    "math",
    "warnings",
    "importlib",
    "torch",
    "DType",
    "BroadcastingList1",
    "BroadcastingList2",
    "BroadcastingList3",
    "boolean_dispatch",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "assert_int_or_pair",
    "Tensor_",
    "Number",
    "cast",
    "overload",
    "deprecated",
    "NoReturn",
    "Self",
    "annotations",
    "ParamSpec",
    "TypeAlias",
    "Literal",
    "Protocol",
    "T_co",
    "T",
    "K",
    "V",
    "Parameter_",
    "Module_",
    "Grad",
    "DifferentiableGraph",
}


#: The PyTorch packages whose public submodules the page lists (the packages themselves too).
SUBMODULE_ROOTS = [
    "torch", "torch.nn", "torch.nn.modules", "torch.nn.utils", "torch.optim", "torch.utils",
    "torch.utils.data", "torch.autograd", "torch.distributions", "torch.backends",
]  # fmt: skip

#: Submodules out of scope, unless they resolve: (reason, pattern on the full name).
SUBMODULES_OUT_OF_SCOPE = [
    ("quantization", r"quantiz|^torch\.ao$|\.qat$|\.intrinsic$"),
    ("sparse tensors", r"^torch\.sparse$|\.cusparselt$"),
    ("complex numbers and spectra", r"^torch\.(fft|signal)$"),
    ("masked and nested tensors", r"^torch\.(masked|nested)$"),
    ("lazy modules", r"\.lazy$"),
    (
        "DataPipes (deprecated in PyTorch)",
        r"^torch\.utils\.data\.(datapipes|graph|graph_settings|backward_compatibility)$",
    ),
    (
        "GPU, accelerators and other backends",
        r"^torch\.(xpu|mps|mtia|cpu|numa)$|^torch\.backends\."
        r"|^torch\.utils\.(mkldnn|backend_registration|hipify|cpp_extension|cpp_backtrace)$",
    ),
    (
        "TorchScript, FX, export and compiler internals",
        r"^torch\.(fx|export|compiler|library|overrides|types|return_types|futures|nativert|contrib"
        r"|package|storage|torch_version|version|nn\.(cpp|backends|common_types)|utils\.(jit|"
        r"mobile_optimizer|bundled_inputs|model_dump|show_pickle|dlpack|serialization|"
        r"backcompat))$",
    ),
    (
        "process and deployment machinery",
        r"^torch\.(multiprocessing|monitor|utils\.(collect_env|file_baton|model_zoo|"
        r"throughput_benchmark|benchmark|debug_log|module_tracker|flop_counter|viz|weak|hooks|"
        r"deterministic))$",
    ),
]


def _submodules() -> list[str]:
    """Every public submodule of `SUBMODULE_ROOTS` in the installed torch, and the roots."""
    names = set()
    for root in SUBMODULE_ROOTS:
        names.add(root)
        package = importlib.import_module(root)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                names.add(f"{root}.{info.name}")
    return sorted(names)


def submodule_survey() -> list[dict]:
    """Per PyTorch submodule: the chainrule module its import resolves to, or why it does not
    (out of scope, with the reason, or missing)."""
    sys.path.insert(0, str(PAGE.parents[1] / "src"))
    from chainrule.apps import torch_names

    rows = []
    for name in _submodules():
        if torch_names.resolves(name):
            target = torch_names.target_of(name)
            rows.append(dict(name=name, status="resolves", ours=target or ""))
            continue
        reason = next((r for r, pattern in SUBMODULES_OUT_OF_SCOPE if re.search(pattern, name)),
                      None)  # fmt: skip
        rows.append(dict(name=name, status="out of scope" if reason else "missing",
                         ours=reason or ""))  # fmt: skip
    return rows


def _public(namespace: str) -> list[str]:
    if namespace == "torch.Tensor":
        import torch

        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    module = importlib.import_module(namespace)
    names = []
    for name in dir(module):
        if name.startswith("_") or name in NOT_API:
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue
        origin = getattr(value, "__module__", "") or ""
        if origin.split(".")[0] in (
            "typing", "typing_extensions", "collections", "abc", "enum", "functools", "weakref",
            "builtins",
        ):  # fmt: skip
            continue
        if name.endswith("_notes") or (namespace != "torch" and isinstance(value, (str, float))):
            continue  # docstring fragments and constants a submodule imported
        if namespace != "torch" and inspect.isclass(value) and origin == "torch":
            continue  # torch.Tensor re-exported by a submodule
        if inspect.isclass(value) and origin.startswith("typing"):
            continue
        names.append(name)
    return sorted(names)


def _scope(namespace: str, name: str) -> str | None:
    for reason, pattern, *where in OUT_OF_SCOPE:
        if (not where or namespace in where[0]) and re.search(pattern, name):
            return reason
    return None


def _ours(namespace: str):
    if namespace == "chainrule.Tensor":
        import chainrule

        return chainrule.Tensor
    return importlib.import_module(namespace)


def survey() -> list[dict]:
    """Per namespace: the in-scope names present and missing, and the out-of-scope groups."""
    rows = []
    for theirs, ours, target in NAMESPACES:
        try:
            mine = _ours(ours)
        except ImportError:
            mine = None
        present, missing, out = [], [], {}
        for name in _public(theirs):
            reason = _scope(theirs, name)
            if reason:
                out.setdefault(reason, []).append(name)
            elif mine is not None and hasattr(mine, name):
                present.append(name)
            else:
                missing.append(name)
        rows.append(dict(theirs=theirs, ours=ours, target=target, present=present,
                         missing=missing, out=out))  # fmt: skip
    return rows


def corpus() -> list[str]:
    """The corpus section: one row per program of tests/programs/, with what it covers (its
    docstring's first sentence)."""
    lines = [
        "",
        "## Programs that run unchanged",
        "",
        "Counting names says little about whether a program runs. The programs below are written "
        "for PyTorch in the idiom of public PyTorch code; `tests/test_corpus.py` and "
        "`tests/test_pytorch_programs.py` run each under PyTorch and under `chainrule run` "
        "and compare what they print: the same losses where the program draws its weights and "
        "data with NumPy, a finished run with a finite final metric where it draws from torch's "
        "own generator.",
        "",
        "| program | what it covers |",
        "|---|---|",
    ]
    for path in sorted(PROGRAMS.glob("*.py")):
        doc = inspect.cleandoc(ast.get_docstring(ast.parse(path.read_text())) or "")
        first = " ".join(doc.split("\n\n")[0].split())
        first = re.split(r"(?<=[\w)])\. (?=[A-Z])", first)[0].rstrip(".")
        lines.append(f"| `{path.name}` | {first}. |")
    return lines


def render(rows: list[dict]) -> str:
    """The page's Markdown."""
    lines = [
        "# PyTorch coverage",
        "",
        "Which of PyTorch 2.13's public names chainrule has, namespace by namespace. Generated "
        "by `python tools/pytorch_coverage.py` from the installed torch; "
        "`tests/test_coverage_page.py` fails when this page is stale. A name is in scope "
        "unless it belongs to a group listed under its namespace as out of scope.",
        "",
        "| namespace | chainrule | in scope | present | coverage | target |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        total = len(row["present"]) + len(row["missing"])
        share = 100 * len(row["present"]) / total if total else 100.0
        target = f"{row['target']}%" if row["target"] else "-"
        lines.append(f"| `{row['theirs']}` | `{row['ours']}` | {total} | {len(row['present'])} "
                     f"| {share:.0f}% | {target} |")  # fmt: skip
    modules = submodule_survey()
    counts = {status: sum(m["status"] == status for m in modules)
              for status in ("resolves", "missing", "out of scope")}  # fmt: skip
    lines += [
        "",
        "## Module paths",
        "",
        "Which of PyTorch's module paths a program can import (`import torch.nn.modules.conv`, "
        "`from torch.optim.adamw import AdamW`) under `chainrule run`: every public submodule of "
        + ", ".join(f"`{r}`" for r in SUBMODULE_ROOTS)
        + f". {counts['resolves']} resolve, {counts['missing']} are missing, "
        f"{counts['out of scope']} are out of scope. A path resolves to the chainrule module "
        "of the same path below `torch.nn`, `torch.optim`, `torch.utils.data` (`chainrule.data`),"
        " `torch.distributions`, `torch.func`, `torch.linalg` and `torch.backends` "
        "(`chainrule.compat.backends`), else to the module `chainrule/apps/torch_names.py`'s "
        "table names; importing a missing one stops `chainrule run` with one line.",
        "",
        "| PyTorch module | status | chainrule module, or why not |",
        "|---|---|---|",
    ]
    for m in modules:
        ours = f"`{m['ours']}`" if m["status"] == "resolves" and m["ours"] else m["ours"]
        if m["status"] == "resolves" and not m["ours"]:
            ours = "a namespace for its submodules"
        lines.append(f"| `{m['name']}` | {m['status']} | {ours} |")
    lines += corpus()
    for row in rows:
        lines += ["", f"## `{row['theirs']}`", ""]
        lines.append(f"Missing ({len(row['missing'])}): " + (
            ", ".join(f"`{n}`" for n in row["missing"]) or "none") + ".")  # fmt: skip
        lines += ["", f"Present ({len(row['present'])}): " + (
            ", ".join(f"`{n}`" for n in row["present"]) or "none") + "."]  # fmt: skip
        if row["out"]:
            lines += ["", "Out of scope:", ""]
            for reason, names in sorted(row["out"].items()):
                lines.append(f"- {reason} ({len(names)}): " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write the page, or with ``--check`` say whether it is current."""
    text = render(survey())
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is stale: run python tools/pytorch_coverage.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(text.split("\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
