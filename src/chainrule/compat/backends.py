"""``torch.backends``: the switches of PyTorch's compute libraries, as a CPU-only PyTorch build
reports them. Each flag reads and assigns (``torch.backends.cudnn.benchmark = True``) and
changes nothing in chainrule, which computes with NumPy; each ``is_available()`` is False
(PyTorch says True for MKL-DNN, MKL and OpenMP, which chainrule does not use)."""

from __future__ import annotations


class Backend:
    """One backend: its flags as attributes, ``is_available()`` and ``is_built()`` False.

    >>> cudnn.benchmark = True
    >>> cudnn.benchmark, cudnn.is_available()
    (True, False)
    >>> cudnn.benchmark = False
    """

    def __init__(self, name: str, **flags: object) -> None:
        self.__name__ = f"torch.backends.{name}"
        self.__dict__.update(flags)

    def is_available(self) -> bool:
        """False: chainrule does not use this library."""
        return False

    def is_built(self) -> bool:
        """False: chainrule is not built with this library."""
        return False

    def version(self) -> None:
        """None: no version of the library is present."""
        return None

    def __repr__(self) -> str:
        return f"<chainrule's {self.__name__} (CPU only)>"


class CudaBackend(Backend):
    """``torch.backends.cuda``: the matmul precision flags and the attention-kernel switches,
    which a program may read and set; none changes what chainrule computes."""

    def __init__(self) -> None:
        matmul = Backend(
            "cuda.matmul",
            allow_tf32=False,
            allow_fp16_reduced_precision_reduction=True,
            allow_bf16_reduced_precision_reduction=True,
        )
        super().__init__("cuda", matmul=matmul)
        self._attention = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}

    def flash_sdp_enabled(self) -> bool:
        """Whether the flash attention switch is on (on at first, as in PyTorch)."""
        return self._attention["flash"]

    def enable_flash_sdp(self, enabled: bool) -> None:
        """Set the flash attention switch."""
        self._attention["flash"] = bool(enabled)

    def mem_efficient_sdp_enabled(self) -> bool:
        """Whether the memory-efficient attention switch is on."""
        return self._attention["mem_efficient"]

    def enable_mem_efficient_sdp(self, enabled: bool) -> None:
        """Set the memory-efficient attention switch."""
        self._attention["mem_efficient"] = bool(enabled)

    def math_sdp_enabled(self) -> bool:
        """Whether the plain (math) attention switch is on."""
        return self._attention["math"]

    def enable_math_sdp(self, enabled: bool) -> None:
        """Set the plain (math) attention switch."""
        self._attention["math"] = bool(enabled)


class CpuBackend(Backend):
    """``torch.backends.cpu``: which vector instructions the kernels use."""

    def get_cpu_capability(self) -> str:
        """'DEFAULT': chainrule leaves the choice to NumPy."""
        return "DEFAULT"


cudnn = Backend(
    "cudnn",
    enabled=True,
    benchmark=False,
    benchmark_limit=None,
    deterministic=False,
    allow_tf32=True,
)
mps = Backend("mps")
cuda = CudaBackend()
cpu = CpuBackend("cpu")
mkldnn = Backend("mkldnn", enabled=True, deterministic=False)
mkl = Backend("mkl")
openmp = Backend("openmp")
opt_einsum = Backend("opt_einsum", enabled=False, strategy=None)
miopen = Backend("miopen", immediate=False)
nnpack = Backend("nnpack")

__all__ = ["Backend", "CpuBackend", "CudaBackend", "cpu", "cuda", "cudnn", "miopen", "mkl",
           "mkldnn", "mps", "nnpack", "openmp", "opt_einsum"]  # fmt: skip
