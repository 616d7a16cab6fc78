"""chainrule.data: the synthetic data sets and digits (shapes, dtypes, balance, seeds, noise),
TensorDataset, random_split, default_collate and DataLoader."""

import math
import re

import numpy as np
import pytest

import chainrule
from chainrule.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    load_digits,
    make_blobs,
    make_moons,
    make_spirals,
    make_xor,
    random_split,
)
from chainrule.errors import DomainError, DTypeError, ShapeError

#: Each synthetic set at a small size with noise, as a function of the seed.
MAKERS = {
    "xor": lambda seed: make_xor(40, noise=0.1, seed=seed),
    "blobs": lambda seed: make_blobs(60, seed=seed),
    "moons": lambda seed: make_moons(50, noise=0.1, seed=seed),
    "spirals": lambda seed: make_spirals(60, noise=0.2, seed=seed),
}


def arrays(pair):
    X, y = pair
    return X.numpy(), y.numpy()


# Synthetic data sets.


@pytest.mark.parametrize("name", MAKERS)
def test_features_are_float32_rows_and_labels_int64(name):
    X, y = MAKERS[name](0)
    assert X.dtype == np.float32 and y.dtype == np.int64
    assert X.ndim == 2 and X.shape[1] == 2
    assert y.shape == (X.shape[0],)
    assert not X.requires_grad


@pytest.mark.parametrize("name", MAKERS)
def test_same_seed_same_data_other_seed_other_data(name):
    X0, y0 = arrays(MAKERS[name](0))
    X0_again, y0_again = arrays(MAKERS[name](0))
    X1, _ = arrays(MAKERS[name](1))
    np.testing.assert_array_equal(X0, X0_again)
    np.testing.assert_array_equal(y0, y0_again)
    assert not np.allclose(X0, X1)


@pytest.mark.parametrize(
    ("make", "counts"),
    [
        (lambda: make_xor(40), [20, 20]),
        (lambda: make_blobs(), [25, 25, 25, 25]),
        (lambda: make_blobs(10, centers=3), [4, 3, 3]),
        (lambda: make_moons(), [100, 100]),
        (lambda: make_moons(7), [3, 4]),
        (lambda: make_spirals(), [100, 100, 100]),
        (lambda: make_spirals(10, n_arms=4), [3, 3, 2, 2]),
    ],
    ids=["xor", "blobs", "blobs-uneven", "moons", "moons-odd", "spirals", "spirals-4-arms"],
)
def test_classes_are_balanced(make, counts):
    _, y = make()
    assert np.bincount(y.numpy()).tolist() == counts


@pytest.mark.parametrize("name", ["blobs", "moons", "spirals"])
def test_samples_are_shuffled_not_grouped_by_class(name):
    _, y = arrays(MAKERS[name](0))
    assert not np.all(np.diff(y) >= 0)


def test_xor_defaults_are_the_truth_table():
    X, y = make_xor()
    assert X.tolist() == [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    assert y.tolist() == [0, 1, 1, 0]


def test_xor_without_noise_repeats_the_corners_equally_often():
    X, y = arrays(make_xor(12, noise=0.0, seed=3))
    corners, counts = np.unique(X, axis=0, return_counts=True)
    assert corners.tolist() == [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    assert counts.tolist() == [3, 3, 3, 3]
    np.testing.assert_array_equal(y, np.logical_xor(X[:, 0], X[:, 1]))


def test_xor_noise_is_gaussian_with_that_spread():
    X, y = arrays(make_xor(4000, noise=0.1, seed=0))
    corner = np.round(X)
    np.testing.assert_array_equal(y, np.logical_xor(corner[:, 0], corner[:, 1]))
    assert abs((X - corner).std() - 0.1) < 0.005
    assert abs((X - corner).mean()) < 0.005


def test_blobs_defaults_are_four_classes_in_two_dimensions():
    X, y = make_blobs()
    assert X.shape == (100, 2)
    assert sorted(set(y.tolist())) == [0, 1, 2, 3]


def test_blobs_without_spread_sit_on_a_circle_of_radius_ten():
    X, y = arrays(make_blobs(40, centers=4, cluster_std=0.0))
    angles = 2 * np.pi * y / 4
    expected = np.stack([10 * np.cos(angles), 10 * np.sin(angles)], axis=1)
    np.testing.assert_allclose(X, expected, atol=1e-6)


def test_blobs_with_given_centers_and_spread():
    centers = [[0.0, 0.0, 0.0], [5.0, -5.0, 2.0]]
    X, y = arrays(make_blobs(4000, centers=centers, cluster_std=0.5, seed=1))
    assert X.shape == (4000, 3)
    for k, center in enumerate(centers):
        points = X[y == k]
        np.testing.assert_allclose(points.mean(axis=0), center, atol=0.05)
        np.testing.assert_allclose(points.std(axis=0), 0.5, atol=0.03)


def test_blobs_are_separable_by_the_nearest_center():
    X, y = arrays(make_blobs(200, centers=4, cluster_std=1.0, seed=2))
    angles = 2 * np.pi * np.arange(4) / 4
    centers = 10 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    nearest = np.argmin(((X[:, None, :] - centers) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(nearest, y)


def test_moons_without_noise_lie_on_two_half_circles():
    X, y = arrays(make_moons(100, noise=0.0))
    outer, inner = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(*outer.T), 1.0, atol=1e-6)
    assert outer[:, 1].min() >= -1e-6
    np.testing.assert_allclose(np.hypot(inner[:, 0] - 1, inner[:, 1] - 0.5), 1.0, atol=1e-6)
    assert inner[:, 1].max() <= 0.5 + 1e-6


def test_moons_noise_moves_points_off_the_circles():
    X, y = arrays(make_moons(2000, noise=0.1))
    outer, inner = X[y == 0], X[y == 1]
    radial = np.concatenate(
        [np.hypot(*outer.T) - 1, np.hypot(inner[:, 0] - 1, inner[:, 1] - 0.5) - 1]
    )
    assert 0.07 < radial.std() < 0.13


def test_spirals_without_noise_follow_their_arms():
    X, y = arrays(make_spirals(300, n_arms=3, noise=0.0))
    radius = np.hypot(X[:, 0], X[:, 1])
    assert radius.min() == 0.0
    assert radius.max() == pytest.approx(1.0)
    # x = r sin(theta), y = r cos(theta) with theta = 2 pi k / 3 + 4 r on arm k.
    theta = np.arctan2(X[:, 0], X[:, 1])
    offset = np.angle(np.exp(1j * (theta - 4 * radius - 2 * np.pi * y / 3)))
    away_from_centre = radius > 1e-3
    np.testing.assert_allclose(offset[away_from_centre], 0.0, atol=1e-4)


def test_spirals_noise_jitters_the_angle_only():
    X0, y0 = arrays(make_spirals(300, noise=0.0, seed=4))
    X1, y1 = arrays(make_spirals(300, noise=0.2, seed=4))
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_allclose(np.hypot(*X0.T), np.hypot(*X1.T), atol=1e-6)
    assert np.abs(X0 - X1).max() > 0.1


def test_load_digits_matches_scikit_learn_scaled_to_unit_range(sklearn_datasets):
    X, y = load_digits()
    assert X.shape == (1797, 1, 8, 8) and X.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert X.numpy().min() == 0.0 and X.numpy().max() == 1.0
    assert sorted(set(y.tolist())) == list(range(10))
    reference = sklearn_datasets.load_digits()
    np.testing.assert_array_equal(X.numpy().reshape(1797, 64) * 16, reference.data)
    np.testing.assert_array_equal(y.numpy(), reference.target)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: make_xor(0), DomainError, "make_xor: n must be an int >= 1, got 0"),
        (lambda: make_xor(4.0), DomainError, "make_xor: n must be an int >= 1, got 4.0"),
        (lambda: make_xor(8, noise=-1), DomainError, "make_xor: noise must be a finite number"),
        (lambda: make_xor(8, noise="a"), DomainError, "make_xor: noise must be a finite number"),
        (lambda: make_moons(noise=math.inf), DomainError, "make_moons: noise must be a finite"),
        (lambda: make_moons(1), DomainError, "make_moons: n_samples must be an int >= 2, got 1"),
        (lambda: make_spirals(n_arms=0), DomainError, "make_spirals: n_arms must be an int >= 1"),
        (lambda: make_spirals(noise=math.nan), DomainError, "make_spirals: noise must be"),
        (lambda: make_blobs(centers=0), DomainError, "make_blobs: centers must be an int >= 1"),
        (lambda: make_blobs(n_features=0), DomainError, "make_blobs: n_features must be an int"),
        (lambda: make_blobs(cluster_std=-1), DomainError, "make_blobs: cluster_std must be a"),
        (
            lambda: make_blobs(centers=[0.0, 5.0]),
            ShapeError,
            "make_blobs: centers must have shape (classes, features), got (2,)",
        ),
        (lambda: make_blobs(seed=-1), DomainError, "make_blobs: seed must be an int >= 0, got -1"),
        (lambda: make_xor(seed=1.5), DomainError, "make_xor: seed must be an int >= 0, got 1.5"),
    ],
    ids=[
        "xor-n-0",
        "xor-n-float",
        "xor-noise-negative",
        "xor-noise-str",
        "moons-noise-inf",
        "moons-n-1",
        "spirals-arms-0",
        "spirals-noise-nan",
        "blobs-centers-0",
        "blobs-features-0",
        "blobs-std-negative",
        "blobs-centers-1d",
        "blobs-seed-negative",
        "xor-seed-float",
    ],
)
def test_bad_arguments_to_the_makers(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


# TensorDataset and Subset.


def test_tensor_dataset_rows_and_length():
    X = chainrule.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    ds = TensorDataset(X, np.array([7, 8, 9, 10]))
    assert len(ds) == 4
    x, y = ds[2]
    assert x.tolist() == [6.0, 7.0, 8.0] and x.dtype == np.float32
    assert y.item() == 9 and y.shape == ()
    assert ds[-1][1].item() == 10
    xs, ys = ds[np.array([3, 0])]
    assert xs.tolist() == [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]] and ys.tolist() == [10, 7]


def test_tensor_dataset_samples_are_copies():
    X = chainrule.zeros(3, 2)
    ds = TensorDataset(X)
    (row,) = ds[0]
    row.data[:] = 5.0
    assert X.tolist() == [[0.0, 0.0]] * 3


def test_tensor_dataset_iterates_by_index_until_the_end():
    ds = TensorDataset(chainrule.arange(3), chainrule.arange(3) * 10)
    assert [(x.item(), y.item()) for x, y in ds] == [(0, 0), (1, 10), (2, 20)]
    with pytest.raises(IndexError):
        ds[3]


@pytest.mark.parametrize(
    ("tensors", "error", "message"),
    [
        (
            (chainrule.zeros(3, 2), chainrule.zeros(4)),
            ShapeError,
            "TensorDataset: tensors must share their first dimension, got (3, 2), (4,)",
        ),
        (
            (chainrule.tensor(1.0),),
            ShapeError,
            "TensorDataset: tensors must share their first dimension, got ()",
        ),
        ((), DomainError, "TensorDataset: needs at least one tensor"),
    ],
    ids=["length-mismatch", "zero-dim", "empty"],
)
def test_tensor_dataset_errors(tensors, error, message):
    with pytest.raises(error, match=re.escape(message)):
        TensorDataset(*tensors)


def test_subset_reads_the_dataset_at_its_indices():
    ds = TensorDataset(chainrule.arange(10) * 2)
    subset = Subset(ds, [7, 2, 5])
    assert len(subset) == 3
    assert [subset[i][0].item() for i in range(3)] == [14, 4, 10]
    assert subset[-1][0].item() == 10


# random_split.


def split_indices(parts) -> list[list[int]]:
    return [part.indices.tolist() for part in parts]


def test_random_split_by_counts_is_disjoint_and_covering():
    ds = TensorDataset(chainrule.arange(10))
    parts = random_split(ds, [3, 0, 7], seed=0)
    assert [len(part) for part in parts] == [3, 0, 7]
    indices = sum(split_indices(parts), [])
    assert sorted(indices) == list(range(10))
    assert indices != list(range(10))  # shuffled
    assert [parts[2][i][0].item() for i in range(7)] == split_indices(parts)[2]


@pytest.mark.parametrize(
    ("n", "fractions", "lengths"),
    [
        (10, [0.8, 0.2], [8, 2]),
        (10, [1 / 3, 1 / 3, 1 / 3], [4, 3, 3]),
        (11, [0.5, 0.25, 0.25], [6, 3, 2]),
        (7, [0.1, 0.1, 0.8], [1, 1, 5]),
        (5, [0.0, 1.0], [0, 5]),
    ],
)
def test_random_split_by_fractions_gives_leftovers_to_the_first_subsets(n, fractions, lengths):
    parts = random_split(TensorDataset(chainrule.arange(n)), fractions, seed=1)
    assert [len(part) for part in parts] == lengths
    assert sorted(sum(split_indices(parts), [])) == list(range(n))


@pytest.mark.filterwarnings("ignore:Length of split at index")  # PyTorch's, for empty parts
@pytest.mark.parametrize("n", [1, 7, 10, 33, 100])
@pytest.mark.parametrize("fractions", [[0.8, 0.2], [0.7, 0.2, 0.1], [0.25] * 4, [1 / 3] * 3])
def test_random_split_fraction_lengths_match_pytorch(torch, n, fractions):
    expected = [len(part) for part in torch.utils.data.random_split(range(n), fractions)]
    parts = random_split(TensorDataset(chainrule.arange(n)), fractions, seed=0)
    assert [len(part) for part in parts] == expected


def test_random_split_is_deterministic_under_a_seed():
    ds = TensorDataset(chainrule.arange(50))
    first = split_indices(random_split(ds, [0.5, 0.5], seed=3))
    again = split_indices(random_split(ds, [0.5, 0.5], seed=3))
    other = split_indices(random_split(ds, [0.5, 0.5], seed=4))
    assert first == again
    assert first != other


def test_random_split_without_seed_follows_manual_seed():
    ds = TensorDataset(chainrule.arange(50))
    chainrule.manual_seed(11)
    first = split_indices(random_split(ds, [25, 25]))
    chainrule.manual_seed(11)
    assert split_indices(random_split(ds, [25, 25])) == first


@pytest.mark.parametrize(
    ("lengths", "message"),
    [
        ([3, 3], "random_split: lengths [3, 3] sum to 6, but the dataset has 10 samples"),
        ([-1, 11], "random_split: lengths [-1, 11] must not be negative"),
        ([0.5, 0.6], "random_split: fractions [0.5, 0.6] sum to 1.1, not 1"),
        ([1.5, -0.5], "random_split: lengths [1.5, -0.5] must be non-negative counts or"),
        ([5, 0.5], "random_split: lengths [5, 0.5] must be non-negative counts or fractions"),
        (["a", "b"], "random_split: lengths ['a', 'b'] must be non-negative counts"),
        ([], "random_split: lengths is empty"),
    ],
    ids=["wrong-sum", "negative", "fractions-sum", "bad-fraction", "mixed", "strings", "empty"],
)
def test_random_split_errors(lengths, message):
    with pytest.raises(DomainError, match=re.escape(message)):
        random_split(TensorDataset(chainrule.arange(10)), lengths, seed=0)


def test_random_split_rejects_a_negative_seed():
    with pytest.raises(DomainError, match="random_split: seed must be an int >= 0, got -2"):
        random_split(TensorDataset(chainrule.arange(4)), [2, 2], seed=-2)


# default_collate.


def test_collate_stacks_tensors_and_numbers_field_by_field():
    batch = default_collate([(chainrule.zeros(2), 1, 0.5), (chainrule.ones(2), 0, 1.5)])
    assert isinstance(batch, list) and len(batch) == 3
    assert batch[0].tolist() == [[0.0, 0.0], [1.0, 1.0]] and batch[0].dtype == np.float32
    assert batch[1].tolist() == [1, 0] and batch[1].dtype == np.int64
    assert batch[2].tolist() == [0.5, 1.5] and batch[2].dtype == np.float64


def test_collate_dicts_and_strings():
    batch = default_collate([{"x": np.ones(2), "tag": "a"}, {"x": np.zeros(2), "tag": "b"}])
    assert batch["x"].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert batch["tag"] == ["a", "b"]
    assert default_collate([np.str_("a"), np.str_("b")]) == ["a", "b"]


@pytest.mark.parametrize(
    ("samples", "error", "message"),
    [
        (
            [np.ones(2), np.ones(3)],
            ShapeError,
            "default_collate: samples have different shapes ['(2,)', '(3,)']; pad them",
        ),
        ([(1, 2), (1,)], ShapeError, "default_collate: samples have different numbers of fields"),
        ([object()], DTypeError, "default_collate: cannot batch samples of type object"),
        ([], DomainError, "default_collate: got no samples"),
    ],
    ids=["shapes", "fields", "object", "empty"],
)
def test_collate_errors(samples, error, message):
    with pytest.raises(error, match=re.escape(message)):
        default_collate(samples)


# DataLoader.


def numbered(n: int = 10) -> TensorDataset:
    """Row i of the features is [i, 100 + i] (float32); label i (int64)."""
    i = np.arange(n)
    return TensorDataset(np.stack([i, 100 + i], axis=1).astype(np.float32), i)


class PlainTensorDataset(TensorDataset):
    """The same samples, but batched through __getitem__ and default_collate."""

    def __getitem__(self, index):
        return super().__getitem__(index)


def labels(loader) -> list[list[int]]:
    return [batch[1].tolist() for batch in loader]


@pytest.mark.parametrize("dataset_type", [TensorDataset, PlainTensorDataset])
def test_batches_have_the_right_shapes_dtypes_and_order(dataset_type):
    loader = DataLoader(dataset_type(*numbered(10).tensors), batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [X.shape for X, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    assert all(X.dtype == np.float32 and y.dtype == np.int64 for X, y in batches)
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[2][0].tolist() == [[8.0, 108.0], [9.0, 109.0]]


@pytest.mark.parametrize(
    ("n", "batch_size", "sizes"),
    [(10, 4, [4, 4]), (10, 5, [5, 5]), (10, 11, []), (10, 1, [1] * 10)],
)
def test_drop_last_skips_the_short_final_batch(n, batch_size, sizes):
    loader = DataLoader(numbered(n), batch_size=batch_size, drop_last=True)
    assert len(loader) == len(sizes)
    assert [len(y) for y in labels(loader)] == sizes


def test_shuffle_visits_every_sample_once_per_epoch_in_new_orders():
    loader = DataLoader(numbered(20), batch_size=6, shuffle=True, seed=0)
    epochs = []
    for _ in range(3):
        batches = list(loader)
        for X, y in batches:  # features stay with their labels
            np.testing.assert_array_equal(X.numpy()[:, 0], y.numpy())
        epochs.append(sum(labels(batches), []))
    assert all(sorted(order) == list(range(20)) for order in epochs)
    assert epochs[0] != list(range(20))
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]


def test_shuffle_is_reproducible_with_a_seed_and_differs_across_seeds():
    def orders(seed):
        loader = DataLoader(numbered(20), batch_size=5, shuffle=True, seed=seed)
        return [labels(loader) for _ in range(2)]

    assert orders(7) == orders(7)
    assert orders(7) != orders(8)


def test_shuffle_without_seed_follows_manual_seed():
    chainrule.manual_seed(5)
    first = labels(DataLoader(numbered(20), batch_size=20, shuffle=True))
    chainrule.manual_seed(5)
    assert labels(DataLoader(numbered(20), batch_size=20, shuffle=True)) == first


def test_fast_and_plain_paths_give_the_same_shuffled_batches():
    fast = DataLoader(numbered(13), batch_size=4, shuffle=True, seed=2)
    plain = DataLoader(
        PlainTensorDataset(*numbered(13).tensors), batch_size=4, shuffle=True, seed=2
    )
    for (X_fast, y_fast), (X_plain, y_plain) in zip(fast, plain, strict=True):
        np.testing.assert_array_equal(X_fast.numpy(), X_plain.numpy())
        np.testing.assert_array_equal(y_fast.numpy(), y_plain.numpy())


def test_loader_over_a_split_yields_exactly_that_subset():
    train, test = random_split(numbered(30), [0.7, 0.3], seed=0)
    inner = Subset(train, [4, 0, 2])
    for part in (train, test, inner):
        seen = sum(labels(DataLoader(part, batch_size=4, shuffle=True, seed=1)), [])
        expected = [part[i][1].item() for i in range(len(part))]
        assert sorted(seen) == sorted(expected)


def test_loader_over_a_list_of_tuples_collates_each_field():
    samples = [(np.full(2, k, np.float32), k, f"s{k}") for k in range(5)]
    batches = list(DataLoader(samples, batch_size=2))
    assert len(batches) == 3
    X, y, tags = batches[1]
    assert X.tolist() == [[2.0, 2.0], [3.0, 3.0]] and X.dtype == np.float32
    assert y.tolist() == [2, 3]
    assert tags == ["s2", "s3"]


def test_loader_over_a_custom_dataset_and_collate_fn():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, index):
            return {"x": float(index), "y": index * index}

    loader = DataLoader(Squares(), batch_size=3, collate_fn=lambda samples: samples)
    assert [[s["y"] for s in batch] for batch in loader] == [[0, 1, 4], [9, 16]]
    batch = next(iter(DataLoader(Squares(), batch_size=5)))
    assert batch["y"].tolist() == [0, 1, 4, 9, 16]


def test_loader_over_an_empty_dataset_yields_nothing():
    loader = DataLoader(TensorDataset(np.zeros((0, 2))), batch_size=3, shuffle=True, seed=0)
    assert len(loader) == 0 and list(loader) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"batch_size": 0}, DomainError, "DataLoader: batch_size must be a positive int, got 0"),
        ({"batch_size": 1.5}, DomainError, "DataLoader: batch_size must be a positive int"),
        ({"batch_size": True}, DomainError, "DataLoader: batch_size must be a positive int"),
        ({"shuffle": "yes"}, DTypeError, "DataLoader: shuffle must be a bool, got 'yes'"),
        ({"drop_last": 1}, DTypeError, "DataLoader: drop_last must be a bool, got 1"),
        ({"seed": -1}, DomainError, "DataLoader: seed must be an int >= 0, got -1"),
        ({"dataset": 5}, DTypeError, "DataLoader: the dataset must have __len__ and __getitem__"),
    ],
    ids=["batch-0", "batch-float", "batch-bool", "shuffle-str", "drop-last-int", "seed", "data"],
)
def test_loader_errors(kwargs, error, message):
    arguments = {"dataset": numbered(4), **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        DataLoader(**arguments)
