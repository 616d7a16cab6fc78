"""Cases for chainrule/ops/reduce.py: each reduction over every dim, one dim, a negative dim,
a tuple of dims, with and without keepdim.

Ties are kept out with `distinct()` where an op is not differentiable at them (max, std,
the inf norms); tests/test_reduce.py checks the tie rules against PyTorch.
"""

import math

from cases import Case
from strategies import away_from_zero, distinct, one, reals

REALS = reals()


def over_dims(name, call, domain=REALS, min_side=1, torch_all=None, **options):
    """Variants of a reduction taking an int, a tuple or None: call(x, *dim, **keepdim).

    With ``min_side`` > 1 every input has a dimension (a 0-d tensor reduces one element).
    """
    any_dims = one(int(min_side > 1), min_side=min_side)
    vectors, matrices = one(1, min_side=min_side), one(2, min_side=min_side)
    return {
        name: Case(lambda x: call(x), any_dims, (domain,), torch_all, **options),
        f"{name}[dim]": Case(lambda x: call(x, 0), vectors, (domain,), **options),
        f"{name}[neg_keepdim]": Case(lambda x: call(x, -1, keepdim=True), vectors, (domain,),
                                     **options),
        f"{name}[tuple]": Case(lambda x: call(x, (0, -1)), matrices, (domain,), **options),
        f"{name}[tuple_keepdim]": Case(lambda x: call(x, (1, 0), keepdim=True), matrices,
                                       (domain,), **options),
    }  # fmt: skip


def along_one_dim(name, call, domain=REALS, **options):
    """Variants of an op taking one int dim: 0, -1 kept, 1 kept, and a 0-d input."""
    return {
        f"{name}[dim]": Case(lambda x: call(x, 0), one(1), (domain,), **options),
        f"{name}[neg_keepdim]": Case(lambda x: call(x, -1, keepdim=True), one(1), (domain,),
                                     **options),
        f"{name}[keepdim]": Case(lambda x: call(x, 1, keepdim=True), one(2), (domain,),
                                 **options),
        f"{name}[scalar]": Case(lambda x: call(x, 0), one(0, 0), (domain,), **options),
    }  # fmt: skip


def normaliser(name, call):
    """Variants of softmax-like ops: the last dim, the first dim, a 0-d input."""
    return {
        name: Case(lambda x: call(x, -1), one(1)),
        f"{name}[dim0]": Case(lambda x: call(x, 0), one(2)),
        f"{name}[scalar]": Case(lambda x: call(x, 0), one(0, 0)),
    }


inf = math.inf


def _class_loss(name, **options):
    """F.<name> on logits x of shape (N, C, ...) against targets 0, 1, 2... (mod C)."""

    def call(lib, x):
        classes = x.shape[1]
        target = lib.arange(x.shape[0] * math.prod(x.shape[2:])).reshape(x.shape[:1] + x.shape[2:])
        return getattr(lib.nn.functional, name)(x, target % classes, **options)

    return call


def _standardize(x, dims):
    from chainrule.ops.normalizers import standardize_row

    return standardize_row(x, dims=dims, eps=1e-5)


def _torch_layer_norm(x, shape):
    import torch

    return torch.nn.functional.layer_norm(x, shape, eps=1e-5)


CASES = {
    **over_dims("sum", lambda x, *a, **k: x.sum(*a, **k)),
    **over_dims("mean", lambda x, *a, **k: x.mean(*a, **k)),
    # Every reduced side >= 2, so N - correction > 0.
    **over_dims("var", lambda x, *a, **k: x.var(*a, **k), min_side=2),
    "var[population]": Case(lambda x: x.var(-1, correction=0), one(1)),
    # std has a kink where a slice is constant: distinct elements keep away from it.
    **over_dims("std", lambda x, *a, **k: x.std(*a, **k), distinct(), min_side=2),
    "std[population]": Case(lambda x: x.std((0, -1), correction=0), one(2), (distinct(),)),
    "prod": Case(lambda x: x.prod(), domain=(reals(-1.5, 1.5),)),
    **along_one_dim("prod", lambda x, *a, **k: x.prod(*a, **k), reals(-1.5, 1.5)),
    **over_dims("amax", lambda x, *a, **k: x.amax(*a, **k), distinct()),
    **over_dims("amin", lambda x, *a, **k: x.amin(*a, **k), distinct()),
    # max() and min() without dim are amax and amin over everything.
    "amax[max]": Case(lambda x: x.max(), domain=(distinct(),)),
    "amin[min]": Case(lambda x: x.min(), domain=(distinct(),)),
    "max": Case(lambda x: x.max(1), one(2), (distinct(),)),
    **along_one_dim("max", lambda x, *a, **k: x.max(*a, **k), distinct()),
    "min": Case(lambda x: x.min(1), one(2), (distinct(),)),
    **along_one_dim("min", lambda x, *a, **k: x.min(*a, **k), distinct()),
    "argmax": Case(lambda x: x.argmax(), domain=(distinct(),)),
    **along_one_dim("argmax", lambda x, *a, **k: x.argmax(*a, **k), distinct()),
    "argmin": Case(lambda x: x.argmin(), domain=(distinct(),)),
    **along_one_dim("argmin", lambda x, *a, **k: x.argmin(*a, **k), distinct()),
    # PyTorch's logsumexp needs a dim: the flattened tensor stands in for None.
    **over_dims("logsumexp", lambda x, *a, **k: x.logsumexp(*a, **k),
                torch_all=lambda x: x.reshape(-1).logsumexp(0)),
    **over_dims("norm", lambda x, *a, **k: x.norm(2, *a, **k), away_from_zero()),
    "norm[fro]": Case(lambda x: x.norm("fro", (0, -1)), one(2), (away_from_zero(),)),
    "norm[1]": Case(lambda x: x.norm(1, -1), one(1), (away_from_zero(),)),
    "norm[1_all]": Case(lambda x: x.norm(1), domain=(away_from_zero(),)),
    "norm[3]": Case(lambda x: x.norm(3, (0, -1), keepdim=True), one(2), (away_from_zero(),)),
    "norm[0.5]": Case(lambda x: x.norm(0.5, 0), one(1), (away_from_zero(),)),
    # Distinct |x|: the largest (smallest) element is unique.
    "norm[inf]": Case(lambda x: x.norm(inf, -1), one(1), (distinct(0.2, 3.0),)),
    "norm[inf_all]": Case(lambda x: x.norm(inf), domain=(distinct(-3.0, -0.2),)),
    "norm[-inf]": Case(lambda x: x.norm(-inf, (0, -1), keepdim=True), one(2),
                       (distinct(-3.0, -0.2),)),
    # Layer norm's core; PyTorch spells it layer_norm without a weight and a bias.
    "standardize": Case(lambda x: _standardize(x, (-1,)), one(1), (distinct(-3.0, 3.0),),
                        torch_fn=lambda x: _torch_layer_norm(x, x.shape[-1:])),
    "standardize[two_dims]": Case(lambda x: _standardize(x, (-2, -1)), one(2),
                                  (distinct(-3.0, 3.0),),
                                  torch_fn=lambda x: _torch_layer_norm(x, x.shape[-2:])),
    **normaliser("softmax", lambda x, dim: x.softmax(dim)),
    **normaliser("log_softmax", lambda x, dim: x.log_softmax(dim)),
    # The losses over classes (rows beside log_softmax), from logits or log-probabilities.
    "cross_entropy": Case(_class_loss("cross_entropy"), one(2), needs_lib=True),
    "cross_entropy[kdim_ignored_none]": Case(
        _class_loss("cross_entropy", ignore_index=1, reduction="none"), one(3), needs_lib=True),
    "nll_loss": Case(_class_loss("nll_loss", reduction="sum"), one(2), needs_lib=True),
    "nll_loss[kdim_ignored]": Case(_class_loss("nll_loss", ignore_index=1), one(3),
                                   needs_lib=True),
    "all": Case(lambda x: (x > 0).all()),
    "all[dim]": Case(lambda x: (x > 0).all(-1), one(1)),
    "all[tuple_keepdim]": Case(lambda x: (x > 0).all((0, -1), keepdim=True), one(2)),
    "any": Case(lambda x: (x > 0).any()),
    "any[dim]": Case(lambda x: (x > 0).any(0), one(1)),
    "any[tuple_keepdim]": Case(lambda x: (x > 0).any((-1, 0), keepdim=True), one(2)),
}  # fmt: skip
