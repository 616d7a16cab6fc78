"""Data for training, as ``torch.utils.data`` has it: data sets (`data.dataset`), samplers
(`data.sampler`) and the `DataLoader` (`data.dataloader`), plus small data sets for demos and
tests (`data.toy_datasets`: XOR, blobs, moons, spirals, digits)."""

from .dataloader import DataLoader, WorkerInfo, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .toy_datasets import load_digits, make_blobs, make_moons, make_spirals, make_xor

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
    "get_worker_info", "load_digits", "make_blobs", "make_moons", "make_spirals", "make_xor",
    "random_split", "DistributedSampler", "StackDataset",
]  # fmt: skip
