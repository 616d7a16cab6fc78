"""PyTorch's modules for hardware, deployment and processes that programs import but barely use,
answered as a CPU-only PyTorch answers them: `cuda`, `accelerator`, `backends`, `amp`,
`torchscript` (``torch.jit``), `onnx`, `hub`, `process_groups` (``torch.distributed``), and
`testing` (``torch.testing.assert_close``). A call that would need what chainrule does not do
raises `chainrule.errors.UnsupportedError`."""

from . import accelerator, amp, backends, cuda, hub, onnx, process_groups, testing, torchscript

__all__ = [
    "accelerator", "amp", "backends", "cuda", "hub", "onnx", "process_groups", "testing",
    "torchscript",
]  # fmt: skip
