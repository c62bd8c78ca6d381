"""The example tools of the ReAct article: plain functions, their hints and docstrings are the schema."""

from __future__ import annotations


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def divide(a: float, b: float) -> float:
    """Divide two numbers."""
    return float(a) / b


ARITHMETIC_TOOLS = [multiply, add, divide]
