"""Every module path a PyTorch program imports from resolves under ``chainrule run`` to
chainrule's objects: ``torch.nn.modules.conv``, ``torch.optim.adamw``,
``torch.utils.data.dataloader``... (chainrule.apps.torch_names), checked against the installed
torch's module tree."""

import importlib
import inspect
import sys
import textwrap
import types
from pathlib import Path

import pytest

from chainrule.apps import torch_names
from chainrule.apps.cli import main

TOOLS = Path(__file__).resolve().parents[1] / "tools"

#: Where a submodule's names also live in PyTorch: the namespace programs usually import from.
_HOMES = [
    "torch.utils.data",
    "torch.nn",
    "torch.optim",
    "torch.autograd",
    "torch.distributions",
    "torch",
]


def _submodules() -> list[str]:
    sys.path.insert(0, str(TOOLS))
    try:
        import pytorch_coverage
    finally:
        sys.path.remove(str(TOOLS))
    return pytorch_coverage._submodules()


def test_each_submodule_that_resolves_shows_the_objects_of_its_pytorch_namespace(torch):
    # torch.nn.modules.conv.Conv2d under chainrule run is the object torch.nn.Conv2d gives, for
    # every class and function each resolving submodule of the real torch defines.
    checked, resolving = 0, [name for name in _submodules() if torch_names.resolves(name)]
    assert len(resolving) > 80
    for name in resolving:
        if (torch_names.target_of(name) or "").startswith("chainrule.compat"):
            continue  # CPU-only answers to hardware modules: tests/test_torch_compat.py
        real = importlib.import_module(name)
        home = next(h for h in _HOMES if name == h or name.startswith(h + "."))
        ours, theirs = torch_names.alias(name), torch_names.alias(home)
        for attr, value in vars(real).items():
            defined_here = getattr(value, "__module__", None) == name
            if attr.startswith("_") or not defined_here or not inspect.isclass(value):
                continue
            same_object = getattr(importlib.import_module(home), attr, None) is value
            if same_object and hasattr(theirs, attr):
                assert getattr(ours, attr) is getattr(theirs, attr), f"{name}.{attr}"
                checked += 1
    assert checked > 150


def test_the_rules_name_chainrules_module_of_the_same_path_or_the_tables():
    assert torch_names.target_of("torch.nn.modules.batchnorm") == "chainrule.nn.modules.batchnorm"
    assert torch_names.target_of("torch.utils.data.sampler") == "chainrule.data.sampler"
    assert torch_names.target_of("torch.optim.radam") == "chainrule.optim.adam"
    assert torch_names.target_of("torch.distributions.kl") == "chainrule.distributions.kl"
    assert torch_names.target_of("torch.utils.tensorboard") == "chainrule.tensorboard"
    for private_or_unknown in ("torch.nn.modules._functions", "torch._C", "torch.fx"):
        with pytest.raises(KeyError):
            torch_names.target_of(private_or_unknown)


def test_a_distributions_submodule_resolves_when_chainrule_has_one(monkeypatch):
    # Generic: any torch.distributions.X is chainrule.distributions.X once that imports.
    package = types.ModuleType("chainrule.distributions")
    package.__path__ = []
    normal = types.ModuleType("chainrule.distributions.normal")
    normal.Normal = type("Normal", (), {})
    monkeypatch.setitem(sys.modules, "chainrule.distributions", package)
    monkeypatch.setitem(sys.modules, "chainrule.distributions.normal", normal)
    monkeypatch.setattr(torch_names, "_resolved", {})
    monkeypatch.setattr(torch_names, "_aliases", {})
    assert torch_names.alias("torch.distributions.normal").Normal is normal.Normal
    assert not torch_names.resolves("torch.distributions.no_such_family")
    with pytest.raises(torch_names.MissingName, match="no torch.distributions.normal.Cauchy"):
        torch_names.alias("torch.distributions.normal").Cauchy  # noqa: B018


def test_torch_version_is_the_release_chainrule_follows(torch):
    assert torch_names.alias("torch").__version__ == torch.__version__.split("+")[0]


def test_an_alias_keeps_a_name_once_found_and_hides_chainrules_own_modules():
    nn = torch_names.alias("torch.nn")
    assert nn.Linear is nn.__dict__["Linear"]  # the second read is a plain attribute
    assert isinstance(nn.modules, torch_names.AliasModule)
    with pytest.raises(torch_names.MissingName, match=r"^chainrule has no torch\.ops yet$"):
        torch_names.alias("torch").ops  # noqa: B018  (chainrule.ops is no PyTorch module)
    with pytest.raises(torch_names.MissingName, match=r"torch\._no_such_private_name"):
        torch_names.alias("torch")._no_such_private_name  # noqa: B018


def test_pytorchs_private_base_classes_are_there_to_subclass(torch):
    from torch.nn.modules.loss import _Loss
    from torch.optim.lr_scheduler import LRScheduler, _LRScheduler

    loss, scheduler = (
        torch_names.alias("torch.nn.modules.loss"),
        torch_names.alias("torch.optim.lr_scheduler"),
    )
    assert loss._Loss.__name__ == _Loss.__name__
    assert issubclass(loss._Loss, torch_names.alias("torch.nn").Module)
    assert issubclass(_LRScheduler, LRScheduler)
    assert issubclass(scheduler._LRScheduler, scheduler.LRScheduler)


PROGRAM = """
import torch
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.dataset import TensorDataset
from torch.utils.data.sampler import SequentialSampler
from torch.nn.modules.linear import Linear
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter
from torch.nn.utils.clip_grad import clip_grad_norm_
from torch.optim.adamw import AdamW
from torch.optim.optimizer import Optimizer
from torch.optim.lr_scheduler import StepLR
from torch.autograd.function import Function
from torch.autograd.grad_mode import no_grad
from torch.utils.checkpoint import checkpoint
import torch.nn.modules.conv as conv
import torch.backends.cudnn, torch.onnx, torch.jit, torch.hub, torch.accelerator, torch.cuda

model = torch.jit.script(Linear(2, 1))
opt = AdamW(model.parameters(), lr=0.1)
data = TensorDataset(torch.ones(4, 2), torch.zeros(4, 1))
for x, y in DataLoader(data, batch_size=2, sampler=SequentialSampler(data)):
    loss = ((checkpoint(model, x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
print(isinstance(model, Module), isinstance(opt, Optimizer), conv.Conv2d.__name__,
      f"{loss:.3f}" == f"{loss.item():.3f}", torch.special.expit(torch.zeros(1)).item())
"""


def test_a_program_importing_from_submodules_runs(tmp_path, capsys):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    assert main(["run", str(script)]) == 0
    assert capsys.readouterr().out.strip() == "True True Conv2d True 0.5"


def test_tensorboard_resolves_to_chainrule_tensorboard_or_says_it_is_missing(tmp_path, capsys):
    script = tmp_path / "board.py"
    script.write_text("from torch.utils.tensorboard import SummaryWriter\nprint('imported')\n")
    code = main(["run", str(script)])
    out, err = capsys.readouterr()
    if importlib.util.find_spec("chainrule.tensorboard") is None:
        missing = "chainrule run: chainrule has no torch.utils.tensorboard yet (board.py, line 1)"
        assert (code, err.strip()) == (1, missing)
    else:
        assert (code, out.strip()) == (0, "imported")
