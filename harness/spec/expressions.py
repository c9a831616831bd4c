"""Safe arithmetic over axis names, for the `flops` and `bytes` throughput formulas.

Only numbers, axis names, + - * / // % ** and parentheses are allowed: a manifest is data, and
must never be a way to run code in the harness.
"""
from __future__ import annotations

import ast
import operator

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


def _eval(node: ast.AST, names: dict[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise NameError(f"unknown name {node.id!r}; allowed: {sorted(names)}")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, names)
        return -value if isinstance(node.op, ast.USub) else value
    raise ValueError(f"unsupported syntax {ast.dump(node)[:40]}")


def evaluate(expression: str, names: dict[str, float]) -> float:
    return float(_eval(ast.parse(expression, mode="eval"), names))


def check_expression(expression: str, allowed: set[str]) -> str | None:
    """None when the expression is well formed over `allowed`, else what is wrong with it."""
    try:
        evaluate(expression, {name: 1 for name in allowed})
    except SyntaxError as exc:
        return f"expected an arithmetic expression over axis names, got {expression!r} ({exc.msg})"
    except (NameError, ValueError) as exc:
        return f"expected an arithmetic expression over axis names: {exc}"
    except ZeroDivisionError:
        return None
    return None
