"""W9: one training step of the small GPT in tests/programs/gpt.py, a program written for
PyTorch: 2 layers, 4 heads, width 64, a batch of 16 x 32 tokens, float32, AdamW.

PyTorch eager on one thread is the floor; chainrule runs the same file with ``import torch``
resolved to chainrule's names (as ``chainrule run`` does), from PyTorch's initial weights.
The compiled rows wrap the same step in ``chainrule.compile`` and in PyTorch's own
``torch.compile``; `benchmarks.compile_cost` times chainrule's compile in two processes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from .. import compile_cost
from ..suite import Impl, Target, Workload
from .compiled import (
    COMPILED,
    TORCH_COMPILED,
    TORCH_WARMUP,
    WARMUP,
    CompiledStep,
    TorchCompiledStep,
)

PROGRAM = Path(__file__).resolve().parents[2] / "tests" / "programs" / "gpt.py"
VOCAB, LAYERS, HEADS, WIDTH = 65, 2, 4, 64


def sizes(quick: bool) -> tuple[int, int]:
    """(batch, tokens)."""
    return (2, 8) if quick else (16, 32)


def load_program(on_chainrule: bool):
    """tests/programs/gpt.py as a module, its ``torch`` PyTorch's or chainrule's."""
    spec = importlib.util.spec_from_file_location(f"gpt_{on_chainrule}", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    if not on_chainrule:
        # torch.compile looks the module's globals up by the module's name.
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    from chainrule.apps import torch_names

    torch_names.install()
    try:
        spec.loader.exec_module(module)  # binds the alias modules as the program's globals
    finally:
        torch_names.uninstall()
    return module


def initial_weights(tokens: int) -> dict[str, np.ndarray]:
    """PyTorch's initial state (its own init, seeded), as arrays for both engines."""
    import torch

    torch.manual_seed(0)
    model = load_program(False).GPT(VOCAB, tokens, LAYERS, HEADS, WIDTH, 0.0, manual=False)
    return {name: value.numpy().copy() for name, value in model.state_dict().items()}


def gpt_step(on_chainrule: bool, batch: int, tokens: int, compiled: bool = False):
    """One AdamW step of the program's GPT; ``compiled`` wraps the step in
    ``chainrule.compile`` (or, on PyTorch, ``torch.compile``), returning Tensors that are
    read into arrays after the call."""
    program = load_program(on_chainrule)
    torch = program.torch
    model = program.GPT(VOCAB, tokens, LAYERS, HEADS, WIDTH, 0.0, manual=False)
    state = {k: torch.tensor(v) for k, v in initial_weights(tokens).items()}
    model.load_state_dict(state)
    optimizer = model.configure_optimizers(0.1, 3e-4, (0.9, 0.95))
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.integers(0, VOCAB, (batch, tokens)))
    y = torch.tensor(rng.integers(0, VOCAB, (batch, tokens)))
    watched = [model.lm_head.weight, model.transformer.h[0].mlp.c_fc.weight]

    def step():
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = [p.grad.numpy().copy() for p in watched]
        optimizer.step()
        return (np.float32(loss.item()), *grads)

    if not compiled:
        return step

    def tensor_step():  # as step, without reading values into Python inside the record
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grads = [p.grad.clone() for p in watched]
        optimizer.step()
        return (loss.detach(), *grads)

    return CompiledStep(tensor_step) if on_chainrule else TorchCompiledStep(tensor_step)


def workloads(quick: bool) -> list[Workload]:
    """W9."""
    batch, tokens = sizes(quick)
    return [
        Workload(
            "W9",
            f"GPT training step ({LAYERS} layers, {HEADS} heads, width {WIDTH}, "
            f"batch {batch}x{tokens}), float32, PyTorch program",
            "ms/step",
            1e3,
            [
                Impl("pytorch", lambda: gpt_step(False, batch, tokens), "torch", torch_threads=1),
                Impl("chainrule", lambda: gpt_step(True, batch, tokens)),
                Impl(COMPILED, lambda: gpt_step(True, batch, tokens, True), warmup=WARMUP),
                Impl(
                    TORCH_COMPILED,
                    lambda: gpt_step(False, batch, tokens, True),
                    "torch",
                    torch_threads=1,
                    warmup=TORCH_WARMUP,
                ),
            ],
            rtol=1e-4,
            # Rows are compared at the third step. At the quick size a few gradient entries
            # are near zero, and AdamW's first step (about lr, whatever a gradient's size)
            # turns their float32 rounding into differences of about 1e-5 there.
            atol=1e-5 if quick else 1e-6,
            targets=[
                # Issue 20's target, for the program as written and under torch.compile
                # (which `chainrule run` makes chainrule.compile); issue 21's for compiled.
                Target("chainrule ≤ 1.2× pytorch (1 thread)", 1.2, "pytorch"),
                Target(
                    "chainrule compiled ≤ 1.2× pytorch (1 thread)", 1.2, "pytorch", impl=COMPILED
                ),
                Target(
                    "chainrule compiled ≤ 0.7× pytorch (1 thread)", 0.7, "pytorch", impl=COMPILED
                ),
                # Issue 36's: against PyTorch's own compiler, and the kernel cache on disk.
                Target(
                    "chainrule compiled ≤ 1× pytorch compiled (1 thread)",
                    1.0,
                    TORCH_COMPILED,
                    impl=COMPILED,
                ),
                Target(
                    "W9 compile, second process ≤ 0.1× first",
                    0.1,
                    measure=lambda: compile_cost.target(quick),
                ),
            ],
        ),
    ]
