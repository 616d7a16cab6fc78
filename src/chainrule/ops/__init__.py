"""Every tensor op, by name: the rows (`REGISTRY`) and the functions that call them. The
linear-algebra rows and functions live in `chainrule.linalg`, the factories PyTorch keeps
among its functions in `chainrule.creation`; they are listed here too."""

from .. import linalg
from ..creation import asarray, range, scalar_tensor, typename
from ..linalg.decompositions import *  # noqa: F403
from ..linalg.einsum import *  # noqa: F403
from ..linalg.inverses import *  # noqa: F403
from ..linalg.lowrank import *  # noqa: F403
from ..linalg.lu_factorization import *  # noqa: F403
from ..linalg.matrix_functions import *  # noqa: F403
from ..linalg.norms import *  # noqa: F403
from ..linalg.products import *  # noqa: F403
from ..linalg.structured import *  # noqa: F403
from ..linalg.triangular import *  # noqa: F403
from ..op import Op
from . import (
    activations,
    calculus,
    conv,
    cumulative,
    elementwise,
    flat_indexing,
    grid,
    histograms,
    indexing,
    joining,
    normalizers,
    numeric,
    padding,
    pooling,
    recurrent,
    reduce,
    sampling,
    scattering,
    selecting,
    shape,
    sorting,
    statistics,
    strided,
    transcendental,
    windows,
)  # fmt: skip
from .activations import *  # noqa: F403
from .calculus import *  # noqa: F403
from .conv import *  # noqa: F403
from .cumulative import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .flat_indexing import *  # noqa: F403
from .grid import *  # noqa: F403
from .histograms import *  # noqa: F403
from .indexing import *  # noqa: F403
from .joining import *  # noqa: F403
from .normalizers import *  # noqa: F403
from .numeric import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .reduce import *  # noqa: F403
from .sampling import *  # noqa: F403
from .scattering import *  # noqa: F403
from .selecting import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import *  # noqa: F403
from .statistics import *  # noqa: F403
from .strided import *  # noqa: F403
from .transcendental import *  # noqa: F403
from .windows import *  # noqa: F403

__all__ = [
    *elementwise.__all__, *numeric.__all__, *reduce.__all__, *normalizers.__all__,
    *cumulative.__all__, *sorting.__all__, *indexing.__all__, *selecting.__all__,
    *scattering.__all__, *shape.__all__, *strided.__all__, *joining.__all__, *padding.__all__,
    *flat_indexing.__all__, *transcendental.__all__, *statistics.__all__, *calculus.__all__,
    *histograms.__all__, *windows.__all__, *sampling.__all__, *conv.__all__, *pooling.__all__,
    *grid.__all__, *activations.__all__,
    *linalg.products.__all__, *linalg.einsum.__all__, *linalg.inverses.__all__,
    *linalg.decompositions.__all__, *linalg.lu_factorization.__all__,
    *linalg.triangular.__all__, *linalg.matrix_functions.__all__, *linalg.norms.__all__,
    *linalg.lowrank.__all__, *linalg.structured.__all__,
    "asarray", "range", "scalar_tensor", "typename",
]  # fmt: skip

#: Every Op row by its name: tests and docs iterate over it.
REGISTRY: dict[str, Op] = {
    op.name: op
    for module in (
        elementwise,
        numeric,
        reduce,
        normalizers,
        cumulative,
        sorting,
        shape,
        padding,
        indexing,
        selecting,
        scattering,
        strided,
        flat_indexing,
        linalg.products,
        linalg.einsum,
        linalg.inverses,
        linalg.decompositions,
        linalg.lu_factorization,
        linalg.triangular,
        linalg.matrix_functions,
        linalg.norms,
        linalg.lowrank,
        linalg.structured,
        conv,
        pooling,
        grid,
        transcendental,
        statistics,
        calculus,
        histograms,
        windows,
        recurrent,
    )
    for op in vars(module).values()
    if isinstance(op, Op)
}
