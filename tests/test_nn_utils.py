"""chainrule.nn.utils against torch.nn.utils: total norms and clipping, weight_norm and
spectral_norm hooks (values, gradients, buffers, removal), BatchNorm fusion, skip_init and the
memory-format no-ops."""

import warnings

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, GraphError, ShapeError

RNG = np.random.default_rng(7)


def _same_params(ours, theirs):
    """Copy the torch module's parameters and buffers into ours (float64)."""
    ours.double()
    for name, value in theirs.state_dict().items():
        target = dict(ours.named_parameters()) | dict(ours.named_buffers())
        target[name].data[...] = value.detach().numpy()
    return ours


def _grads(tensors, names):
    return {n: t.grad for n, t in zip(names, tensors)}


def test_get_total_norm_and_clip_grads_with_norm_match_pytorch(torch):
    grads = [RNG.normal(size=(3, 2)), RNG.normal(size=4)]
    for norm_type in (2.0, 1.0, 3.5, float("inf")):
        mine = nn.utils.get_total_norm([chainrule.tensor(g) for g in grads], norm_type)
        theirs = torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], norm_type)
        assert mine.item() == pytest.approx(theirs.item(), rel=1e-12)
    ours = [nn.Parameter(chainrule.tensor(g)) for g in grads]
    refs = [torch.tensor(g, requires_grad=True) for g in grads]
    for p, q, g in zip(ours, refs, grads):
        p.grad, q.grad = chainrule.tensor(g * 3), torch.tensor(g * 3)
    nn.utils.clip_grads_with_norm_(ours, 0.5, chainrule.tensor(7.0))
    torch.nn.utils.clip_grads_with_norm_(refs, 0.5, torch.tensor(7.0))
    for p, q in zip(ours, refs):
        np.testing.assert_allclose(p.grad.data, q.grad.numpy(), rtol=1e-12)
    assert nn.utils.get_total_norm([]).item() == 0.0


def test_clip_grad_norm_is_the_deprecated_alias():
    w = nn.Parameter(chainrule.tensor([3.0, 4.0]))
    w.grad = chainrule.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm is deprecated"):
        total = nn.utils.clip_grad_norm([w], 1.0, foreach=None)
    assert total.item() == 5.0
    np.testing.assert_allclose(w.grad.data, [0.6, 0.8], rtol=1e-5)


def test_get_total_norm_errors():
    with pytest.raises(DomainError, match=r"get_total_norm: the total norm of order 2\.0 .* inf"):
        nn.utils.get_total_norm([chainrule.tensor([np.inf])], error_if_nonfinite=True)
    with pytest.raises(TypeError, match="get_total_norm: tensor 0 is a list, not a Tensor"):
        nn.utils.get_total_norm([[1.0]])


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_matches_pytorch_values_and_gradients(torch, dim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    ours = nn.utils.weight_norm(_same_params(nn.Linear(4, 3), torch.nn.Linear(4, 3)), dim=dim)
    for name in ("weight_g", "weight_v", "bias"):
        getattr(ours, name).data[...] = getattr(theirs, name).detach().numpy()
    assert ours.weight_g.shape == tuple(theirs.weight_g.shape)
    x = RNG.normal(size=(5, 4))
    for _ in range(2):  # the hook recomputes the weight each forward
        (ours(chainrule.tensor(x)) ** 2).sum().backward()
        (theirs(torch.tensor(x)) ** 2).sum().backward()
        np.testing.assert_allclose(ours.weight.data, theirs.weight.detach().numpy(), rtol=1e-12)
        for name in ("weight_g", "weight_v"):
            np.testing.assert_allclose(getattr(ours, name).grad.data,
                                       getattr(theirs, name).grad.numpy(), rtol=1e-10)  # fmt: skip
        with chainrule.no_grad(), torch.no_grad():
            ours.weight_g.data *= 1.5
            theirs.weight_g *= 1.5
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert sorted(dict(ours.named_parameters())) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.data, theirs.weight.detach().numpy(), rtol=1e-12)


def test_weight_norm_keeps_the_weight_and_lists_g_and_v_in_the_state_dict():
    layer = nn.Conv2d(2, 3, 3)
    before = layer.weight.detach().numpy().copy()
    nn.utils.weight_norm(layer)
    assert layer.weight_g.shape == (3, 1, 1, 1)
    np.testing.assert_allclose(layer.weight.data, before, rtol=1e-6)
    assert list(layer.state_dict()) == ["bias", "weight_g", "weight_v"]


@pytest.mark.parametrize(
    ("make_pair", "iterations"),
    [(lambda m: m.Linear(4, 3), 1), (lambda m: m.Conv2d(2, 3, 2), 3),
     (lambda m: m.ConvTranspose2d(2, 3, 2), 2)],
)  # fmt: skip
def test_spectral_norm_matches_pytorch_given_the_same_vectors(torch, make_pair, iterations):
    theirs = torch.nn.utils.spectral_norm(
        make_pair(torch.nn).double(), n_power_iterations=iterations
    )
    ours = make_pair(nn)
    ours.double()
    ours.weight.data[...] = theirs.weight_orig.detach().numpy()
    ours.bias.data[...] = theirs.bias.detach().numpy()
    ours = nn.utils.spectral_norm(ours, n_power_iterations=iterations)
    assert ours.weight_u.shape == tuple(theirs.weight_u.shape)
    ours.weight_u.data[...] = theirs.weight_u.numpy()
    ours.weight_v.data[...] = theirs.weight_v.numpy()
    shape = (2, 4) if isinstance(ours, nn.Linear) else (2, 2, 4, 4)
    x = RNG.normal(size=shape)
    for train in (True, True, False):
        ours.train(train)
        theirs.train(train)
        ours.weight_orig.grad, theirs.weight_orig.grad = None, None
        (ours(chainrule.tensor(x)) ** 2).sum().backward()
        (theirs(torch.tensor(x)) ** 2).sum().backward()
        for name in ("weight", "weight_u", "weight_v"):
            expected = getattr(theirs, name).detach().numpy()
            np.testing.assert_allclose(getattr(ours, name).data, expected, rtol=1e-10)
        np.testing.assert_allclose(ours.weight_orig.grad.data, theirs.weight_orig.grad.numpy(),
                                   rtol=1e-9, atol=1e-12)  # fmt: skip
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    np.testing.assert_allclose(ours.weight.data, theirs.weight.detach().numpy(), rtol=1e-12)
    assert sorted(dict(ours.named_parameters())) == ["bias", "weight"]


def test_spectral_norm_brings_the_largest_singular_value_to_one():
    layer = nn.utils.spectral_norm(nn.Linear(6, 4), n_power_iterations=50)
    layer(chainrule.zeros(1, 6))
    assert np.linalg.svd(layer.weight.data, compute_uv=False)[0] == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda m: nn.utils.weight_norm(nn.utils.weight_norm(m)), GraphError,
         "already has a weight_norm hook"),
        (lambda m: nn.utils.weight_norm(m, name="nope"), DomainError, "has no parameter 'nope'"),
        (lambda m: nn.utils.remove_weight_norm(m), DomainError, "no weight_norm of 'weight'"),
        (lambda m: nn.utils.spectral_norm(nn.utils.spectral_norm(m)), GraphError,
         "already has a spectral_norm hook"),
        (lambda m: nn.utils.spectral_norm(m, n_power_iterations=0), DomainError,
         "n_power_iterations must be positive"),
        (lambda m: nn.utils.remove_spectral_norm(m), DomainError, "no spectral_norm of"),
        (lambda m: nn.utils.fuse_linear_bn_eval(m, nn.BatchNorm1d(2).eval()), DomainError,
         "evaluation mode"),
        (lambda m: nn.utils.fuse_linear_bn_eval(m.eval(), nn.BatchNorm1d(5).eval()), ShapeError,
         "has 2 outputs but the BatchNorm 5 features"),
        (lambda m: nn.utils.skip_init(len), DomainError, "expected a Module class"),
    ],
)  # fmt: skip
def test_errors_name_the_function(call, error, message):
    with pytest.raises(error, match=message):
        call(nn.Linear(3, 2))


def _trained_bn(torch, module, bn_torch, features):
    """A BatchNorm with nontrivial running statistics and affine parameters, in both libraries."""
    with torch.no_grad():
        bn_torch.running_mean.copy_(torch.tensor(RNG.normal(size=features)))
        bn_torch.running_var.copy_(torch.tensor(RNG.uniform(0.5, 2, features)))
        bn_torch.weight.copy_(torch.tensor(RNG.normal(size=features)))
        bn_torch.bias.copy_(torch.tensor(RNG.normal(size=features)))
    return _same_params(module, bn_torch).eval(), bn_torch.eval()


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval_matches_pytorch(torch, transpose):
    pair = (nn.ConvTranspose2d, torch.nn.ConvTranspose2d) if transpose else (
        nn.Conv2d, torch.nn.Conv2d)  # fmt: skip
    conv_t = pair[1](2, 3, 2).double().eval()
    conv = _same_params(pair[0](2, 3, 2), conv_t).eval()
    bn, bn_t = _trained_bn(torch, nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).double(), 3)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    fused_t = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t, transpose=transpose)
    np.testing.assert_allclose(fused.weight.data, fused_t.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(fused.bias.data, fused_t.bias.detach().numpy(), rtol=1e-12)
    x = chainrule.tensor(RNG.normal(size=(1, 2, 4, 4)))
    np.testing.assert_allclose(fused(x).data, bn(conv(x)).data, atol=1e-12)
    assert fused is not conv and isinstance(fused.weight, nn.Parameter)


def test_fuse_linear_bn_eval_and_weights_match_pytorch(torch):
    linear_t = torch.nn.Linear(3, 4).double().eval()
    linear = _same_params(nn.Linear(3, 4), linear_t).eval()
    bn, bn_t = _trained_bn(torch, nn.BatchNorm1d(4), torch.nn.BatchNorm1d(4).double(), 4)
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    fused_t = torch.nn.utils.fuse_linear_bn_eval(linear_t, bn_t)
    np.testing.assert_allclose(fused.weight.data, fused_t.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(fused.bias.data, fused_t.bias.detach().numpy(), rtol=1e-12)
    w, b = nn.utils.fuse_linear_bn_weights(linear.weight, None, bn.running_mean,
                                           bn.running_var, 1e-5, bn.weight, bn.bias)  # fmt: skip
    w_t, b_t = torch.nn.utils.fuse_linear_bn_weights(linear_t.weight, None, bn_t.running_mean,
                                                     bn_t.running_var, 1e-5, bn_t.weight,
                                                     bn_t.bias)  # fmt: skip
    np.testing.assert_allclose(b.data, b_t.detach().numpy(), rtol=1e-12)
    assert w.requires_grad and b.requires_grad == b_t.requires_grad


def test_skip_init_and_memory_formats():
    layer = nn.utils.skip_init(nn.Linear, in_features=3, out_features=2, device="cpu")
    assert isinstance(layer, nn.Linear) and layer.weight.shape == (2, 3)
    conv = nn.Conv2d(1, 1, 1)
    assert nn.utils.convert_conv2d_weight_memory_format(conv, "channels_last") is conv
    assert nn.utils.convert_conv3d_weight_memory_format(conv, "channels_last_3d") is conv


def test_parameters_to_vector_round_trip_matches_torch(torch):
    theirs = torch.nn.Linear(3, 2).double()
    ours = nn.Linear(3, 2).double()
    ours.load_state_dict(theirs.state_dict())
    vector = nn.utils.parameters_to_vector(ours.parameters())
    expected = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(vector.data, expected.detach().numpy())
    nn.utils.vector_to_parameters(vector * 2, ours.parameters())
    np.testing.assert_array_equal(ours.bias.data, 2 * theirs.bias.detach().numpy())
    with pytest.raises(DomainError, match="vec has 3 elements but the parameters hold 8"):
        nn.utils.vector_to_parameters(chainrule.zeros(3), ours.parameters())
