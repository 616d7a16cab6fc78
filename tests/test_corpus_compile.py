"""Corpus programs under ``torch.compile``: in a program run by `chainrule run`,
``model = torch.compile(model)`` and ``@torch.compile`` on a training step are
`chainrule.compile`. Each program given ``--compile`` prints the losses of its eager run (bit for
bit without Numba: the replay runs the same NumPy calls; to fused kernels' rounding with it),
with compile warnings made errors and no call run eagerly: the compiled functions' stats are
read at the end of the run."""

import json
import sys
from dataclasses import dataclass

import pytest
from test_corpus import PRECISE, PROGRAMS, _run

from chainrule.compiler import backend_numba

# `chainrule run` with each compiled function kept, to print its stats when the program ends.
STATS = "chainrule compile stats:"
RUN_KEEPING_STATS = f"""
import json, sys
import chainrule
from chainrule.apps import run

made, plain = [], chainrule.compile

def compile(model=None, **options):
    if model is None:  # @torch.compile(...) with options: the decorator
        return lambda fn: compile(fn, **options)
    compiled = plain(model, **options)
    if isinstance(compiled, chainrule.compiler.CompiledFunction):  # not disable=True
        made.append(compiled)
    return compiled

chainrule.compile = compile  # what `torch.compile` resolves to in the program
code = run.run(sys.argv[1], sys.argv[2:])
print({STATS!r}, json.dumps([f.stats for f in made]))
sys.exit(code)
"""
# chainrule.compile warns "compile(<name>): <reason>; this signature runs eagerly" for a graph
# break, records that disagree or too many signatures: an error here.
STRICT = ["-W", "error:compile("]


@dataclass(frozen=True)
class Case:
    """A program, its (short) arguments, and the stats of each function it compiles:
    ``traced`` and ``replayed`` calls; ``eager`` is always 0."""

    program: str
    args: tuple[str, ...]
    stats: tuple[tuple[int, int], ...]
    flag: str = "--compile"

    @property
    def id(self) -> str:
        return self.program.removesuffix(".py") + ("" if self.flag == "--compile" else " step")


CASES = [
    # nanoGPT's `model = torch.compile(model)`; generate() calls the module it wraps.
    Case("gpt.py", ("--steps", "6"), ((2, 4),)),
    # nanoGPT's training step compiled whole: forward, backward, clip_grad_norm_, AdamW's
    # step, and `return loss.item()` (a graph break: replayed in pieces).
    Case("gpt.py", ("--steps", "6"), ((2, 4),), flag="--compile-step"),
    # A CNN with batch norm and dropout; test() runs it in eval mode without grad: a second
    # signature, recorded once, so not yet replayed.
    Case("cnn_digits.py", ("--epochs", "1", "--train-size", "384"), ((3, 4),)),
    # An MLP returning (logits, loss); evaluated under no_grad in batches of 256 rows and
    # the rest (157 and 104): four signatures, the smaller two called once or twice.
    Case("digits_mlp.py", ("--max-steps", "12", "--eval-every", "10"), ((7, 15),)),
    # The training step under @torch.compile: zero_grad, forward, rsample, backward, step;
    # it returns the loss and its two terms, which went through backward().
    Case("vae.py", ("--epochs", "1", "--n", "384"), ((2, 4),)),
    # A ResNet: convolutions, batch norm, shortcuts; SGD with Nesterov momentum.
    Case("resnet.py", ("--epochs", "1", "--n-train", "192"), ((3, 4),)),
    # The training step reads its loss with .item() between forward and backward: a graph
    # break, replayed in pieces around the read (the Python runs again, the tensor work not).
    Case("regression.py", ("--max-steps", "8"), ((2, 6),)),
    # Both GAN networks compiled; the discriminator is also called on the generator's output
    # (an input with gradient history, whose gradient the replay passes on to the generator).
    Case("gan.py", ("--iters", "8"), ((3, 6), (4, 28))),
]


#: With Numba (the test extra installs it) the default backend fuses elementwise chains into
#: kernels whose float32 results may differ from eager's by an ulp or so (docs/guides/compile.md,
#: "Fused kernels"); without it the replay runs eager's NumPy calls, bit for bit.
FUSED = backend_numba.available()
REL = 1e-4


def _assert_same_losses(compiled: str, eager: str) -> None:
    got, expected = _losses(compiled), _losses(eager)
    if not FUSED:
        assert got == expected
        return
    assert [label for label, _ in got] == [label for label, _ in expected]
    assert [float(v) for _, v in got] == pytest.approx([float(v) for _, v in expected], rel=REL)


def _losses(out: str) -> list[tuple[str, str]]:
    """The precisely printed lines (``step N loss``, ``test loss``...), as printed."""
    lines = PRECISE.findall(out)
    assert len(lines) >= 5, out[-1000:]
    return lines


def _compiled(tmp_path, case: Case, strict: bool = True) -> tuple[str, list[dict]]:
    """The output of ``chainrule run PROGRAM --compile`` and its compiled functions' stats."""
    command = [sys.executable, *(STRICT if strict else []), "-c", RUN_KEEPING_STATS]
    out = _run(tmp_path, [*command, str(PROGRAMS / case.program), *case.args, case.flag])
    program_out, _, stats = out.rpartition(STATS)
    return program_out, json.loads(stats)


def _eager(tmp_path, case: Case) -> str:
    command = [sys.executable, "-m", "chainrule", "run", str(PROGRAMS / case.program)]
    return _run(tmp_path, [*command, *case.args])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_compiled_program_replays_eagers_losses(case, tmp_path):
    compiled, stats = _compiled(tmp_path, case)
    _assert_same_losses(compiled, _eager(tmp_path, case))
    expected = [{"traced": t, "replayed": r, "eager": 0} for t, r in case.stats]
    assert stats == expected
