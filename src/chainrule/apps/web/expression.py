"""The expression box of ``chainrule serve``: text such as ``x*y + sin(x)`` in, a `Value` out.

The text is parsed with `ast` and walked here against a whitelist; nothing is passed to eval,
exec or compile. Limits on length, size, depth, variables and exponents keep every request small.
"""

from __future__ import annotations

import ast
import math
import numbers
from collections.abc import Callable, Mapping
from typing import NamedTuple

from ...errors import ChainruleError
from ...scalar.value import Value, topological_order

MAX_LENGTH = 500  # characters
MAX_NODES = 200  # numbers, names, operations and calls: this also bounds the Value graph
MAX_DEPTH = 30  # nesting levels of those
MAX_VARIABLES = 8
MAX_NAME_LENGTH = 24
MAX_EXPONENT = 100  # |y| in x ** y, so 9**9**9 is refused instead of overflowing
MAX_NUMBER = 1e9  # |value| of a number written in the text or given for a variable

#: The functions the box accepts, each a method of `Value` (one row of `chainrule.scalar.rules`).
FUNCTIONS: dict[str, Callable] = {
    "exp": Value.exp,
    "log": Value.log,
    "sqrt": Value.sqrt,
    "sin": Value.sin,
    "cos": Value.cos,
    "tan": Value.tan,
    "tanh": Value.tanh,
    "sigmoid": Value.sigmoid,
    "relu": Value.relu,
    "leaky_relu": Value.leaky_relu,  # leaky_relu(x) or leaky_relu(x, slope) with a number slope
    "abs": Value.abs,
    "softplus": Value.softplus,
}

_FUNCTION_LIST = "the functions are " + ", ".join(sorted(FUNCTIONS))
_ALLOWED = "use numbers, variables, + - * / **, parentheses and " + _FUNCTION_LIST

_BINARY: dict[type, Callable[[Value, Value | float], Value]] = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y,
    ast.Pow: lambda x, y: x**y,
}

_REFUSED_OPERATORS = {
    ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&", ast.Invert: "~", ast.Not: "not",
}  # fmt: skip

# What the message calls each refused kind of syntax.
_REFUSED_SYNTAX = {
    ast.Attribute: "attribute access (a.b) is",
    ast.Subscript: "subscripts (a[i]) are",
    ast.Lambda: "lambda is",
    ast.ListComp: "comprehensions are",
    ast.SetComp: "comprehensions are",
    ast.DictComp: "comprehensions are",
    ast.GeneratorExp: "comprehensions are",
    ast.Compare: "comparisons are",
    ast.BoolOp: "and/or are",
    ast.IfExp: "if/else is",
    ast.NamedExpr: "assignment (:=) is",
    ast.JoinedStr: "f-strings are",
    ast.Starred: "* unpacking is",
    ast.List: "lists are",
    ast.Tuple: "tuples are",
    ast.Set: "sets are",
    ast.Dict: "dicts are",
    ast.Slice: "slices are",
    ast.Await: "await is",
    ast.Yield: "yield is",
    ast.YieldFrom: "yield is",
}


class ExpressionError(ChainruleError, ValueError):
    """The expression box refused the text or a value; the message says why and what to do."""


class Expression(NamedTuple):
    """A checked expression: its text, syntax tree, and variables in order of appearance."""

    text: str
    tree: ast.expr
    variables: tuple[str, ...]


def _refuse(message: str, node: ast.AST, hint: str = "") -> ExpressionError:
    """An ExpressionError: the message, the column where the offending part starts, a hint."""
    hint = f"; {hint}" if hint else ""
    return ExpressionError(f"expression: {message} (column {node.col_offset + 1}){hint}")


def parse(text: str) -> Expression:
    """Check ``text`` against the whitelist and return it parsed, or raise ExpressionError.

    Allowed: numbers, variable names, ``+ - * / **``, unary minus, parentheses and calls of
    `FUNCTIONS` with positional arguments. Everything else is refused with a message naming
    it, as are texts past the size limits (`MAX_LENGTH`, `MAX_NODES`, `MAX_DEPTH`,
    `MAX_VARIABLES`) and exponents written larger than `MAX_EXPONENT`.

    >>> parse("tanh(a*b) ** 2").variables
    ('a', 'b')
    >>> try:
    ...     parse("x.__class__")
    ... except ExpressionError as error:
    ...     print(error)
    expression: attribute access (a.b) is not allowed (column 1); use numbers, ...
    """
    if not isinstance(text, str):
        raise ExpressionError(f"expression: must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"expression: is {len(text)} characters long; the limit is {MAX_LENGTH}"
        )
    if not text.strip():
        raise ExpressionError("expression: is empty; type one such as x*y + sin(x)")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        column = f" at column {exc.offset}" if exc.offset else ""
        raise ExpressionError(f"expression: invalid syntax{column}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise ExpressionError(f"expression: cannot be parsed: {exc}") from None
    _check_size(tree)
    names: dict[str, tuple[int, int]] = {}
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        _check_node(node, called)
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            position = (node.lineno, node.col_offset)
            names[node.id] = min(names.get(node.id, position), position)
    if len(names) > MAX_VARIABLES:
        raise ExpressionError(
            f"expression: uses {len(names)} variables; the limit is {MAX_VARIABLES}"
        )
    return Expression(text, tree, tuple(sorted(names, key=names.__getitem__)))


def _check_size(tree: ast.expr) -> None:
    """Count the expression nodes (numbers, names, operations, calls) and their nesting without
    recursion, before anything walks the tree recursively."""
    count, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            count, depth = count + 1, depth + 1
            if count > MAX_NODES:
                raise ExpressionError(f"expression: has more than {MAX_NODES} parts; shorten it")
            if depth > MAX_DEPTH:
                raise ExpressionError(
                    f"expression: is nested more than {MAX_DEPTH} levels deep; simplify it"
                )
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))


def _check_node(node: ast.AST, called: set[int]) -> None:
    """Refuse every node that is not part of the small arithmetic language."""
    if isinstance(node, (ast.operator, ast.unaryop, ast.expr_context, ast.keyword)):
        return  # checked with the BinOp, UnaryOp or Call holding them
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise _operator_error(node)
        exponent = _literal(node.right) if isinstance(node.op, ast.Pow) else None
        if exponent is not None and abs(exponent) > MAX_EXPONENT:
            raise _exponent_error(exponent, node)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise _operator_error(node)
    elif isinstance(node, ast.Constant):
        _number(node)
    elif isinstance(node, ast.Name):
        _check_name(node, id(node) in called)
    elif isinstance(node, ast.Call):
        _check_call(node)
    else:
        kind = _REFUSED_SYNTAX.get(type(node), f"{type(node).__name__} is")
        raise _refuse(f"{kind} not allowed", node, _ALLOWED)


def _operator_error(node: ast.BinOp | ast.UnaryOp) -> ExpressionError:
    symbol = _REFUSED_OPERATORS.get(type(node.op), type(node.op).__name__)
    return _refuse(f"the operator {symbol} is not allowed", node, _ALLOWED)


def _check_name(node: ast.Name, is_called: bool) -> None:
    if node.id in FUNCTIONS and not is_called:
        raise _refuse(f"{node.id} is a function; call it as {node.id}(...)", node)
    if node.id.startswith("_"):
        raise _refuse(f"the name {node.id!r} is not allowed; names must not start with _", node)
    if len(node.id) > MAX_NAME_LENGTH:
        raise _refuse(
            f"the name {node.id[:MAX_NAME_LENGTH]}... is longer than {MAX_NAME_LENGTH} characters",
            node,
        )


def _check_call(node: ast.Call) -> None:
    if not isinstance(node.func, ast.Name):
        raise _refuse("only functions named in the list can be called", node, _FUNCTION_LIST)
    name = node.func.id
    if name not in FUNCTIONS:
        raise _refuse(f"{name}() is not an allowed function", node, _FUNCTION_LIST)
    if node.keywords:
        keyword = node.keywords[0].arg or "**"
        raise _refuse(f"keyword arguments ({keyword}=...) are not allowed in {name}()", node)
    arity = (1, 2) if name == "leaky_relu" else (1,)
    if len(node.args) not in arity:
        expected = " or ".join(str(n) for n in arity)
        raise _refuse(f"{name}() takes {expected} argument(s), got {len(node.args)}", node)
    if len(node.args) == 2 and _literal(node.args[1]) is None:
        raise _refuse("leaky_relu(x, slope): the slope must be a number", node)


def _number(node: ast.Constant) -> float:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(
            f"the constant {value!r:.40} is not allowed; only real numbers, such as 2 or 0.5",
            node,
        )
    if not abs(value) <= MAX_NUMBER:  # an int compares exactly; also refuses nan
        raise _refuse(f"the number {value!r:.40} is larger than {MAX_NUMBER:g}", node)
    return float(value)


def _literal(node: ast.expr) -> float | None:
    """The number a node writes (``2``, ``-0.5``), or None when it is not a plain number."""
    sign = 1.0
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        if isinstance(node.value, bool) or not abs(node.value) <= MAX_NUMBER:
            return None  # refused separately as a constant
        return sign * float(node.value)
    return None


def _exponent_error(exponent: float, node: ast.AST) -> ExpressionError:
    return _refuse(
        f"the exponent {exponent:.6g} is too large; exponents must be at most {MAX_EXPONENT} "
        "in size",
        node,
    )


def evaluate(expression: Expression | str, values: Mapping[str, float]) -> Value:
    """Build the `Value` graph of ``expression`` with its variables set from ``values``.

    Each variable becomes a leaf labelled with its name, each number written in the text a
    leaf labelled with that number, and the root is labelled ``f``. Call ``backward()`` on the
    result (or use `differentiate`) for the gradients. Domain errors (``log(-1)``) are raised
    as `chainrule.DomainError`; values that overflow a float as ExpressionError.

    >>> f = evaluate("x*y + x", {"x": 2.0, "y": 3.0}); f.backward(); f.data
    8.0
    """
    if isinstance(expression, str):
        expression = parse(expression)
    leaves = {}
    for name in expression.variables:
        if name not in values:
            raise ExpressionError(f"expression: no value given for the variable {name!r}")
        leaves[name] = Value(check_value(name, values[name]), label=name)
    out = _evaluate(expression.tree, leaves, expression.text.strip())
    if not isinstance(out, Value):  # a constant expression such as 2 + 3
        out = Value(out)
    out.label = "f"
    return out


def differentiate(expression: Expression | str, values: Mapping[str, float]) -> Value:
    """`evaluate`, then ``backward()``; refuses gradients that overflow a float.

    >>> f = differentiate("tanh(a*b) ** 2", {"a": 0.5, "b": 1.0})
    >>> round(f.data, 6)
    0.213552
    """
    out = evaluate(expression, values)
    out.backward()
    for node in topological_order(out):
        if not math.isfinite(node.grad):
            name = node.label or "a part of the expression"
            raise ExpressionError(
                f"expression: the gradient of {name} is {node.grad}; try other values"
            )
    return out


def check_value(name: str, value: object) -> float:
    """A variable's value as a float, or ExpressionError when it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ExpressionError(
            f"expression: the value of {name!r} must be a number, got {type(value).__name__}"
        )
    if not abs(value) <= MAX_NUMBER:
        raise ExpressionError(
            f"expression: the value of {name!r} is {value}; values must be finite and at most "
            f"{MAX_NUMBER:g} in size"
        )
    return float(value)


def _evaluate(node: ast.expr, leaves: dict[str, Value], text: str) -> Value | float:
    """Walk a checked tree: numbers stay floats until they meet a Value, then become leaves."""
    if isinstance(node, ast.Constant):
        return _number(node)
    if isinstance(node, ast.Name):
        return leaves[node.id]
    if isinstance(node, ast.UnaryOp):
        x = _evaluate(node.operand, leaves, text)
        out = -x if isinstance(node.op, ast.USub) else x
    elif isinstance(node, ast.BinOp):
        x = _evaluate(node.left, leaves, text)
        y = _evaluate(node.right, leaves, text)
        if isinstance(node.op, ast.Pow):
            exponent = float(y)
            if not abs(exponent) <= MAX_EXPONENT:
                raise _exponent_error(exponent, node)
        op = _BINARY[type(node.op)]
        if isinstance(node.op, ast.Pow) and not isinstance(y, Value):
            out = op(_leaf(x), y)  # a constant exponent: the pow row with y fixed
        else:
            out = op(_leaf(x), _leaf(y))
        if not isinstance(x, Value) and not isinstance(y, Value):
            out = out.data  # constants fold, with Value's domain errors (1/0, (-1)**0.5)
    elif isinstance(node, ast.Call):
        x = _evaluate(node.args[0], leaves, text)
        extra = [_literal(arg) for arg in node.args[1:]]
        out = FUNCTIONS[node.func.id](_leaf(x), *extra)
        if not isinstance(x, Value):
            out = out.data
    else:  # parse() refused everything else
        raise _refuse(f"{type(node).__name__} is not allowed", node, _ALLOWED)
    if not math.isfinite(float(out)):
        part = ast.get_source_segment(text, node) or "a part of it"
        raise _refuse(f"{part} is {float(out)}, too large for a float; try smaller values", node)
    return out


def _leaf(x: Value | float) -> Value:
    return x if isinstance(x, Value) else Value(x, label=f"{x:g}")


__all__ = [
    "FUNCTIONS", "MAX_DEPTH", "MAX_EXPONENT", "MAX_LENGTH", "MAX_NODES", "MAX_NUMBER",
    "MAX_VARIABLES", "Expression", "ExpressionError", "check_value", "differentiate",
    "evaluate", "parse",
]  # fmt: skip
