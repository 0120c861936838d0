"""Argument checks whose errors read like MindSpore's: they name the owner (the function
the user called), the argument, the value and what is allowed.

Every package checks its arguments with these, so one kind of mistake reads the same
wherever it is made: ``For 'Owner', the argument 'name' must be ..., but got <type> <value>``.
"""

from __future__ import annotations

import math
import numbers


def _got(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def check_int(
    value: object,
    name: str,
    owner: str,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    allow_none: bool = False,
) -> int | None:
    """An int (numpy's included, never a bool) in ``[minimum, maximum]``; None if allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        allowed = "an int or None" if allow_none else "an int"
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be {allowed}, but got {_got(value)}"
        )
    number = int(value)
    if minimum is not None and number < minimum:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be >= {minimum}, but got {number}"
        )
    if maximum is not None and number > maximum:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be <= {maximum}, but got {number}"
        )
    return number


def check_bool(value: object, name: str, owner: str) -> bool:
    """A bool (numpy's included)."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be a bool, but got {_got(value)}"
        )
    return bool(value)


def check_number(
    value: object,
    name: str,
    owner: str,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    finite: bool = True,
) -> float:
    """A real number (int or float, numpy's included, never a bool) in ``[minimum, maximum]``,
    finite unless ``finite=False``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be an int or a float, "
            f"but got {_got(value)}"
        )
    number = float(value)
    if finite and not math.isfinite(number):
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be finite, but got {value!r}"
        )
    if minimum is not None and number < minimum:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be >= {minimum}, but got {value!r}"
        )
    if maximum is not None and number > maximum:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be <= {maximum}, but got {value!r}"
        )
    return number
