"""chainrule.save and chainrule.load as PyTorch programs use them: paths and file objects,
everything a training program saves, torch.load's keywords, files that PyTorch wrote with
torch.save (zip and legacy formats), other kinds of file named, hostile pickles refused."""

import argparse
import collections
import io
import math
import pickle
import re
import struct
import tarfile
import warnings
import zipfile

import numpy as np
import pytest

import chainrule
from chainrule import SerializationError, load, nn, optim, save
from chainrule.errors import ArgumentError

pytestmark = pytest.mark.usefixtures("safetensors_numpy")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def everything() -> dict:
    """One of each thing programs save, nested."""
    weight = nn.Parameter(chainrule.tensor(np.arange(6.0).reshape(2, 3)))
    shared = np.linspace(0.0, 1.0, 5)
    base = chainrule.tensor(np.arange(12.0).reshape(3, 4))
    return {
        "tensors": {name: chainrule.tensor(np.arange(4) % 2, dtype=name) for name in DTYPES},
        "param": weight,
        "frozen": nn.Parameter(chainrule.ones(2), requires_grad=False),
        "leaf": chainrule.tensor([1.0, 2.0], requires_grad=True),
        "arrays": [np.arange(3, dtype=np.int16), np.array(2.5), np.zeros((0, 2), np.float32)],
        "shared": (shared, shared, weight),
        "views": {"base": base, "row": base[1], "column": base[:, 2], "t": base.T},
        "numbers": [3, 0.12, True, False, 1 + 2j, float("inf"), -0.0, 2**70],
        "text": "résumé ✓",
        "none": None,
        "int_keys": {0: "a", 1: {2: [None]}},
        "ordered": collections.OrderedDict([("b", 1), ("a", 2)]),
        "args": argparse.Namespace(lr=0.1, layers=[4, 4], name="run"),
        "empty": ({}, [], ()),
    }


def same(a, b) -> bool:
    """Same structure, types (key types too), dtypes and values; NaN equals NaN."""
    if isinstance(a, (chainrule.Tensor, np.ndarray)):
        return (
            type(a) is type(b)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and getattr(a, "requires_grad", None) == getattr(b, "requires_grad", None)
            and np.array_equal(
                np.asarray(a.detach() if hasattr(a, "detach") else a),
                np.asarray(b.detach() if hasattr(b, "detach") else b),
            )
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, argparse.Namespace):
        return same(vars(a), vars(b))
    if isinstance(a, dict):
        return [(type(k), k) for k in a] == [(type(k), k) for k in b] and all(
            same(a[k], b[k]) for k in a
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def through_path(obj, tmp_path):
    save(obj, str(tmp_path / "a.pt"))
    return load(tmp_path / "a.pt")


def through_open_files(obj, tmp_path):
    with open(tmp_path / "b.pt", "wb") as f:
        save(obj, f)
    with open(tmp_path / "b.pt", "rb") as f:
        return load(f)


def through_bytesio(obj, tmp_path):
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return load(buffer)


ROUTES = [through_path, through_open_files, through_bytesio]


@pytest.mark.parametrize("route", ROUTES, ids=lambda f: f.__name__)
def test_everything_a_program_saves_comes_back_with_its_types(tmp_path, route):
    obj = everything()
    loaded = route(obj, tmp_path)
    assert same(loaded, obj)
    assert type(loaded["param"]) is nn.Parameter and loaded["param"].requires_grad
    assert type(loaded["frozen"]) is nn.Parameter and not loaded["frozen"].requires_grad
    assert loaded["leaf"].requires_grad and loaded["leaf"].is_leaf
    assert all(type(a) is np.ndarray for a in loaded["arrays"])
    # One object saved twice is one object loaded.
    assert loaded["shared"][0] is loaded["shared"][1]
    assert loaded["shared"][2] is loaded["param"]
    assert type(loaded["numbers"][4]) is complex and type(loaded["numbers"][7]) is int


def test_a_file_object_is_written_at_its_position(tmp_path):
    buffer = io.BytesIO()
    buffer.write(b"prefix")
    save({"w": chainrule.ones(2)}, buffer)
    buffer.seek(len(b"prefix"))
    assert load(buffer)["w"].tolist() == [1.0, 1.0]


def test_a_training_checkpoint_resumes_bit_identically(tmp_path):
    def train(model, optimizer, steps):
        x = chainrule.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        for _ in range(steps):
            optimizer.zero_grad()
            (model(x) ** 2).mean().backward()
            optimizer.step()

    chainrule.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    train(model, optimizer, 3)
    checkpoint = {
        "epoch": 3,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "loss": 0.12,
        "args": {"lr": 0.05, "hidden": 4, "name": "mlp"},
    }
    with open(tmp_path / "ckpt.pt", "wb") as f:
        save(checkpoint, f)
    train(model, optimizer, 2)

    with open(tmp_path / "ckpt.pt", "rb") as f:
        loaded = load(f, map_location="cpu", weights_only=True)
    assert type(loaded["model"]) is collections.OrderedDict
    assert list(loaded["optimizer"]["state"]) == [0, 1, 2, 3]
    assert loaded["optimizer"]["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert (loaded["epoch"], loaded["loss"], loaded["args"]["name"]) == (3, 0.12, "mlp")
    resumed = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    resumed.load_state_dict(loaded["model"])
    resumed_optimizer = optim.Adam(resumed.parameters(), lr=1.0)
    resumed_optimizer.load_state_dict(loaded["optimizer"])
    train(resumed, resumed_optimizer, 2)
    for p, q in zip(model.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_text_mode_files_and_other_objects_are_refused(tmp_path):
    with open(tmp_path / "a.pt", "w") as f, pytest.raises(ArgumentError, match="open it with 'wb'"):
        save({"w": chainrule.ones(1)}, f)
    save({"w": chainrule.ones(1)}, tmp_path / "a.pt")
    text = open(tmp_path / "a.pt", encoding="latin-1")  # noqa: SIM115 (closed below)
    with text, pytest.raises(ArgumentError, match="open in text mode; open it with 'rb'"):
        load(text)
    with pytest.raises(ArgumentError, match="save: f must be a path or a binary file object"):
        save({}, 3)
    with pytest.raises(ArgumentError, match="load: f must be a path or a binary file object"):
        load(3)


# torch.load's keywords.


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "w.pt"
    save({"w": chainrule.tensor([1.0, 2.0])}, path)
    return path


@pytest.mark.parametrize(
    "options",
    [
        {"map_location": "cpu"},
        {"map_location": chainrule.device("cpu")},
        {"map_location": {"cuda:0": "cpu"}},
        {"map_location": lambda storage, location: storage},
        {"map_location": lambda storage, location: None},
        {"weights_only": False},
        {"weights_only": True, "mmap": True},
        {"pickle_module": pickle},
        {"encoding": "latin1"},
    ],
    ids=["cpu", "device", "dict", "identity", "none", "weights_only", "mmap", "pickle", "enc"],
)
def test_torch_load_keywords_that_mean_the_cpu_are_accepted(saved, options):
    assert load(saved, **options)["w"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("writer", ["chainrule", "torch"])
def test_a_map_location_function_sees_each_storage_and_its_location(torch, writer):
    buffer = io.BytesIO()
    if writer == "torch":
        torch.save({"w": torch.tensor([1.0, 2.0])}, buffer)
    else:
        save({"w": chainrule.tensor([1.0, 2.0])}, buffer)
    buffer.seek(0)
    seen = []

    def halve(storage, location):
        seen.append(location)
        return storage * 0.5

    assert load(buffer, map_location=halve)["w"].tolist() == [0.5, 1.0]
    assert seen == ["cpu"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"map_location": "cuda"}, "maps to 'cuda', but chainrule computes with NumPy on the CPU"),
        ({"map_location": {"cpu": "cuda:1"}}, "maps to 'cuda:1'"),
        ({"map_location": 3}, "expected None, 'cpu', a device, a dict or a function"),
        ({"pickle_module": io}, "reads PyTorch's pickles with its own allow-listed unpickler"),
        ({"fix_imports": False}, r"unexpected keyword arguments \['fix_imports'\]"),
        ({"weights_only": "yes"}, "weights_only and mmap take True, False or None"),
    ],
)
def test_torch_load_keywords_that_cannot_hold_on_the_cpu_are_refused(saved, options, message):
    with pytest.raises(ArgumentError, match=message):
        load(saved, **options)


def test_torch_device_cpu_is_accepted_and_cuda_refused(torch, saved):
    assert load(saved, map_location=torch.device("cpu"))["w"].tolist() == [1.0, 2.0]
    with pytest.raises(ArgumentError, match="maps to 'cuda:0'"):
        load(saved, map_location=torch.device("cuda:0"))


# Files of another kind say what they are.


def kinds(tmp_path, torch):
    np.save(tmp_path / "a.npy", np.ones(2))
    np.savez(tmp_path / "a.npz", x=np.ones(2))
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as archive:
        archive.writestr("notes.txt", "hello")
    with tarfile.open(tmp_path / "a.tar", "w") as archive:
        archive.add(tmp_path / "a.npy", arcname="a.npy")
    with warnings.catch_warnings():  # torch.jit is deprecated, yet its files are about
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(tmp_path / "script.pt"))
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "a.pkl").write_bytes(pickle.dumps({"w": [1.0]}))
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    return {
        "empty.pt": "is an empty file",
        "a.pkl": "is a pickle, not a chainrule or PyTorch file",
        "a.npy": "is a NumPy .npy file, not a chainrule or PyTorch file: read it with numpy.load",
        "a.npz": "is a zip archive without data.pkl, so not a PyTorch file (a NumPy .npz?",
        "plain.zip": "is a zip archive without data.pkl, so not a PyTorch file",
        "a.tar": "is a tar archive",
        "script.pt": "is a TorchScript archive (torch.jit.save)",
        "broken.zip": "is a damaged zip archive",
    }


def test_files_of_other_kinds_say_what_they_are(tmp_path, torch):
    for name, message in kinds(tmp_path, torch).items():
        with pytest.raises(
            SerializationError, match=re.escape(f"{str(tmp_path / name)!r} {message}")
        ):
            load(tmp_path / name)


# Files PyTorch wrote.


def torch_saved(torch, obj, tmp_path, zip_format=True):
    path = tmp_path / f"torch-{zip_format}.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=zip_format)
    return path


def edit_pickle(zip_bytes: bytes, edit) -> bytes:
    """A PyTorch zip file whose data.pkl is ``edit(data.pkl)``, its other entries unchanged."""
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, edit(data) if name.endswith("/data.pkl") else data)
    return buffer.getvalue()


FORMATS = pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])


@FORMATS
def test_torch_tensors_of_every_dtype_load_with_their_values(torch, tmp_path, zip_format):
    values = [0, 1, 2, 3, 0, 1]
    tensors = {name: torch.tensor(values, dtype=getattr(torch, name)) for name in DTYPES}
    tensors["bfloat16"] = torch.tensor([1.5, -2.25, 3.0e38, 1e-3], dtype=torch.bfloat16)
    tensors["scalar"] = torch.tensor(7.5, dtype=torch.float64)
    loaded = load(torch_saved(torch, tensors, tmp_path, zip_format))
    for name in DTYPES:
        assert type(loaded[name]) is chainrule.Tensor
        assert loaded[name].dtype == np.dtype(name)
        np.testing.assert_array_equal(loaded[name].numpy(), tensors[name].numpy())
    # NumPy has no bfloat16: the values come back exactly, widened to float32.
    assert loaded["bfloat16"].dtype == np.float32
    np.testing.assert_array_equal(loaded["bfloat16"].numpy(), tensors["bfloat16"].float().numpy())
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == 7.5


@FORMATS
def test_torch_views_keep_their_values_and_share_memory(torch, tmp_path, zip_format):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {
        "base": base, "row": base[2], "column": base[:, 3], "t": base.t(),
        "strided": base[::2, 1::2], "flat": base.view(-1)[5:9], "empty": base[:0],
    }  # fmt: skip
    loaded = load(torch_saved(torch, obj, tmp_path, zip_format))
    for name, tensor in obj.items():
        assert loaded[name].shape == tuple(tensor.shape)
        np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())
    loaded["base"][2, 3] = -1.0  # one storage in PyTorch, one memory here
    assert loaded["row"][3].item() == -1.0 and loaded["column"][2].item() == -1.0
    assert loaded["t"][3, 2].item() == -1.0


def test_a_torch_state_dict_drives_the_same_chainrule_model_to_the_same_outputs(torch, tmp_path):
    torch.manual_seed(0)
    source = torch.nn.Sequential(
        torch.nn.Conv1d(2, 3, 3), torch.nn.BatchNorm1d(3), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(12, 2),
    ).eval()  # fmt: skip
    source[1].running_mean.normal_()
    source[1].running_var.uniform_(0.5, 2.0)
    x = torch.randn(4, 2, 6)
    path = tmp_path / "model.pth"
    torch.save(source.state_dict(), path)
    state = load(path)
    assert type(state) is collections.OrderedDict and list(state) == list(source.state_dict())
    model = nn.Sequential(
        nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2)
    ).eval()
    model.load_state_dict(state)
    expected = source(x).detach().numpy()
    np.testing.assert_allclose(
        model(chainrule.tensor(x.numpy())).detach().numpy(), expected, rtol=1e-5, atol=1e-6
    )


@FORMATS
def test_a_torch_checkpoint_resumes_training_in_chainrule_as_in_torch(torch, tmp_path, zip_format):
    torch.manual_seed(1)
    source = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    source = source.double()
    source_optimizer = torch.optim.Adam(source.parameters(), lr=0.01, betas=(0.8, 0.99))
    x = torch.randn(5, 3, dtype=torch.float64)

    def torch_step():
        source_optimizer.zero_grad()
        source(x).pow(2).mean().backward()
        source_optimizer.step()

    torch_step()
    torch_step()
    checkpoint = {
        "epoch": 2, "model": source.state_dict(), "optimizer": source_optimizer.state_dict(),
        "loss": 0.12, "best": float("inf"), "name": "mlp", "history": [0.5, 0.25],
        "args": argparse.Namespace(lr=0.01, hidden=4), "shape": x.shape, "dtype": torch.float64,
    }  # fmt: skip
    loaded = load(torch_saved(torch, checkpoint, tmp_path, zip_format))
    assert (loaded["epoch"], loaded["loss"], loaded["name"]) == (2, 0.12, "mlp")
    assert loaded["best"] == math.inf and loaded["history"] == [0.5, 0.25]
    assert vars(loaded["args"]) == {"lr": 0.01, "hidden": 4}
    assert loaded["shape"] == (5, 3) and isinstance(loaded["shape"], chainrule.Size)
    assert loaded["dtype"] == chainrule.float64
    assert list(loaded["optimizer"]["state"]) == [0, 1, 2, 3]
    assert loaded["optimizer"]["state"][0]["step"].item() == 2

    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    model.load_state_dict(loaded["model"])
    optimizer = optim.Adam(model.parameters(), lr=1.0)
    optimizer.load_state_dict(loaded["optimizer"])
    torch_step()
    optimizer.zero_grad()
    (model(chainrule.tensor(x.numpy())) ** 2).mean().backward()
    optimizer.step()
    for p, q in zip(source.parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=1e-15)


def test_torch_parameters_and_requires_grad_come_back(torch, tmp_path):
    obj = [torch.nn.Parameter(torch.ones(2)), torch.ones(2, requires_grad=True), torch.ones(1)]
    loaded = load(torch_saved(torch, obj, tmp_path), weights_only=False)
    assert type(loaded[0]) is nn.Parameter and loaded[0].requires_grad
    assert type(loaded[1]) is chainrule.Tensor and loaded[1].requires_grad
    assert not loaded[2].requires_grad


def test_a_torch_object_outside_the_allow_list_is_refused_by_name(torch, tmp_path):
    path = torch_saved(torch, {"model": torch.nn.Linear(2, 2)}, tmp_path)
    with pytest.raises(
        SerializationError, match=r"needs the global torch.nn.modules.linear.Linear"
    ):
        load(path)
    # The same as PyTorch's own safe loader, which refuses it too.
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)


# Hostile pickles: refused, and nothing runs.


#: A protocol-0 pickle of os.system("touch <canary>") written by hand: GLOBAL, MARK, a string,
#: TUPLE, REDUCE, STOP.
def attack(canary) -> bytes:
    return b"cos\nsystem\n(S'touch " + str(canary).encode() + b"'\ntR."


def test_the_attack_used_below_really_runs_code(tmp_path):
    canary = tmp_path / "control"
    pickle.loads(attack(canary))
    assert canary.exists()


def test_a_hostile_pickle_in_a_torch_zip_is_refused_without_running(torch, tmp_path):
    canary = tmp_path / "canary"
    path = torch_saved(torch, {"w": torch.ones(2)}, tmp_path)
    path.write_bytes(edit_pickle(path.read_bytes(), lambda _: attack(canary)))
    with pytest.raises(
        SerializationError, match=r"\(a PyTorch file\): the pickle needs the global os.system"
    ):
        load(path)
    assert not canary.exists()


def test_a_hostile_pickle_in_a_legacy_torch_file_is_refused_without_running(torch, tmp_path):
    canary = tmp_path / "canary"
    path = torch_saved(torch, {"w": torch.ones(2)}, tmp_path, zip_format=False)
    data = path.read_bytes()
    header = pickle.dumps(1001, protocol=2) + pickle.dumps({"little_endian": True}, protocol=2)
    magic = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
    assert data.startswith(magic)
    path.write_bytes(magic + header + attack(canary))
    with pytest.raises(SerializationError, match="the pickle needs the global os.system"):
        load(path)
    assert not canary.exists()


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_a_reduce_to_exec_via_any_protocol_is_refused(tmp_path, protocol):
    class RunsCode:
        def __reduce__(self):
            return (exec, (f"open({str(tmp_path / 'canary')!r}, 'w').close()",))

    path = tmp_path / "a.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/data.pkl", pickle.dumps({"w": RunsCode()}, protocol=protocol))
    with pytest.raises(SerializationError, match="needs the global builtins.exec"):
        load(path)
    assert not (tmp_path / "canary").exists()


# Fuzzing PyTorch files: every damaged file loads or raises SerializationError.

TORCH_FUZZ_CASES = 300


def test_fuzzed_torch_files_load_or_raise_serialization_error(torch, tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    obj = {"model": model.state_dict(), "epoch": 3, "view": model[0].weight[1:, ::2]}
    originals = {}
    for zip_format in (True, False):
        buffer = io.BytesIO()
        torch.save(obj, buffer, _use_new_zipfile_serialization=zip_format)
        originals[zip_format] = buffer.getvalue()

    rng = np.random.default_rng(34)
    wrong, outcomes = [], collections.Counter()
    for case in range(TORCH_FUZZ_CASES):
        how = ["legacy", "zip", "pickle"][case % 3]
        if how == "pickle":  # damage data.pkl inside a well-formed zip: the unpickler's job

            def damage(pickled):
                pickled = bytearray(pickled)
                for _ in range(rng.integers(1, 4)):
                    pickled[rng.integers(len(pickled))] = rng.integers(256)
                return bytes(pickled)

            data = edit_pickle(originals[True], damage)
        else:
            data = bytearray(originals[how == "zip"])
            if rng.random() < 0.2:
                data = data[: rng.integers(len(data))]
            for _ in range(rng.integers(1, 4)):
                if data:
                    data[rng.integers(len(data))] = rng.integers(256)
            data = bytes(data)
        try:
            load(io.BytesIO(data))
        except SerializationError:
            outcomes["refused"] += 1
        except Exception as error:  # the contract: nothing but SerializationError
            wrong.append((case, how, f"{type(error).__name__}: {error}"))
        else:
            outcomes["loaded"] += 1
    assert wrong == [], wrong[:3]
    print(f"torch fuzz: {TORCH_FUZZ_CASES} mutations, {dict(outcomes)}")
    assert outcomes["refused"] > TORCH_FUZZ_CASES // 3


def test_a_program_under_chainrule_run_resumes_from_a_torch_checkpoint(tmp_path, capsys, torch):
    from chainrule.apps.cli import main

    torch.manual_seed(3)
    source = torch.nn.Linear(3, 2)
    torch.save({"epoch": 4, "model": source.state_dict()}, tmp_path / "torch.pt")
    script = tmp_path / "resume.py"
    script.write_text(
        "import sys\n"
        "import torch\n"
        "import torch.nn as nn\n"
        "model = nn.Linear(3, 2)\n"
        "checkpoint = torch.load(sys.argv[1], map_location='cpu', weights_only=True)\n"
        "model.load_state_dict(checkpoint['model'])\n"
        "print('out', *model(torch.ones(1, 3)).flatten().tolist(), checkpoint['epoch'])\n"
        "state = {'epoch': checkpoint['epoch'] + 1, 'model': model.state_dict()}\n"
        "torch.save(state, open(sys.argv[2], 'wb'))\n"
        "with open(sys.argv[2], 'rb') as f:\n"
        "    again = torch.load(f)\n"
        "print('again', again['epoch'], again['model']['bias'].tolist())\n"
    )
    assert main(["run", str(script), str(tmp_path / "torch.pt"), str(tmp_path / "ours.pt")]) == 0
    out, again = capsys.readouterr().out.strip().splitlines()
    expected = source(torch.ones(1, 3)).flatten().tolist()
    np.testing.assert_allclose([float(v) for v in out.split()[1:3]], expected, rtol=1e-6)
    assert out.split()[3] == "4"
    assert again == f"again 5 {source.bias.tolist()}"


def reduce_end(pickled: bytes, target: str) -> int:
    """Where the REDUCE that makes the tensor or the OrderedDict of the pickle below ends."""
    if target == "tensor":  # the second REDUCE after NEWFALSE: the first makes the hooks
        first = pickled.index(b"R", pickled.index(b"\x89"))
        return pickled.index(b"R", first + 1) + 1
    return pickled.index(b")R", pickled.index(b"od")) + 2


@pytest.mark.parametrize(
    ("target", "build", "message"),
    [
        ("tensor", b"", None),  # the untouched file, for contrast
        ("tensor", b"N}X\x08\x00\x00\x00_grad_fnX\x01\x00\x00\x00xs\x86b", "tensor"),
        ("tensor", b"N}X\x06\x00\x00\x00_arrayK\x01s\x86b", "tensor"),
        ("od", b"}X\x04\x00\x00\x00keysK\x01sb", "dict"),
    ],
    ids=["untouched", "grad_fn", "array", "shadowed-method"],
)
def test_a_build_opcode_cannot_reach_inside_a_tensor_or_a_dict(
    torch, tmp_path, target, build, message
):
    # BUILD sets attributes of the object before it: legitimate for a Namespace, but it must
    # not plant data in a tensor's slots or shadow an OrderedDict's methods.
    path = torch_saved(torch, {"w": torch.ones(2), "od": collections.OrderedDict(a=1)}, tmp_path)

    def insert(pickled):
        at = reduce_end(pickled, target)
        return pickled[:at] + build + pickled[at:]

    path.write_bytes(edit_pickle(path.read_bytes(), insert))
    if message is None:
        assert load(path)["w"].tolist() == [1.0, 1.0]
    else:
        with pytest.raises(SerializationError, match=f"the pickle sets .* of a {message} \\(BUILD"):
            load(path)


@FORMATS
@pytest.mark.parametrize("protocol", [2, 4])
def test_numpy_arrays_and_scalars_in_a_torch_file_load_as_numpy(
    torch, tmp_path, zip_format, protocol
):
    shared = np.linspace(0, 1, 4)
    obj = {
        "matrix": np.arange(6.0).reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "big_endian": np.arange(3, dtype=">f4"),
        "mask": np.array([True, False]),
        "empty": np.zeros((0, 3), np.float32),
        "loss": np.float64(0.25),
        "step": np.int64(7),
        "shared": (shared, shared),
        "tensor": torch.arange(3),
    }
    path = tmp_path / "numpy.pt"
    torch.save(obj, path, pickle_protocol=protocol, _use_new_zipfile_serialization=zip_format)
    loaded = load(path)
    for name in ("matrix", "fortran", "mask", "empty", "loss", "step"):
        assert type(loaded[name]) is type(obj[name])
        assert loaded[name].dtype == obj[name].dtype
        np.testing.assert_array_equal(loaded[name], obj[name])
    assert loaded["matrix"].flags.writeable
    assert loaded["big_endian"].tolist() == [0.0, 1.0, 2.0]
    assert loaded["shared"][0] is loaded["shared"][1]
    assert loaded["tensor"].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("dtype_args", "state", "message"),
    [
        (
            "(S'O'\nI00\nI01\ntR",
            "(I3\nS'|'\nNNNI-1\nI-1\nI63\ntb",
            "dtype 'O' is not a plain number",
        ),
        (
            "(S'f8'\nI00\nI01\ntR",
            "(I3\nS'<'\nN(S'x'\ntNI-1\nI-1\nI0\ntb",
            "with fields or a subarray",
        ),
    ],
    ids=["object", "fields"],
)
def test_a_numpy_dtype_of_objects_or_fields_is_refused(tmp_path, dtype_args, state, message):
    # Protocol 0 by hand: numpy.dtype(...) then BUILD, as NumPy pickles a dtype.
    pickled = ("cnumpy\ndtype\n" + dtype_args + state + ".").encode()
    path = tmp_path / "a.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/data.pkl", pickled)
    with pytest.raises(SerializationError, match=re.escape(message)):
        load(path)


@pytest.mark.parametrize("writer", ["chainrule", "torch-zip", "torch-legacy"])
def test_an_error_in_the_callers_map_location_function_is_raised_as_it_is(torch, writer):
    buffer = io.BytesIO()
    if writer == "chainrule":
        save({"w": chainrule.ones(2)}, buffer)
    else:
        torch.save(
            {"w": torch.ones(2)}, buffer, _use_new_zipfile_serialization=writer == "torch-zip"
        )
    buffer.seek(0)

    def to_gpu(storage, location):
        raise RuntimeError("no GPU here")

    with pytest.raises(RuntimeError, match="^no GPU here$"):
        load(buffer, map_location=to_gpu)


def test_a_legacy_file_cannot_claim_more_storage_than_it_holds(torch, tmp_path):
    # Many storage ids, each claiming most of the file: allocating them all would take
    # (ids x file size) bytes; the claims together must fit in the file.
    path = torch_saved(torch, [torch.ones(2)], tmp_path, zip_format=False)
    data = path.read_bytes()
    magic_and_header_end = data.index(b".", data.index(b"little_endian")) + 1
    half = struct.pack("<i", len(data) // 2)  # each claim alone would fit
    claims = b"".join(
        b"(X\x07\x00\x00\x00storagectorch\nByteStorage\nX\x03\x00\x00\x00"
        + f"{i:03d}".encode()
        + b"X\x03\x00\x00\x00cpuJ"
        + half
        + b"NtQ"
        for i in range(200)
    )
    path.write_bytes(data[:magic_and_header_end] + b"\x80\x02(" + claims + b"l." + data[-40:])
    with pytest.raises(SerializationError, match="needs more bytes than the file holds"):
        load(path)
