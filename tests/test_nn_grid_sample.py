"""grid_sample (2-D and 3-D, every mode) against PyTorch with the grid's gradients,
grid_sampler's numbered modes, and the errors."""

import numpy as np
import pytest
from nn_checks import check_first_output as _check

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.errors import DomainError, ShapeError


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("spatial", [2, 3])
def test_grid_sample_matches_pytorch_with_grid_gradients(torch, mode, padding_mode, align_corners,
                                                         spatial):  # fmt: skip
    rng = np.random.default_rng(spatial)
    image = rng.standard_normal((2, 3, 4, 5) if spatial == 2 else (2, 2, 3, 4, 5))
    grid = rng.uniform(-1.6, 1.6, (2, 3, 4, 2) if spatial == 2 else (2, 2, 3, 2, 3))
    args = (mode, padding_mode, align_corners)
    if mode == "nearest":  # PyTorch gives the grid a zero gradient; chainrule none
        theirs = torch.nn.functional.grid_sample
        _check(torch, lambda x: F.grid_sample(x, cr.tensor(grid), *args),
               lambda x: theirs(x, torch.tensor(grid), *args), [image])  # fmt: skip
    else:
        theirs = torch.nn.functional.grid_sample
        _check(torch, lambda x, g: F.grid_sample(x, g, *args),
               lambda x, g: theirs(x, g, *args), [image, grid])  # fmt: skip


def test_grid_sampler_takes_the_modes_as_numbers(torch):
    rng = np.random.default_rng(0)
    image, grid = rng.standard_normal((1, 2, 3, 3)), rng.uniform(-1, 1, (1, 2, 2, 2))
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == torch.nn.functional.GRID_SAMPLE_PADDING_MODES
    ours = cr.grid_sampler_2d(cr.tensor(image), cr.tensor(grid), 0, 2, True)
    theirs = torch.grid_sampler_2d(torch.tensor(image), torch.tensor(grid), 0, 2, True)
    np.testing.assert_allclose(ours.data, theirs.numpy(), atol=1e-12)


def test_grid_sample_errors_name_the_problem():
    image = cr.zeros(1, 1, 3, 3)
    with pytest.raises(ShapeError, match=r"grid_sample: a 4-D input .* needs a grid of shape"):
        F.grid_sample(image, cr.zeros(1, 2, 2, 3))
    with pytest.raises(DomainError, match="bicubic is not supported"):
        F.grid_sample(image, cr.zeros(1, 2, 2, 2), mode="bicubic")
    with pytest.raises(DomainError, match="grid_sampler: interpolation_mode must be in"):
        cr.grid_sampler(image, cr.zeros(1, 2, 2, 2), 5, 0, False)
    with pytest.raises(ShapeError, match=r"affine_grid: theta must have shape \(1, 2, 3\)"):
        F.affine_grid(cr.zeros(1, 3, 4), (1, 1, 2, 2))
