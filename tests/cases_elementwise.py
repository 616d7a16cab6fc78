"""Cases for chainrule/ops/elementwise.py."""

import torch.nn.functional as TF
from cases import Case
from cases_linalg import product_case
from strategies import away_from_zero, broadcastable, positive, reals, same

pair = broadcastable(2)
triple = broadcastable(3)

CASES = {
    "add": Case(lambda x, y: x + y, pair, (reals(), reals())),
    "add[scalar]": Case(lambda x: 2.5 + x),
    "sub": Case(lambda x, y: x - y, pair),
    "sub[reflected]": Case(lambda x: 1 - x),
    "mul": Case(lambda x, y: x * y, pair),
    "mul[self]": Case(lambda x: x * x),
    "div": Case(lambda x, y: x / y, pair, (reals(), away_from_zero())),
    "reciprocal[number_over]": Case(lambda x: 2 / x, domain=(away_from_zero(),)),  # 2 * (1 / x)
    # The exponent keeps off 0: there PyTorch's gradient to x is 0 by a where, so its second
    # derivative in y is 0, not the limit (test_numeric.py compares pow's zeros with PyTorch).
    "pow": Case(lambda x, y: x**y, pair, (positive(), away_from_zero())),
    "pow[scalar]": Case(lambda x: x**3),
    "pow[base]": Case(lambda x: 2**x),
    "neg": Case(lambda x: -x),
    "exp": Case(lambda x: x.exp()),
    "log": Case(lambda x: x.log(), domain=(positive(),)),
    "log1p": Case(lambda x: x.log1p(), domain=(reals(-0.5, 3),)),
    "expm1": Case(lambda x: x.expm1()),
    "sqrt": Case(lambda x: x.sqrt(), domain=(positive(),)),
    "rsqrt": Case(lambda x: x.rsqrt(), domain=(positive(),)),
    "reciprocal": Case(lambda x: x.reciprocal(), domain=(positive(),)),
    "sin": Case(lambda x: x.sin()),
    "cos": Case(lambda x: x.cos()),
    "tan": Case(lambda x: x.tan(), domain=(reals(-1.2, 1.2),)),
    "sinh": Case(lambda x: x.sinh()),
    "cosh": Case(lambda x: x.cosh()),
    "tanh": Case(lambda x: x.tanh()),
    "sigmoid": Case(lambda x: x.sigmoid()),
    "relu": Case(lambda x: x.relu(), domain=(away_from_zero(),)),
    "leaky_relu": Case(
        lambda x: x.leaky_relu(0.2),
        domain=(away_from_zero(),),
        torch_fn=lambda x: TF.leaky_relu(x, 0.2),
    ),
    "softplus": Case(
        lambda x: x.softplus(), domain=(reals(-10, 10),), torch_fn=lambda x: TF.softplus(x)
    ),
    "silu": Case(lambda x: x.silu() * 1, torch_fn=lambda x: TF.silu(x) * 1),
    "erf": Case(lambda lib, x: lib.erf(x), needs_lib=True),
    "gelu": Case(lambda x: x.gelu(), torch_fn=lambda x: TF.gelu(x)),
    "gelu[tanh]": Case(
        lambda x: x.gelu(approximate="tanh"), torch_fn=lambda x: TF.gelu(x, approximate="tanh")
    ),
    "abs": Case(lambda x: x.abs(), domain=(away_from_zero(),)),
    "sign": Case(lambda x: x.sign() * x, domain=(away_from_zero(),)),
    "clone": Case(lambda x: x.clone() * 2),
    # Rounding to float32 in between: finite differences are only good to about 1e-7 / eps.
    "cast": Case(
        lambda x: x.float().double() * 1, atol=1e-6, rtol=1e-6, fd_atol=0.2, keeps_dtype=False
    ),
    "clamp": Case(
        lambda x: x.clamp(-1.0, 1.5),
        domain=(reals(-3, 3).filter(lambda v: min(abs(v + 1), abs(v - 1.5)) > 1e-3),),
    ),
    "clamp[min]": Case(
        lambda x: x.clamp(min=0.5), domain=(reals().filter(lambda v: abs(v - 0.5) > 1e-3),)
    ),
    "maximum": Case(lambda x, y: x.maximum(y), pair, (reals(-3, 0), reals(0.1, 3))),
    "maximum[ties]": Case(lambda x: x.maximum(x * 1)),
    "minimum": Case(lambda x, y: x.minimum(y), pair, (reals(-3, 0), reals(0.1, 3))),
    "where": Case(lambda x, y: x.where(x > 0, y), pair, (away_from_zero(), reals())),
    "fill": Case(lambda x: (x * 1).fill_(2.0) * x),
    "copy_into": Case(lambda x, y: (x * 1).copy_(y) * x, same(2)),
    "lt": Case(lambda x, y: x < y, pair),
    "le": Case(lambda x, y: x <= y, pair),
    "gt": Case(lambda x, y: x > y, pair),
    "ge": Case(lambda x, y: x >= y, pair),
    "eq": Case(lambda x, y: x == y, pair),
    "ne": Case(lambda x, y: x != y, pair),
    "logical_not": Case(lambda x: ~(x > 0)),
    "logical_and": Case(lambda x, y: (x > 0) & (y > 0), pair),
    "logical_or": Case(lambda x, y: (x > 0) | (y > 0), pair),
    "where[3]": Case(lambda c, x, y: x.where(c > 0, y), triple, grad_inputs=(1, 2)),
    # Sums of products and quotients.
    "addcmul": product_case(lambda lib, z, x, y: lib.addcmul(z, x, y, value=-2), "", "", ""),
    "addcmul[method]": Case(lambda z, x, y: z.addcmul(x, y), broadcastable(3)),
    "addcdiv": Case(
        lambda z, x, y: z.addcdiv(x, y, value=0.5),
        broadcastable(3),
        domain=(reals(), reals(), away_from_zero()),
    ),
}


# subtract with alpha.
CASES.update({
    "subtract[alpha]": Case(
        lambda lib, x, y: lib.subtract(x, y, alpha=2.5), pair, (reals(), reals()), needs_lib=True
    ),
})  # fmt: skip
