"""Neural networks on Tensors: `Module` and `Parameter` (`nn.module`), the containers
(`nn.container`), initialisers (`nn.init`) and gradient clipping (`nn.utils`). Layers and losses
are in `nn.layers` (with `nn.activation`, `nn.conv`, `nn.pooling`, `nn.padding`,
`nn.sampling`, `nn.sparse`, `nn.distance`, `nn.normalization`, `nn.attention`) and their
functional forms in `nn.functional`."""

from . import functional, init, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (
    ChannelShuffle,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    Fold,
    Unfold,
)
from .distance import CosineSimilarity, PairwiseDistance
from .dropout_layers import AlphaDropout, Dropout3d, FeatureAlphaDropout
from .layers import (
    BCELoss,
    BCEWithLogitsLoss,
    Bilinear,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    Dropout,
    Dropout1d,
    Dropout2d,
    Flatten,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    Linear,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    TripletMarginLoss,
    Unflatten,
)
from .legacy import Container
from .linear_loss_layers import LinearCrossEntropyLoss
from .linear_losses import LinearCrossEntropyOptions
from .loss_layers import (
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import IncompatibleKeys, Module, Parameter, StateDictError
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    CrossMapLRN2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sampling import (
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .unpooling import (
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)

__all__ = [
    "Flatten", "Identity", "IncompatibleKeys", "Module", "ModuleDict", "ModuleList", "Parameter",
    "Sequential", "StateDictError", "init", "utils",
    "AdaptiveAvgPool2d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d",
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "CrossEntropyLoss", "Dropout",
    "ELU", "Embedding", "GELU", "HuberLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MultiheadAttention", "NLLLoss", "ReLU", "SiLU", "Sigmoid",
    "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "functional",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
    "Bilinear", "CosineEmbeddingLoss", "CosineSimilarity", "Dropout1d", "Dropout2d",
    "EmbeddingBag", "GLU", "GroupNorm", "Hardtanh", "InstanceNorm1d", "InstanceNorm2d",
    "KLDivLoss", "MarginRankingLoss", "Mish", "PReLU", "PairwiseDistance", "ParameterDict",
    "ParameterList", "RMSNorm", "ReLU6", "SELU", "Softsign", "TripletMarginLoss", "Unflatten",
    "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "Conv3d",
    "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d",
    "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "PixelShuffle",
    "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "ZeroPad1d",
    "ZeroPad2d",
    "AdaptiveLogSoftmaxWithLoss", "AlphaDropout", "CELU", "CTCLoss", "Dropout3d",
    "FeatureAlphaDropout", "GaussianNLLLoss", "Hardshrink", "Hardsigmoid", "Hardswish",
    "HingeEmbeddingLoss", "LogSigmoid", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "NLLLoss2d", "PoissonNLLLoss", "RReLU", "SoftMarginLoss", "Softmax2d",
    "Softmin", "Softshrink", "Tanhshrink", "Threshold", "TripletMarginWithDistanceLoss",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "BatchNorm3d", "ChannelShuffle",
    "CircularPad3d", "ConstantPad3d", "Container", "ConvTranspose3d", "CrossMapLRN2d", "Fold",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "InstanceNorm3d", "LPPool1d", "LPPool2d",
    "LPPool3d", "LocalResponseNorm", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "ReflectionPad3d", "ReplicationPad3d", "Unfold", "ZeroPad3d",
    "LinearCrossEntropyLoss", "LinearCrossEntropyOptions",
]  # fmt: skip
