"""The functions PyTorch also has at its top level (`chainrule.nn.functional.toplevel`,
re-exported as ``chainrule.X``), with those spellings' signatures: ``torch.dropout(input, p,
train)``, losses with an int reduction, ``torch.batch_norm``'s positional order..."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(0)


def test_torch_level_functions_match_pytorchs_signatures_and_values(torch):
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    t = np.where(RNG.normal(size=3) > 0, 1, -1)
    ones = np.ones((3, 4))
    cases = [
        ("celu", (x,), {"alpha": 0.5}), ("selu", (x,), {}), ("threshold", (x, 0.2, -1.0), {}),
        ("rrelu", (x, 0.1, 0.2), {}), ("hardshrink", (x, 0.3), {}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0), {"reduction": 2}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0, None, ones * 2.0), {}),
        ("cosine_embedding_loss", (x, y, t, 0.1, 0), {}),
        ("hinge_embedding_loss", (x, np.sign(y), 0.5, 2), {}),
        ("kl_div", (x, np.abs(y)), {"reduction": 0}), ("kl_div", (x, y, 2), {"log_target": True}),
        ("margin_ranking_loss", (x[0], y[0], np.sign(y[1]), 0.2, 2), {}),
        ("poisson_nll_loss", (x, np.abs(y), True, False, 1e-8, 1), {}),
        ("triplet_margin_loss", (x, y, ones, 1.0, 2.0, 1e-6, True, 0), {}),
        ("cosine_similarity", (x, y), {"dim": 0}), ("pairwise_distance", (x, y, 3.0), {}),
        ("pdist", (x,), {}), ("pdist", (x, 1.0), {}),
        # Left out, the reduction is 0 ('none') at top level, as PyTorch 2.13 does.
        ("kl_div", (x, np.abs(y)), {}), ("hinge_embedding_loss", (x, np.sign(y)), {}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0), {}),
        ("triplet_margin_loss", (x, y, ones), {}), ("cosine_embedding_loss", (x, y, t), {}),
        ("margin_ranking_loss", (x[0], y[0], np.sign(y[1])), {}),
    ]  # fmt: skip
    for name, args, kwargs in cases:
        ours_args = [cr.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        theirs_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out = getattr(cr, name)(*ours_args, **kwargs)
        expected = getattr(torch, name)(*theirs_args, **kwargs)
        np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), rtol=1e-10, err_msg=name)
    with pytest.raises(DomainError, match=r"kl_div: reduction must be an int here"):
        cr.kl_div(cr.tensor(x), cr.tensor(y), "mean")


def test_torch_level_in_place_forms_match_pytorch(torch):
    a = RNG.normal(size=5)
    for name, args in [("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.0, 7.0))]:
        ours, theirs = cr.tensor(a.copy()), torch.tensor(a.copy())
        getattr(cr, name)(ours, *args)
        getattr(torch, name)(theirs, *args)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12)


def test_torch_level_dropouts_take_input_p_train(torch):
    cr.manual_seed(0)
    x = cr.ones(20, 30)
    assert np.array_equal(cr.dropout(x, 0.5, False).detach().numpy(), x.detach().numpy())
    assert set(np.unique(cr.dropout(x, 0.5, True).detach().numpy())) == {0.0, 2.0}
    channels = cr.feature_dropout(x.reshape(20, 30, 1), 0.5, True).detach().numpy()
    assert np.all(channels.min(-1) == channels.max(-1))
    assert np.array_equal(cr.alpha_dropout(x, 0.5, False).detach().numpy(), x.detach().numpy())
    assert np.array_equal(
        cr.feature_alpha_dropout(x, 0.5, False).detach().numpy(), x.detach().numpy()
    )
    with pytest.raises(ShapeError, match="feature_dropout: feature dropout needs at least 2"):
        cr.feature_dropout(cr.ones(3), 0.5, True)


def test_torch_layer_functions_take_pytorchs_positional_order(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 4))
    w, b = rng.standard_normal(2), rng.standard_normal(2)
    for name, ours_args, their_args in [
        ("batch_norm", (True, 0.1, 1e-5, False), (True, 0.1, 1e-5, False)),
        ("instance_norm", (True, 0.1, 1e-5, False), (True, 0.1, 1e-5, False)),
    ]:  # fmt: skip
        ours = getattr(cr, name)(cr.tensor(x), cr.tensor(w), cr.tensor(b), None, None, *ours_args)
        theirs = getattr(torch, name)(torch.tensor(x), torch.tensor(w), torch.tensor(b), None,
                                      None, *their_args)  # fmt: skip
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), atol=1e-12)
    expected = torch.layer_norm(torch.tensor(x), [4]).numpy()
    np.testing.assert_allclose(
        cr.layer_norm(cr.tensor(x), [4]).detach().numpy(), expected, atol=1e-12
    )
    np.testing.assert_allclose(cr.group_norm(cr.tensor(x), 2, cr.tensor(w)).detach().numpy(),
                               torch.group_norm(torch.tensor(x), 2, torch.tensor(w)).numpy(),
                               atol=1e-12)  # fmt: skip
    table = rng.standard_normal((5, 3))
    index = np.array([[0, 4], [4, 2]])
    expected = torch.embedding(torch.tensor(table), torch.tensor(index)).numpy()
    np.testing.assert_array_equal(
        cr.embedding(cr.tensor(table), cr.tensor(index)).detach().numpy(), expected
    )
    for name in ("rms_norm", "bilinear", "pixel_shuffle", "pixel_unshuffle", "conv_transpose3d",
                 "max_pool3d", "channel_shuffle", "grid_sampler_3d"):  # fmt: skip
        assert callable(getattr(cr, name)), name
