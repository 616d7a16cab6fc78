"""Every tensor op, by name: the rows (`REGISTRY`) and the functions that call them."""

from ..op import Op
from . import (
    activations,
    aliases,
    arranging,
    calculus,
    conv,
    decompositions,
    elementwise,
    factorizations,
    grid,
    histograms,
    indexing,
    joining,
    linalg,
    normalizers,
    numeric,
    padding,
    pool,
    pool3d,
    products,
    reduce,
    scan,
    scattering,
    selecting,
    shape,
    sorting,
    spectral,
    statistics,
    strided,
    transcendental,
    unpool,
    windows,
)  # fmt: skip
from .activations import *  # noqa: F403
from .aliases import *  # noqa: F403
from .arranging import *  # noqa: F403
from .calculus import *  # noqa: F403
from .conv import *  # noqa: F403
from .decompositions import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .factorizations import *  # noqa: F403
from .grid import *  # noqa: F403
from .histograms import *  # noqa: F403
from .indexing import *  # noqa: F403
from .joining import *  # noqa: F403
from .linalg import *  # noqa: F403
from .normalizers import *  # noqa: F403
from .numeric import *  # noqa: F403
from .padding import *  # noqa: F403
from .pool import *  # noqa: F403
from .pool3d import *  # noqa: F403
from .products import *  # noqa: F403
from .reduce import *  # noqa: F403
from .scan import *  # noqa: F403
from .scattering import *  # noqa: F403
from .selecting import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import *  # noqa: F403
from .spectral import *  # noqa: F403
from .statistics import *  # noqa: F403
from .strided import *  # noqa: F403
from .transcendental import *  # noqa: F403
from .unpool import *  # noqa: F403
from .windows import *  # noqa: F403

__all__ = [
    *elementwise.__all__, *reduce.__all__, *shape.__all__, *indexing.__all__, *linalg.__all__,
    *selecting.__all__, *conv.__all__, *pool.__all__, *padding.__all__, *numeric.__all__,
    *scan.__all__, *sorting.__all__, *scattering.__all__, *decompositions.__all__,
    *strided.__all__, *joining.__all__, *products.__all__,
    *transcendental.__all__, *statistics.__all__, *arranging.__all__, *factorizations.__all__,
    *spectral.__all__, *normalizers.__all__,
    *calculus.__all__, *histograms.__all__, *windows.__all__,
    *activations.__all__, *aliases.__all__,
    *pool3d.__all__, *unpool.__all__, *grid.__all__,
]  # fmt: skip

#: Every Op row by its name: tests and docs iterate over it.
REGISTRY: dict[str, Op] = {
    op.name: op
    for module in (
        elementwise,
        numeric,
        reduce,
        normalizers,
        scan,
        sorting,
        shape,
        padding,
        indexing,
        selecting,
        scattering,
        strided,
        linalg,
        decompositions,
        conv,
        pool,
        pool3d,
        unpool,
        grid,
        transcendental,
        statistics,
        calculus,
        histograms,
        windows,
        arranging,
        factorizations,
        aliases,
    )
    for op in vars(module).values()
    if isinstance(op, Op)
}
