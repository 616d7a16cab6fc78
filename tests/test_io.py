"""chainrule.save and chainrule.load: round trips of model and optimizer state, the safetensors
format on disk, and clear errors (never code execution) for damaged or hostile files."""

import json
import math
import os
import pickle
import re
import zipfile

import numpy as np
import pytest

import chainrule
from chainrule import SerializationError, load, nn, optim, save
from chainrule.errors import DTypeError

safetensors_numpy = pytest.importorskip("safetensors.numpy")


class Tiny(nn.Module):
    """x @ weight + bias, times a float64 buffer; an int64 and a bool buffer ride along."""

    def __init__(self, seed: int = 0, in_features: int = 3) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.weight = nn.Parameter(chainrule.tensor(rng.standard_normal((in_features, 2))))
        self.bias = nn.Parameter(chainrule.tensor(rng.standard_normal(2)))
        self.register_buffer("scale", chainrule.tensor(np.array([1.5, 0.5])))
        self.register_buffer("count", chainrule.tensor(np.array([seed, 7], dtype=np.int64)))
        self.register_buffer("mask", chainrule.tensor(np.array([True, seed % 2 == 1])))

    def forward(self, x):
        return (x @ self.weight + self.bias) * self.scale


def arrays_of(module: nn.Module) -> dict[str, np.ndarray]:
    """A snapshot (copies) of every array in the module's state dict."""
    return {name: tensor.numpy().copy() for name, tensor in module.state_dict().items()}


def train(model: nn.Module, optimizer: optim.Optimizer, steps: int) -> None:
    X = chainrule.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    target = chainrule.tensor(np.array([[1.0, -1.0], [0.5, 0.0], [0.0, 2.0], [-1.0, 1.0]]))
    for _ in range(steps):
        optimizer.zero_grad()
        ((model(X) - target) ** 2).mean().backward()
        optimizer.step()


def header_of(path) -> tuple[dict, bytes]:
    """The parsed JSON header of a safetensors file and the bytes after it."""
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + length]), data[8 + length :]


def write_raw(path, header: dict, body: bytes = b"") -> None:
    """A safetensors-shaped file with the given header (not checked) and data bytes."""
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + body)


def names_path(path) -> str:
    return re.escape(repr(str(path)))


# Round trips.


def test_model_state_dict_round_trip_restores_every_array_and_dtype(tmp_path):
    path = tmp_path / "model.safetensors"
    source = Tiny(seed=1)
    save(source.state_dict(), path)
    loaded = load(path)
    assert list(loaded) == ["weight", "bias", "scale", "count", "mask"]
    for name, expected in arrays_of(source).items():
        assert loaded[name].dtype == expected.dtype
        np.testing.assert_array_equal(loaded[name].numpy(), expected)
    target = Tiny(seed=0)
    assert not np.array_equal(target.weight.detach().numpy(), source.weight.detach().numpy())
    target.load_state_dict(loaded)
    for name, expected in arrays_of(source).items():
        np.testing.assert_array_equal(target.state_dict()[name].numpy(), expected)


def test_loaded_tensors_are_writable_copies_without_grad(tmp_path):
    path = tmp_path / "w.safetensors"
    model = Tiny()
    save(model.state_dict(), path)
    weight = load(path)["weight"]
    assert not weight.requires_grad
    weight.data[0, 0] = 123.0  # would raise on a read-only buffer
    assert model.weight.detach().numpy()[0, 0] != 123.0


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_],
)
def test_dtype_and_values_survive_a_round_trip(tmp_path, dtype):
    path = tmp_path / "a.safetensors"
    array = (np.arange(-3, 9).reshape(3, 4) % 5).astype(dtype)
    save({"x": array, "t": chainrule.tensor(array)}, path)
    loaded = load(path)
    for key in ("x", "t"):
        assert loaded[key].dtype == np.dtype(dtype)
        assert loaded[key].shape == (3, 4)
        np.testing.assert_array_equal(loaded[key].numpy(), array)


def test_zero_dim_and_empty_arrays_keep_their_shapes(tmp_path):
    path = tmp_path / "a.safetensors"
    save({"scalar": np.array(3.5), "empty": np.zeros((0, 3), np.float32)}, path)
    loaded = load(path)
    assert loaded["scalar"].shape == ()
    assert loaded["scalar"].item() == 3.5
    assert loaded["empty"].shape == (0, 3)
    assert loaded["empty"].dtype == np.float32


def test_big_endian_and_non_contiguous_arrays_load_back_equal(tmp_path):
    path = tmp_path / "a.safetensors"
    big = (np.arange(5) / 3).astype(">f8")
    assert big.dtype.byteorder == ">"
    strided = np.arange(24.0).reshape(4, 6)[::2, ::3]
    fortran = np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3))
    save({"big": big, "strided": strided, "fortran": fortran}, path)
    loaded = load(path)
    np.testing.assert_array_equal(loaded["big"].numpy(), big)
    np.testing.assert_array_equal(loaded["strided"].numpy(), strided)
    np.testing.assert_array_equal(loaded["fortran"].numpy(), fortran)


def test_nested_structure_keeps_container_and_key_types(tmp_path):
    path = tmp_path / "a.safetensors"
    obj = {
        "epoch": 3,
        "lr": 2.0,
        "name": "run-1",
        "flags": [True, None, float("inf")],
        "pair": (1, chainrule.ones(2)),
        "by_index": {0: "zero", 1: {"deep": [chainrule.zeros(1, dtype=np.int64)]}},
        "by_float": {2.5: "x", None: "y"},
        "empty": {"list": [], "dict": {}, "tuple": ()},
    }
    save(obj, path)
    loaded = load(path)
    assert loaded["epoch"] == 3 and type(loaded["epoch"]) is int
    assert loaded["lr"] == 2.0 and type(loaded["lr"]) is float
    assert loaded["name"] == "run-1"
    assert loaded["flags"][:2] == [True, None] and math.isinf(loaded["flags"][2])
    assert type(loaded["pair"]) is tuple and loaded["pair"][0] == 1
    assert loaded["pair"][1].tolist() == [1.0, 1.0]
    assert list(loaded["by_index"]) == [0, 1]
    assert loaded["by_index"][1]["deep"][0].dtype == np.int64
    assert loaded["by_float"] == {2.5: "x", None: "y"}
    assert loaded["empty"] == {"list": [], "dict": {}, "tuple": ()}


def test_numpy_scalars_are_saved_as_plain_values(tmp_path):
    path = tmp_path / "a.safetensors"
    save({"f": np.float32(1.5), "i": np.int64(4), "b": np.bool_(True), "s": np.str_("hi")}, path)
    assert load(path) == {"f": 1.5, "i": 4, "b": True, "s": "hi"}


def test_adam_resumed_from_a_file_trains_bit_identically(tmp_path):
    path = tmp_path / "checkpoint.safetensors"
    model = Tiny(seed=0)
    optimizer = optim.Adam(model.parameters(), lr=0.05, betas=(0.8, 0.99))
    train(model, optimizer, steps=3)
    save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, path)
    train(model, optimizer, steps=4)

    checkpoint = load(path)
    assert checkpoint["epoch"] == 3
    assert checkpoint["optimizer"]["state"][0]["step"] == 3
    assert checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.8, 0.99)
    resumed = Tiny(seed=5)
    resumed_optimizer = optim.Adam(resumed.parameters(), lr=1.0)
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    assert resumed_optimizer.param_groups[0]["lr"] == 0.05
    train(resumed, resumed_optimizer, steps=4)
    for name, expected in arrays_of(model).items():
        np.testing.assert_array_equal(arrays_of(resumed)[name], expected)

    # The optimizer state matters: resuming with a fresh Adam ends elsewhere.
    fresh = Tiny(seed=5)
    fresh.load_state_dict(checkpoint["model"])
    train(fresh, optim.Adam(fresh.parameters(), lr=0.05, betas=(0.8, 0.99)), steps=4)
    assert not np.array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())


# The file format.


def test_saved_file_is_plain_safetensors_with_dotted_names(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    model = Tiny(seed=2)
    optimizer = optim.Adam(model.parameters(), lr=0.1)
    train(model, optimizer, steps=1)
    save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    arrays = safetensors_numpy.load_file(str(path))
    expected = arrays_of(model)
    assert {f"model.{name}" for name in expected} <= set(arrays)
    for name, value in expected.items():
        assert arrays[f"model.{name}"].dtype == value.dtype
        np.testing.assert_array_equal(arrays[f"model.{name}"], value)
    np.testing.assert_array_equal(
        arrays["optimizer.state.0.exp_avg"], optimizer.state[model.weight]["exp_avg"].numpy()
    )
    header, _ = header_of(path)
    assert set(header["__metadata__"]) == {"chainrule.tree", "chainrule.crc32"}
    assert all(isinstance(value, str) for value in header["__metadata__"].values())


def test_file_from_safetensors_save_file_loads_as_a_flat_dict(tmp_path):
    path = tmp_path / "foreign.safetensors"
    arrays = {
        "encoder.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "steps": np.array([4, 5], dtype=np.int64),
    }
    safetensors_numpy.save_file(arrays, str(path), metadata={"format": "np"})
    loaded = load(path)
    assert set(loaded) == set(arrays)
    for name, array in arrays.items():
        assert isinstance(loaded[name], chainrule.Tensor)
        assert loaded[name].dtype == array.dtype
        np.testing.assert_array_equal(loaded[name].numpy(), array)


def test_saved_file_gets_the_permissions_open_would_give(tmp_path):
    path = tmp_path / "a.safetensors"
    old = os.umask(0o027)
    try:
        save({"w": chainrule.ones(2)}, path)
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o640


# Loading never runs code.


class RunsCode:
    """Unpickling this creates the file ``marker``: a stand-in for an attack."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


def test_the_pickle_payload_used_below_really_runs_code(tmp_path):
    marker = tmp_path / "control"
    pickle.loads(pickle.dumps(RunsCode(marker)))
    assert marker.exists()


def test_a_pickle_file_is_refused_and_never_unpickled(tmp_path):
    marker, path = tmp_path / "attack", tmp_path / "model.safetensors"
    path.write_bytes(pickle.dumps({"weight": RunsCode(marker)}))
    with pytest.raises(SerializationError, match=names_path(path)):
        load(path)
    assert not marker.exists()


def test_a_torch_style_zip_checkpoint_is_refused_and_never_unpickled(tmp_path):
    marker, path = tmp_path / "attack", tmp_path / "model.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(RunsCode(marker)))
    with pytest.raises(SerializationError, match="not a safetensors file"):
        load(path)
    assert not marker.exists()


def test_a_pickle_payload_in_the_metadata_comes_back_as_a_string(tmp_path):
    marker, path = tmp_path / "attack", tmp_path / "a.safetensors"
    payload = pickle.dumps(RunsCode(marker)).decode("latin-1")
    tree = {"dict": [["note", payload]]}
    metadata = {"chainrule.tree": json.dumps(tree), "pickle": payload}
    write_raw(path, {"__metadata__": metadata})
    assert load(path) == {"note": payload}
    assert not marker.exists()


def test_load_works_with_pickle_disabled(tmp_path, monkeypatch):
    path = tmp_path / "a.safetensors"
    save({"model": Tiny().state_dict(), "epoch": 1}, path)

    def refuse(*args, **kwargs):
        raise AssertionError("load must not unpickle")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    assert load(path)["model"]["count"].tolist() == [0, 7]


# Damaged files: a SerializationError that names the file.


def test_serialization_error_is_a_value_error():
    assert issubclass(SerializationError, ValueError)


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": np.arange(4, dtype=np.float32), "step": 2}, path)
    return path


@pytest.mark.parametrize("keep", [0, 5])
def test_file_shorter_than_the_length_field(saved, keep):
    saved.write_bytes(saved.read_bytes()[:keep])
    with pytest.raises(SerializationError, match=f"{names_path(saved)} has {keep} bytes, too few"):
        load(saved)


def test_file_truncated_inside_the_header(saved):
    saved.write_bytes(saved.read_bytes()[:40])
    with pytest.raises(SerializationError, match=r"header claims \d+ bytes but only 32 follow"):
        load(saved)


def test_file_truncated_inside_the_data(saved):
    saved.write_bytes(saved.read_bytes()[:-3])
    with pytest.raises(SerializationError, match=f"{names_path(saved)} is not a valid safetensors"):
        load(saved)


def test_header_length_larger_than_the_file(saved):
    data = saved.read_bytes()
    saved.write_bytes(len(data).to_bytes(8, "little") + data[8:])
    message = f"{names_path(saved)}: the header claims {len(data)} bytes but only"
    with pytest.raises(SerializationError, match=message):
        load(saved)


def test_header_that_is_not_json(saved):
    data = bytearray(saved.read_bytes())
    data[8] = ord("x")  # the header's opening brace
    saved.write_bytes(bytes(data))
    with pytest.raises(
        SerializationError, match=f"{names_path(saved)}: the header is not valid JSON"
    ):
        load(saved)


def test_header_that_is_a_json_list(tmp_path):
    path = tmp_path / "a.safetensors"
    write_raw(path, [1, 2])
    with pytest.raises(SerializationError, match="the header is not a JSON object"):
        load(path)


def test_unknown_dtype_string(saved):
    saved.write_bytes(saved.read_bytes().replace(b'"F32"', b'"Q32"'))
    with pytest.raises(SerializationError, match=r"not a valid safetensors file: .*Q32"):
        load(saved)


@pytest.mark.parametrize("offsets", [[0, 1600], [8, 4], [0, 12]])
def test_data_offsets_that_do_not_fit(saved, offsets):
    header, body = header_of(saved)
    header["w"]["data_offsets"] = offsets
    write_raw(saved, header, body)
    with pytest.raises(SerializationError, match=f"{names_path(saved)} is not a valid safetensors"):
        load(saved)


def test_changed_tensor_bytes_fail_the_checksum(saved):
    data = bytearray(saved.read_bytes())
    data[-1] ^= 0x40
    saved.write_bytes(bytes(data))
    message = f"{names_path(saved)}: the data of tensor 'w' does not match its checksum"
    with pytest.raises(SerializationError, match=message):
        load(saved)


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        ("{not json", "the chainrule metadata is corrupted"),
        ("[" * 100_000 + "]" * 100_000, "the chainrule metadata is corrupted"),
        ('{"pickle": "x"}', "the metadata's structure is malformed"),
        ('{"dict": [["only a key"]]}', "the metadata's structure is malformed"),
        ('{"dict": [[["unhashable"], 1]]}', "the metadata's structure is malformed"),
        ('{"tensor": "absent"}', "the metadata names a missing 'absent'"),
    ],
    ids=["not-json", "too-deep", "unknown-tag", "half-pair", "unhashable-key", "missing-tensor"],
)
def test_corrupted_chainrule_metadata(tmp_path, tree, message):
    path = tmp_path / "a.safetensors"
    write_raw(path, {"__metadata__": {"chainrule.tree": tree}})
    with pytest.raises(SerializationError, match=f"{names_path(path)}: {re.escape(message)}"):
        load(path)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "absent.safetensors")


# Loading into a model: a wrong key or shape changes nothing.


def test_wrong_key_raises_and_the_model_keeps_its_weights(tmp_path):
    path = tmp_path / "a.safetensors"
    save(Tiny(seed=1).state_dict(), path)
    checkpoint = load(path)
    checkpoint["weights"] = checkpoint.pop("weight")
    model = Tiny(seed=0)
    before = arrays_of(model)
    message = (
        r"Missing key\(s\) in state_dict: 'weight'\n"
        r"    Unexpected key\(s\) in state_dict: 'weights'"
    )
    with pytest.raises(nn.StateDictError, match=message):
        model.load_state_dict(checkpoint)
    for name, array in arrays_of(model).items():
        np.testing.assert_array_equal(array, before[name])


def test_wrong_shape_raises_and_the_model_keeps_its_weights(tmp_path):
    path = tmp_path / "a.safetensors"
    save(Tiny(seed=1, in_features=4).state_dict(), path)
    model = Tiny(seed=0)
    before = arrays_of(model)
    message = (
        r"size mismatch for 'weight': the checkpoint has shape \(4, 2\), the current model \(3, 2\)"
    )
    with pytest.raises(nn.StateDictError, match=message):
        model.load_state_dict(load(path))
    # bias, scale, count and mask fit, yet none of them was copied either.
    for name, array in arrays_of(model).items():
        np.testing.assert_array_equal(array, before[name])


def test_optimizer_state_of_the_wrong_shape_changes_nothing(tmp_path):
    path = tmp_path / "a.safetensors"
    other = Tiny(in_features=4)
    other_optimizer = optim.Adam(other.parameters(), lr=0.1)
    train_input = chainrule.ones(1, 4)
    (other(train_input) ** 2).sum().backward()
    other_optimizer.step()
    save(other_optimizer.state_dict(), path)

    model = Tiny()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    train(model, optimizer, steps=2)
    state = optimizer.state[model.weight]
    before = {name: state[name].numpy().copy() for name in ("exp_avg", "exp_avg_sq")}
    with pytest.raises(ValueError, match=r"state 'exp_avg' of parameter 0 has shape \(4, 2\)"):
        optimizer.load_state_dict(load(path))
    assert optimizer.param_groups[0]["lr"] == 0.01
    assert optimizer.state[model.weight]["step"] == 2
    for name in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(optimizer.state[model.weight][name].numpy(), before[name])


# What cannot be saved, and saving safely.


@pytest.mark.parametrize(
    ("obj", "error", "message"),
    [
        ({"f": lambda: 0}, DTypeError, "save: 'f' has type function; only tensors, arrays"),
        ({"o": object()}, DTypeError, "save: 'o' has type object; only tensors"),
        ({"s": {1, 2}}, DTypeError, "save: 's' has type set"),
        ({"d": np.datetime64("2020-01-01")}, DTypeError, "save: 'd' has type date"),
        ({"z": np.ones(2, complex)}, DTypeError, "save: 'z' holds complex128 data"),
        ({(1, 2): 0}, DTypeError, "save: key (1, 2) in 'the top level' is a tuple"),
        (
            {"a.b": chainrule.ones(1), "a": {"b": chainrule.ones(1)}},
            SerializationError,
            "save: two entries both flatten to the tensor name 'a.b'; rename one",
        ),
        (
            {"__metadata__": chainrule.ones(1)},
            SerializationError,
            "save: the tensor name '__metadata__' is reserved",
        ),
    ],
    ids=["lambda", "object", "set", "datetime", "complex", "tuple-key", "clash", "reserved"],
)
def test_unsaveable_objects_raise_and_write_nothing(tmp_path, obj, error, message):
    path = tmp_path / "a.safetensors"
    with pytest.raises(error, match=re.escape(message)):
        save(obj, path)
    assert os.listdir(tmp_path) == []


def test_failed_save_leaves_the_existing_file_intact(tmp_path):
    path = tmp_path / "a.safetensors"
    save({"w": chainrule.ones(3)}, path)
    original = path.read_bytes()
    with pytest.raises(DTypeError):
        save({"w": chainrule.zeros(3), "f": print}, path)
    assert path.read_bytes() == original


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_crash_while_writing_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch, step):
    path = tmp_path / "a.safetensors"
    save({"w": chainrule.ones(3)}, path)
    original = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, step, crash)
    with pytest.raises(OSError, match="No space left"):
        save({"w": chainrule.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["a.safetensors"]
    assert load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_save_into_a_missing_folder_names_the_folder(tmp_path):
    path = tmp_path / "missing" / "a.safetensors"
    with pytest.raises(FileNotFoundError, match=re.escape(repr(str(tmp_path / "missing")))):
        save({"w": chainrule.ones(1)}, path)


def test_save_overwrites_an_existing_file(tmp_path):
    path = tmp_path / "a.safetensors"
    save({"w": chainrule.ones(2)}, path)
    save({"w": chainrule.zeros(3)}, path)
    assert load(path)["w"].tolist() == [0.0, 0.0, 0.0]
    assert os.listdir(tmp_path) == ["a.safetensors"]
