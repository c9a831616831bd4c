"""Safe arithmetic over axis names: the `flops` and `bytes` throughput formulas, `expr` axes
(`axis_value`) and the definition's `constraints` (`holds`: comparisons joined by `and`/`or`).

Only numbers, axis names, + - * / // % ** and parentheses are allowed: a manifest is data, and
must never be a way to run code in the harness, nor to make it hang or crash. So a formula is
bounded before it is evaluated (length, AST nodes, exponents), evaluated in floating point (no
unbounded integers), and its value must be a finite, non-negative number; every way to break
those rules raises `ExpressionError` with what is wrong.
"""
from __future__ import annotations

import ast
import math
import operator

MAX_LENGTH = 1000      # characters: a throughput formula is a line, not a program
MAX_NODES = 200        # AST nodes, checked before anything is evaluated
MAX_EXPONENT = 64      # |b| in a ** b: enough for any shape arithmetic, far from 9 ** 9 ** 9

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_SYMBOLS = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}


class ExpressionError(ValueError):
    """The formula is not allowed, or its value for these axes is not a usable count."""


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


def parse(expression: str, allowed: set[str], relation: bool = False) -> ast.Expression:
    """The formula's AST once its size, syntax and names are acceptable; raises ExpressionError.
    With `relation`, comparisons and `and`/`or` are allowed too (a constraint)."""
    if not isinstance(expression, str):
        raise ExpressionError(f"expected a string formula, got {type(expression).__name__}")
    if len(expression) > MAX_LENGTH:
        raise ExpressionError(f"formula is {len(expression)} characters long, at most {MAX_LENGTH} are allowed")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError("formula is nested too deeply") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise ExpressionError(f"formula has {len(nodes)} syntax nodes, at most {MAX_NODES} are allowed")
    for node in nodes:
        if isinstance(node, (ast.Expression, ast.Load, ast.operator, ast.unaryop)):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            continue
        if isinstance(node, ast.Name):
            if node.id not in allowed:
                raise ExpressionError(f"unknown name {node.id!r}; allowed: {sorted(allowed)}")
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            continue
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            continue
        if relation and (isinstance(node, (ast.boolop, ast.cmpop)) or isinstance(node, ast.BoolOp)
                         or (isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops))):
            continue
        raise ExpressionError(f"unsupported syntax {ast.dump(node)[:40]}; only numbers, axis names, "
                              "+ - * / // % ** and parentheses are allowed")
    for node in nodes:  # parts without names are checked once here, not once per workload
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not any(isinstance(n, ast.Name) for n in ast.walk(node)):
            _eval(node, {})
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) \
                and not any(isinstance(n, ast.Name) for n in ast.walk(node.right)):
            _check_exponent(_eval(node.right, {}))
    return tree


def _number(value: float | int, what: str) -> float:
    try:
        out = float(value)
    except OverflowError:
        raise ExpressionError(f"{what} is too large") from None
    if not math.isfinite(out):
        raise ExpressionError(f"{what} is not a finite number")
    return out


def _check_exponent(value: float) -> None:
    if abs(value) > MAX_EXPONENT:
        raise ExpressionError(f"exponent {value:g} is out of range (at most {MAX_EXPONENT} in magnitude)")


def _eval(node: ast.AST, names: dict[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, names) for v in node.values]
        return float(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.Compare):
        left, ok = _eval(node.left, names), True
        for op, comparator in zip(node.ops, node.comparators):
            right = _eval(comparator, names)
            ok, left = ok and _COMPARE[type(op)](left, right), right
        return float(ok)
    if isinstance(node, ast.Constant):
        return _number(node.value, f"constant {node.value!r}")
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, names)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.BinOp)
    left, right = _eval(node.left, names), _eval(node.right, names)
    if isinstance(node.op, ast.Pow):
        _check_exponent(right)
    if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
        raise ExpressionError(f"division by zero in {ast.unparse(node)!r} ({ast.unparse(node.right)} is 0)")
    try:
        value = _BINOPS[type(node.op)](left, right)
    except OverflowError:
        raise ExpressionError(f"{ast.unparse(node)!r} overflows") from None
    except ZeroDivisionError:
        raise ExpressionError(f"division by zero in {ast.unparse(node)!r}") from None
    if isinstance(value, complex):
        raise ExpressionError(f"{ast.unparse(node)!r} is not a real number")
    return _number(value, repr(ast.unparse(node)))


def evaluate(expression: str, names: dict[str, float]) -> float:
    """The formula's value for these axis values: a finite number >= 0, else ExpressionError."""
    tree = parse(expression, set(names))
    values = {name: _number(value, f"axis {name}") for name, value in names.items()}
    value = _eval(tree, values)
    if value < 0:
        raise ExpressionError(f"value is negative ({value:g}); a count of flops or bytes must be >= 0")
    return value


def axis_value(expression: str, names: dict[str, float]) -> int:
    """An `expr` axis's size for these axis values: an integer >= 0, else ExpressionError."""
    value = evaluate(expression, names)
    if value != int(value):
        raise ExpressionError(f"value {value:g} is not a whole number; an axis is a size")
    return int(value)


def holds(constraint: str, names: dict[str, float]) -> bool:
    """Whether the constraint (arithmetic compared with == != < <= > >=, joined by and/or) is true."""
    tree = parse(constraint, set(names), relation=True)
    return bool(_eval(tree, {name: _number(value, f"axis {name}") for name, value in names.items()}))


def check_constraint(constraint: str, allowed: set[str]) -> str | None:
    """None when the constraint is well formed over `allowed`, else what is wrong with it."""
    try:
        parse(constraint, allowed, relation=True)
    except ExpressionError as exc:
        return f"expected a comparison of arithmetic expressions over axis names: {exc}"
    return None


def check_expression(expression: str, allowed: set[str]) -> str | None:
    """None when the formula is well formed over `allowed`, else what is wrong with it (its value for
    each workload is checked by `evaluate`)."""
    try:
        parse(expression, allowed)
    except ExpressionError as exc:
        return f"expected an arithmetic expression over axis names: {exc}"
    return None
