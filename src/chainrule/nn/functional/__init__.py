"""`import chainrule.nn.functional as F`: the functional forms of layers and losses, with
PyTorch's names, re-exported from their families' modules (no logic here).

The families are named like their Modules in `chainrule.nn.modules`: `activation`,
`attention`, `distance`, `dropout_functions` and `linear_functions` (``F.dropout`` and
``F.linear`` are functions), `loss` (with `loss_ctc` and `loss_linear_cross_entropy`),
`normalization`, `pixelshuffle`, `sparse` (embedding, one_hot) and `upsampling`
(interpolate). Convolution, pooling, padding, fold/unfold and grid sampling are op rows,
re-exported from `chainrule.ops` (its modules conv, pooling, padding, grid). The
``torch.X`` spellings with signatures of their own (``torch.dropout(input, p, train)``) are in
`nn.functional.toplevel`.
"""

from ...ops import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    channel_shuffle,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool3d,
    pad,
)
from ...ops.conv import fold, unfold
from ...ops.grid import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)
from ...ops.pooling import (
    adaptive_avg_pool3d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .dropout_functions import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .linear_functions import bilinear, linear
from .loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .loss_ctc import ctc_loss
from .loss_linear_cross_entropy import linear_cross_entropy
from .normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    rms_norm,
)
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .sparse import embedding, embedding_bag, one_hot
from .upsampling import interpolate, upsample, upsample_bilinear, upsample_nearest

__all__ = [
    "adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "fold", "max_pool2d", "unfold",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "dropout", "elu", "embedding", "gelu", "huber_loss", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh",
    "bilinear", "cosine_embedding_loss", "cosine_similarity", "dropout1d", "dropout2d",
    "embedding_bag", "glu", "group_norm", "gumbel_softmax", "hardtanh", "instance_norm", "kl_div",
    "margin_ranking_loss", "mish", "normalize", "pad", "pairwise_distance", "prelu", "relu6",
    "rms_norm", "selu", "softsign", "triplet_margin_loss",
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "interpolate", "max_pool1d", "pixel_shuffle",
    "pixel_unshuffle",
    "alpha_dropout", "celu", "celu_", "dropout3d", "elu_", "feature_alpha_dropout", "hardshrink",
    "hardsigmoid", "hardswish", "hardtanh_", "leaky_relu_", "logsigmoid", "relu_", "rrelu",
    "rrelu_", "selu_", "softmin", "softshrink", "tanhshrink", "threshold", "threshold_",
    "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
    "soft_margin_loss", "triplet_margin_with_distance_loss", "pdist",
    "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "adaptive_avg_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "affine_grid", "avg_pool3d", "channel_shuffle",
    "conv_transpose3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "grid_sample",
    "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "multi_head_attention_forward", "upsample",
    "upsample_bilinear", "upsample_nearest",
    "linear_cross_entropy",
]  # fmt: skip
