"""Argument checks whose errors read like MindSpore's: they name the owner (the function
the user called), the argument, the value and what is allowed."""

from __future__ import annotations


def check_int(value: object, name: str, owner: str, minimum: int) -> int:
    """An int (not a bool) ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be an int, "
            f"but got {type(value).__name__} {value!r}"
        )
    if value < minimum:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be >= {minimum}, but got {value}"
        )
    return value


def check_bool(value: object, name: str, owner: str) -> bool:
    """A bool."""
    if not isinstance(value, bool):
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be a bool, "
            f"but got {type(value).__name__} {value!r}"
        )
    return value
