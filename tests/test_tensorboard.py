"""chainrule.tensorboard.SummaryWriter: the same calls made on it and on PyTorch's
torch.utils.tensorboard.SummaryWriter write event files that TensorBoard's own reader
(EventAccumulator) reads back the same: tags, steps, wall times, values, histogram buckets,
text, images, hyperparameters, sub-runs of add_scalars, purge_step."""

import os
import subprocess
import sys

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import chainrule
from chainrule.errors import ShapeError
from chainrule.tensorboard import SummaryWriter

EVERYTHING = {"scalars": 0, "histograms": 0, "tensors": 0, "images": 0}
VALUES = np.random.default_rng(0).normal(size=500)


def read(log_dir):
    return EventAccumulator(str(log_dir), size_guidance=EVERYTHING).Reload()


def log_a_run(writer, tensor):
    """The calls a training script makes, with ``tensor`` the library's tensor constructor."""
    for step in range(3):
        writer.add_scalar("loss", tensor(0.5 / (step + 1)), step, walltime=100.0 + step)
        writer.add_scalar("lr", 0.1 * step, step, new_style=True)
        writer.add_scalar("lr64", np.float64(0.1 * step), step, new_style=True,
                          double_precision=True)  # fmt: skip
        writer.add_scalars("run/acc", {"train": step / 10, "test": tensor([step / 20])}, step)
        writer.add_histogram("weights", tensor(VALUES + step), step)
        writer.add_histogram("merged", VALUES, step, bins="auto", max_bins=7)
        writer.add_histogram("ints", np.arange(10) % 4, step, bins=4)
    writer.add_text("notes", "lr **0.1**, batch 32", 1)
    writer.add_image("chw", np.random.default_rng(1).random((3, 4, 5)), 0)
    writer.add_image("hwc", (np.arange(20, dtype=np.uint8) * 12).reshape(4, 5, 1), 0,
                     dataformats="HWC")  # fmt: skip
    writer.add_image("hw", tensor(np.linspace(0, 1, 12).reshape(3, 4)), 2, dataformats="HW")
    writer.add_hparams({"lr": 0.1, "optimizer": "sgd", "bn": True}, {"hp/loss": 0.3},
                       run_name="hparams")  # fmt: skip


@pytest.fixture(scope="module")
def runs(torch, tmp_path_factory):
    """The events of one run logged by each library: (ours, theirs), each a log directory."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    root = tmp_path_factory.mktemp("runs")
    with SummaryWriter(root / "ours") as writer:
        log_a_run(writer, chainrule.tensor)
    with TorchWriter(str(root / "theirs")) as writer:
        log_a_run(writer, torch.tensor)
    return root / "ours", root / "theirs"


def test_the_same_files_and_tags_are_written(runs):
    ours, theirs = runs
    subdirs = [sorted(p.name for p in run.iterdir() if p.is_dir()) for run in runs]
    assert subdirs[0] == subdirs[1] == ["hparams", "run_acc_test", "run_acc_train"]
    assert all(name.startswith("events.out.tfevents.") for name in os.listdir(ours / "hparams"))
    assert read(ours).Tags() == read(theirs).Tags()
    assert read(ours).Tags()["scalars"] == ["loss"]


def test_scalars_steps_wall_times_and_new_style_tensors_match(runs):
    ours, theirs = map(read, runs)
    assert [(e.step, e.wall_time, e.value) for e in ours.Scalars("loss")] == [
        (e.step, e.wall_time, e.value) for e in theirs.Scalars("loss")
    ]
    assert [e.value for e in ours.Scalars("loss")] == pytest.approx([0.5, 0.25, 1 / 6])
    for tag in ("lr", "lr64"):
        assert [(e.step, e.tensor_proto) for e in ours.Tensors(tag)] == [
            (e.step, e.tensor_proto) for e in theirs.Tensors(tag)
        ]
        assert ours.SummaryMetadata(tag) == theirs.SummaryMetadata(tag)


def test_add_scalars_writes_one_sub_run_per_tag_as_pytorch(runs):
    for tag in ("train", "test"):
        ours, theirs = (read(run / f"run_acc_{tag}") for run in runs)
        assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["run/acc"]
        assert [(e.step, e.value) for e in ours.Scalars("run/acc")] == [
            (e.step, e.value) for e in theirs.Scalars("run/acc")
        ]


@pytest.mark.parametrize("tag", ["weights", "merged", "ints"])
def test_histograms_have_pytorchs_buckets(runs, tag):
    ours, theirs = (read(run).Histograms(tag) for run in runs)
    assert [e.step for e in ours] == [e.step for e in theirs] == [0, 1, 2]
    for mine, torchs in zip(ours, theirs):
        assert mine.histogram_value == torchs.histogram_value
    assert ours[0].histogram_value.num == (10 if tag == "ints" else 500)


def test_text_images_and_hparams_match(runs):
    ours, theirs = map(read, runs)
    assert ours.Tensors("notes/text_summary")[0].tensor_proto.string_val == [
        b"lr **0.1**, batch 32"
    ]
    mine, torchs = (run.Tensors("notes/text_summary")[0] for run in (ours, theirs))
    assert (mine.step, mine.tensor_proto) == (torchs.step, torchs.tensor_proto)
    tag = "notes/text_summary"
    assert ours.SummaryMetadata(tag) == theirs.SummaryMetadata(tag)
    for tag in ("chw", "hwc", "hw"):
        mine, torchs = ours.Images(tag)[0], theirs.Images(tag)[0]
        assert (mine.step, mine.width, mine.height) == (torchs.step, torchs.width, torchs.height)
        assert mine.encoded_image_string == torchs.encoded_image_string
    hp_ours, hp_theirs = (read(run / "hparams") for run in runs)
    for tag in (
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
    ):
        assert hp_ours.SummaryMetadata(tag) == hp_theirs.SummaryMetadata(tag)
    assert [e.value for e in hp_ours.Scalars("hp/loss")] == pytest.approx([0.3])


def test_purge_step_drops_what_an_earlier_run_logged_from_that_step(torch, tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    for name, writer_class in (("ours", SummaryWriter), ("theirs", TorchWriter)):
        with writer_class(str(tmp_path / name)) as writer:
            for step in range(5):
                writer.add_scalar("loss", step, step)
        with writer_class(str(tmp_path / name), purge_step=2) as writer:
            for step in (2, 3):
                writer.add_scalar("loss", 10 * step, step)
    ours, theirs = ([(e.step, e.value) for e in read(tmp_path / n).Scalars("loss")]
                    for n in ("ours", "theirs"))  # fmt: skip
    assert ours == theirs == [(0, 0), (1, 1), (2, 20), (3, 30)]


def test_flush_close_reopen_and_the_default_log_dir(torch, tmp_path, monkeypatch):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    writer = SummaryWriter(tmp_path / "run", max_queue=1000, flush_secs=1000)
    assert writer.get_logdir() == str(tmp_path / "run")
    writer.add_scalar("x", 1.0, 0)
    writer.flush()
    assert [e.value for e in read(tmp_path / "run").Scalars("x")] == [1.0]
    writer.close()
    writer.close()  # twice is harmless
    writer.add_scalar("x", 2.0, 1)  # logging after close opens a new file, as PyTorch
    writer.close()
    assert [e.value for e in read(tmp_path / "run").Scalars("x")] == [1.0, 2.0]
    monkeypatch.chdir(tmp_path)
    ours, theirs = SummaryWriter(comment="_lr0.1"), TorchWriter(comment="_lr0.1")
    for writer in (ours, theirs):
        writer.close()
    assert os.path.dirname(ours.get_logdir()) == os.path.dirname(theirs.get_logdir()) == "runs"
    assert ours.get_logdir().split("_", 1)[1] == theirs.get_logdir().split("_", 1)[1]


def test_add_graph_writes_the_ops_the_forward_pass_records(tmp_path):
    class Net(chainrule.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = chainrule.nn.Linear(3, 4), chainrule.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(chainrule.relu(self.fc1(x * 2)))

    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(Net(), chainrule.ones(5, 3))
        with pytest.warns(UserWarning, match="pass input_to_model"):
            writer.add_graph(Net())
    nodes = {node.name: node for node in read(tmp_path).Graph().node}
    params = {name for name, node in nodes.items() if node.op == "Parameter"}
    assert params == {"Net/fc1/weight", "Net/fc1/bias", "Net/fc2/weight", "Net/fc2/bias"}
    assert nodes["input/0"].attr["attr"].s == b"float32 5x3"
    assert "input/0" in nodes["Net/mul_0"].input and nodes["Net/relu_2"].op == "relu"
    (last,) = nodes["output/0"].input
    assert "Net/fc2/bias" in nodes[last].input and nodes[last].attr["attr"].s == b"float32 5x2"


def test_values_must_be_one_number_and_the_extra_is_named_when_missing(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(ShapeError, match="add_scalar: scalar_value must hold one number"):
            writer.add_scalar("x", chainrule.ones(2))
        with pytest.raises(ValueError, match="no values"):
            writer.add_histogram("h", np.zeros(0))
    script = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "import chainrule, chainrule.tensorboard\n"
        "assert 'tensorboard' not in [m.split('.')[0] for m in sys.modules if sys.modules[m]]\n"
        "try:\n    chainrule.tensorboard.SummaryWriter()\n"
        "except ImportError as error:\n    print(error)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)  # fmt: skip
    assert "pip install chainrule[tensorboard]" in out.stdout, out.stderr
    assert not (tmp_path / "runs").exists()
