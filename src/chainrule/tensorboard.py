"""`SummaryWriter`: training logs as TensorBoard event files (``torch.utils.tensorboard``), written
through the ``tensorboard`` package's own protobufs and event file writer (the optional extra
``chainrule[tensorboard]``, imported only when a writer is made)."""

from __future__ import annotations

import importlib
import io
import numbers
import os
import socket
import time
import warnings
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np

from ._tensor import Tensor
from .errors import DomainError, DTypeError, ShapeError, fmt_shape
from .graph import enable_grad


def _bucket_edges() -> list[float]:
    """The histogram bucket edges TensorBoard's own summaries use ("tensorflow" bins): 0, and
    on either side of it the powers of 1.1 from 1e-12 up to 1e20."""
    positive, edge = [], 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0.0] + positive


_TENSORFLOW_BINS = _bucket_edges()


def _tb(op: str):
    """The tensorboard modules a writer uses, or an ImportError naming the extra."""
    names = {
        "event_pb2": "tensorboard.compat.proto.event_pb2",
        "summary_pb2": "tensorboard.compat.proto.summary_pb2",
        "tensor_pb2": "tensorboard.compat.proto.tensor_pb2",
        "tensor_shape_pb2": "tensorboard.compat.proto.tensor_shape_pb2",
        "graph_pb2": "tensorboard.compat.proto.graph_pb2",
        "writer": "tensorboard.summary.writer.event_file_writer",
    }
    try:
        return {key: importlib.import_module(name) for key, name in names.items()}
    except ImportError as error:
        raise ImportError(
            f"{op}: writing TensorBoard event files needs the tensorboard package; "
            "pip install chainrule[tensorboard] (or pip install tensorboard)"
        ) from error


def _array(value: Any, op: str, name: str) -> np.ndarray:
    """``value`` (a number, a NumPy array, a chainrule Tensor, anything NumPy reads) as an
    array of numbers."""
    if isinstance(value, Tensor):
        return value._array
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"{op}: {name} must be numbers, got {type(value).__name__}")
    return array


def _scalar(value: Any, op: str) -> float:
    array = _array(value, op, "scalar_value")
    if array.size != 1:
        raise ShapeError(
            f"{op}: scalar_value must hold one number, got shape {fmt_shape(array.shape)}; "
            "log a histogram (add_histogram) or one scalar per element"
        )
    return float(array.reshape(()))


class SummaryWriter:
    """Write scalars, histograms, text, images, hyperparameters and a model's graph to an event
    file in ``log_dir`` that TensorBoard reads (``tensorboard --logdir runs``).

    The arguments are PyTorch's: ``log_dir`` defaults to ``runs/<date>_<hostname><comment>``;
    ``max_queue`` events are held (and ``flush_secs`` seconds at most) before they are
    written; ``purge_step`` tells TensorBoard to drop what an earlier run logged at that step
    and after (a restart from a checkpoint). Values may be Python numbers, NumPy arrays or
    chainrule Tensors. A writer is a context manager that closes itself.

    ``add_graph`` writes the graph the model's forward pass records, op by op, as a GraphDef
    (PyTorch's traces a TorchScript graph: node names and grouping differ).

    >>> import tempfile
    >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(
        self,
        log_dir: str | os.PathLike | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        self._tb = _tb("SummaryWriter")
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.default_bins = _TENSORFLOW_BINS
        self._writers: dict[str, Any] | None = None
        self._graph_warned = False
        self._file_writer()

    def _file_writer(self, log_dir: str | None = None):
        """The event file writer of ``log_dir`` (the main one by default), made when first
        needed; a closed writer opens new files when written to again, as PyTorch's."""
        if self._writers is None:
            self._writers = {self.log_dir: self._new_writer(self.log_dir)}
            if self.purge_step is not None:  # TensorBoard drops steps >= this one
                event_pb2 = self._tb["event_pb2"]
                restart = event_pb2.SessionLog(status=event_pb2.SessionLog.START)
                self._add_event(event_pb2.Event(file_version="brain.Event:2"), self.purge_step)
                self._add_event(event_pb2.Event(session_log=restart), self.purge_step)
                self.purge_step = None
        log_dir = self.log_dir if log_dir is None else log_dir
        if log_dir not in self._writers:
            self._writers[log_dir] = self._new_writer(log_dir)
        return self._writers[log_dir]

    def _new_writer(self, log_dir: str):
        return self._tb["writer"].EventFileWriter(
            log_dir, self.max_queue, self.flush_secs, self.filename_suffix
        )

    def _add_event(self, event, global_step=None, walltime=None, log_dir=None) -> None:
        event.wall_time = time.time() if walltime is None else float(walltime)
        if global_step is not None:
            event.step = int(_scalar(global_step, "SummaryWriter: global_step"))
        self._file_writer(log_dir).add_event(event)

    def _add_summary(self, values, global_step=None, walltime=None, log_dir=None) -> None:
        summary = self._tb["summary_pb2"].Summary(value=values)
        self._add_event(
            self._tb["event_pb2"].Event(summary=summary), global_step, walltime, log_dir
        )

    def get_logdir(self) -> str:
        """The directory this writer's event file is in."""
        return self.log_dir

    def _scalar_value(self, tag: str, value: float, new_style: bool, double_precision: bool):
        summary_pb2, tensor_pb2 = self._tb["summary_pb2"], self._tb["tensor_pb2"]
        if not new_style:
            return summary_pb2.Summary.Value(tag=tag, simple_value=value)
        if double_precision:
            tensor = tensor_pb2.TensorProto(double_val=[value], dtype="DT_DOUBLE")
        else:
            tensor = tensor_pb2.TensorProto(float_val=[value], dtype="DT_FLOAT")
        plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
        metadata = summary_pb2.SummaryMetadata(plugin_data=plugin)
        return summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=metadata)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number under ``tag`` at ``global_step``. ``new_style`` stores it as a
        tensor (float32, or float64 with ``double_precision``) rather than a simple value."""
        value = _scalar(scalar_value, "add_scalar")
        summary = self._scalar_value(tag, value, new_style, double_precision)
        self._add_summary([summary], global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: Mapping[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers to plot on one chart: each goes, under ``main_tag``, to its own
        run in the subdirectory ``<log_dir>/<main_tag>_<tag>`` (slashes in ``main_tag`` become
        underscores), as PyTorch writes them."""
        walltime = time.time() if walltime is None else walltime
        for tag, scalar_value in tag_scalar_dict.items():
            log_dir = f"{self.log_dir}/{main_tag.replace('/', '_')}_{tag}"
            value = self._scalar_value(main_tag, _scalar(scalar_value, "add_scalars"), False, False)
            self._add_summary([value], global_step, walltime, log_dir)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the distribution of ``values`` (any shape). ``bins`` is "tensorflow" (TensorBoard's
        default edges, growing by 10% from 1e-12), or what `numpy.histogram` takes; ``max_bins``
        merges neighbouring buckets down to at most that many. Empty buckets at either end are
        dropped, and the histogram starts with an empty bucket, as TensorBoard expects."""
        array = _array(values, "add_histogram", "values").astype(np.float64).reshape(-1)
        if not array.size:
            raise DomainError(f"add_histogram: {tag!r} has no values to count")
        edges = self.default_bins if isinstance(bins, str) and bins == "tensorflow" else bins
        counts, limits = np.histogram(array, bins=edges)
        if max_bins is not None and len(counts) > max_bins:
            group = len(counts) // max_bins
            counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
            limits = np.append(limits[:-1:group], limits[-1])
        filled = np.flatnonzero(counts)
        if not len(filled):
            raise DomainError(
                f"add_histogram: no value of {tag!r} falls in the bins (non-finite values?)"
            )
        first, last = filled[0], filled[-1]
        # Bucket i counts values up to bucket_limit[i]; the leading 0 is the empty bucket
        # below the first filled one, so TensorBoard knows where that one starts.
        histogram = self._tb["summary_pb2"].HistogramProto(
            min=array.min(),
            max=array.max(),
            num=len(array),
            sum=array.sum(),
            sum_squares=array.dot(array),
            bucket_limit=limits[first : last + 2].tolist(),
            bucket=[0, *counts[first : last + 1].tolist()],
        )
        value = self._tb["summary_pb2"].Summary.Value(tag=tag, histo=histogram)
        self._add_summary([value], global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a text (Markdown) under ``<tag>/text_summary``, as PyTorch names it."""
        text_pb2 = importlib.import_module("tensorboard.plugins.text.plugin_data_pb2")
        summary_pb2, tensor_pb2 = self._tb["summary_pb2"], self._tb["tensor_pb2"]
        shape_pb2 = self._tb["tensor_shape_pb2"]
        plugin = summary_pb2.SummaryMetadata.PluginData(
            plugin_name="text", content=text_pb2.TextPluginData(version=0).SerializeToString()
        )
        tensor = tensor_pb2.TensorProto(
            dtype="DT_STRING",
            string_val=[str(text_string).encode("utf-8")],
            tensor_shape=shape_pb2.TensorShapeProto(dim=[shape_pb2.TensorShapeProto.Dim(size=1)]),
        )
        value = summary_pb2.Summary.Value(
            tag=f"{tag}/text_summary",
            metadata=summary_pb2.SummaryMetadata(plugin_data=plugin),
            tensor=tensor,
        )
        self._add_summary([value], global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image: ``img_tensor`` laid out as ``dataformats`` says ("CHW", "HWC" or
        "HW"), floats in [0, 1] or uint8 in [0, 255], with 1 (grey), 3 (RGB) or 4 (RGBA)
        channels. Stored as PNG (Pillow draws it)."""
        array = _array(img_tensor, "add_image", "img_tensor")
        layout = dataformats.upper()
        if layout not in ("CHW", "HWC", "HW") or array.ndim != len(layout):
            raise ShapeError(
                f"add_image: dataformats must be 'CHW', 'HWC' or 'HW' and match the image's "
                f"{array.ndim} dims; got {dataformats!r} for shape {fmt_shape(array.shape)}"
            )
        if layout == "HW":
            array = array[None]
            layout = "CHW"
        hwc = array.transpose([layout.index(axis) for axis in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.repeat(hwc, 3, axis=2)
        scale = 1 if hwc.dtype == np.uint8 else 255
        pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
        image_module = importlib.import_module("PIL.Image")
        png = io.BytesIO()
        image_module.fromarray(pixels).save(png, format="PNG")
        height, width, channels = pixels.shape
        image = self._tb["summary_pb2"].Summary.Image(
            height=height, width=width, colorspace=channels, encoded_image_string=png.getvalue()
        )
        self._add_summary([self._tb["summary_pb2"].Summary.Value(tag=tag, image=image)],
                          global_step, walltime)  # fmt: skip

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log one run's hyperparameters (numbers, strings, bools, one-element Tensors) and its
        metrics for TensorBoard's HParams tab, in the subdirectory ``run_name`` (the time by
        default), as PyTorch does: a bool is logged as the number 0 or 1, as PyTorch logs it."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise DTypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        api = importlib.import_module("tensorboard.plugins.hparams.api_pb2")
        meta = importlib.import_module("tensorboard.plugins.hparams.metadata")
        plugin_pb2 = importlib.import_module("tensorboard.plugins.hparams.plugin_data_pb2")
        struct_pb2 = importlib.import_module("google.protobuf.struct_pb2")
        discrete = hparam_domain_discrete or {}
        start = plugin_pb2.SessionStartInfo()
        infos = []
        for name, value in hparam_dict.items():
            if value is None:
                continue
            if isinstance(value, str):
                field, kind = "string_value", "DATA_TYPE_STRING"
            elif isinstance(value, (numbers.Real, Tensor, np.ndarray)):  # bools too, as PyTorch
                field, kind = "number_value", "DATA_TYPE_FLOAT64"
                value = _scalar(value, "add_hparams")
            else:
                raise DTypeError(
                    f"add_hparams: {name!r} must be an int, float, str, bool or one-element "
                    f"Tensor, got {type(value).__name__}"
                )
            setattr(start.hparams[name], field, value)
            domain = None
            if name in discrete:
                domain = struct_pb2.ListValue(
                    values=[struct_pb2.Value(**{field: choice}) for choice in discrete[name]]
                )
            infos.append(
                api.HParamInfo(name=name, type=api.DataType.Value(kind), domain_discrete=domain)
            )
        experiment = api.Experiment(
            hparam_infos=infos,
            metric_infos=[
                api.MetricInfo(name=api.MetricName(tag=k)) for k in metric_dict
            ],  # fmt: skip
        )
        end = plugin_pb2.SessionEndInfo(status=api.Status.Value("STATUS_SUCCESS"))
        summary_pb2 = self._tb["summary_pb2"]
        log_dir = os.path.join(self.log_dir, run_name or str(time.time()))
        with SummaryWriter(log_dir) as run:
            for tag, part in (
                (meta.EXPERIMENT_TAG, {"experiment": experiment}),
                (meta.SESSION_START_INFO_TAG, {"session_start_info": start}),
                (meta.SESSION_END_INFO_TAG, {"session_end_info": end}),
            ):
                content = plugin_pb2.HParamsPluginData(version=meta.PLUGIN_DATA_VERSION, **part)
                plugin = summary_pb2.SummaryMetadata.PluginData(
                    plugin_name=meta.PLUGIN_NAME, content=content.SerializeToString()
                )
                value = summary_pb2.Summary.Value(
                    tag=tag, metadata=summary_pb2.SummaryMetadata(plugin_data=plugin)
                )
                run._add_summary([value], global_step)
            for tag, value in metric_dict.items():
                run.add_scalar(tag, value, global_step)

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Log the graph of ops ``model(input_to_model)`` records (a tuple is several
        inputs), read back from its outputs' ``grad_fn`` nodes: one node per op, named
        ``<op>_<n>``, one per parameter under its module path, one per input. Float inputs are
        detached copies that require grad, so ops on them alone are recorded too.
        ``verbose`` and ``use_strict_trace`` (TorchScript's) are accepted and unused."""
        if input_to_model is None:
            if not self._graph_warned:
                warnings.warn(
                    "add_graph: chainrule records a model's graph by running it; pass "
                    "input_to_model to log it (nothing was written)",
                    stacklevel=2,
                )
                self._graph_warned = True
            return
        inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
        inputs = tuple(
            x.detach().requires_grad_() if isinstance(x, Tensor) and x.is_floating_point() else x
            for x in inputs
        )
        with enable_grad():
            outputs = model(*inputs)
        graph = _graph_def(self._tb, model, inputs, outputs)
        event = self._tb["event_pb2"].Event(graph_def=graph.SerializeToString())
        self._add_event(event)

    def flush(self) -> None:
        """Write every pending event to disk."""
        for writer in (self._writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close the event files (closing twice is harmless; logging again opens
        new files)."""
        for writer in (self._writers or {}).values():
            writer.flush()
            writer.close()
        self._writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _flat_tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _flat_tensors(item)]
    return []


def _graph_def(tb: dict, model: Any, inputs: tuple, outputs: Any):
    """A GraphDef of the nodes behind ``outputs``: parameters, inputs, then ops in the order
    they ran (TensorBoard draws a node's inputs as edges into it)."""
    graph_pb2 = tb["graph_pb2"]
    node_def_pb2 = importlib.import_module("tensorboard.compat.proto.node_def_pb2")
    versions_pb2 = importlib.import_module("tensorboard.compat.proto.versions_pb2")
    prefix = type(model).__name__
    named = getattr(model, "named_parameters", None)
    names = {}
    if callable(named):
        names = {id(p): f"{prefix}/{name.replace('.', '/')}" for name, p in named()}
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            names[id(x)] = f"input/{i}"
    nodes, seen, order = {}, set(), []
    stack = [t.grad_fn for t in _flat_tensors(outputs) if t.grad_fn is not None]
    while stack:  # every node behind the outputs, once
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(edge[0] for edge in node.next_functions if isinstance(edge, tuple))
    order.sort(key=lambda node: node.sequence)
    op_names = {id(node): f"{prefix}/{node.name}_{k}" for k, node in enumerate(order)}

    def source(edge) -> str | None:
        if isinstance(edge, tuple):
            return op_names[id(edge[0])]
        if isinstance(edge, Tensor):
            if id(edge) not in names:
                names[id(edge)] = f"{prefix}/tensor_{len(names)}"
            if names[id(edge)] not in nodes:
                kind = "IO Node" if names[id(edge)].startswith("input/") else "Parameter"
                shape = "x".join(map(str, edge.shape))
                nodes[names[id(edge)]] = node_def_pb2.NodeDef(
                    name=names[id(edge)], op=kind, attr=_attrs(f"{edge.dtype} {shape}")
                )
            return names[id(edge)]
        return None

    for node in order:
        parents = [name for name in map(source, node.next_functions) if name is not None]
        meta = ", ".join(f"{dtype} {'x'.join(map(str, shape))}" for shape, dtype in node.out_meta)
        nodes[op_names[id(node)]] = node_def_pb2.NodeDef(
            name=op_names[id(node)], op=node.name, input=parents, attr=_attrs(meta)
        )
    for i, out in enumerate(_flat_tensors(outputs)):
        if out.grad_fn is not None:
            nodes[f"output/{i}"] = node_def_pb2.NodeDef(
                name=f"output/{i}", op="IO Node", input=[op_names[id(out.grad_fn)]]
            )
    return graph_pb2.GraphDef(
        node=list(nodes.values()), versions=versions_pb2.VersionDef(producer=22)
    )


def _attrs(text: str) -> dict:
    """A node's attributes: what TensorBoard shows of it (dtypes and shapes)."""
    attr_value_pb2 = importlib.import_module("tensorboard.compat.proto.attr_value_pb2")
    return {"attr": attr_value_pb2.AttrValue(s=text.encode("utf-8"))}
