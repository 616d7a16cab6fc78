"""Neural networks on Tensors: `Module` and `Parameter` (`nn.module`), the containers
(`nn.container`), initialisers (`nn.init`) and gradient clipping (`nn.utils`). Layers and losses
are in `nn.layers` (with `nn.activation`, `nn.conv`, `nn.pooling`, `nn.padding`,
`nn.sampling`, `nn.sparse`, `nn.distance`, `nn.normalization`, `nn.attention`) and their
functional forms in `nn.functional`."""

from . import functional, init, utils
from .activation import (
    ELU,
    GELU,
    GLU,
    SELU,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Softsign,
    Tanh,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
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
from .module import IncompatibleKeys, Module, Parameter, StateDictError
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    LayerNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
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
]  # fmt: skip
