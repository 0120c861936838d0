"""Argument checks whose errors read like MindSpore's: they name the owner (the function
the user called), the argument, the value and what is allowed.

Every package checks its arguments with these, so one kind of mistake reads the same
wherever it is made: ``For 'Owner', the argument 'name' must be ..., but got <type> <value>``.
"""

from __future__ import annotations

import math
import numbers
import os


def _wrong_type(value: object, name: str, owner: str, allowed: str) -> TypeError:
    return TypeError(
        f"For '{owner}', the argument '{name}' must be {allowed}, "
        f"but got {type(value).__name__} {value!r}"
    )


def _bounds(
    number: float,
    shown: object,
    name: str,
    owner: str,
    minimum: float | None,
    maximum: float | None,
    above: float | None,
    finite: bool,
) -> None:
    """Raise one ValueError naming every bound when ``number`` breaks any of them."""
    bad = (
        (finite and not math.isfinite(number))
        or (minimum is not None and number < minimum)
        or (above is not None and number <= above)
        or (maximum is not None and number > maximum)
    )
    if bad:
        rules = ["finite"] if finite else []
        rules += [f"{op} {bound}" for op, bound in ((">=", minimum), (">", above), ("<=", maximum))
                  if bound is not None]  # fmt: skip
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be {' and '.join(rules)}, but got {shown!r}"
        )


def check_int(
    value: object,
    name: str,
    owner: str,
    minimum: int | None = None,
    *,
    allow_none: bool = False,
    maximum: int | None = None,
) -> int | None:
    """An int (numpy's included, never a bool) in ``[minimum, maximum]``; None if allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _wrong_type(value, name, owner, "an int or None" if allow_none else "an int")
    number = int(value)
    _bounds(number, number, name, owner, minimum, maximum, None, finite=False)
    return number


def check_bool(value: object, name: str, owner: str) -> bool:
    """A bool (numpy's included: ``numpy.bool`` in numpy 2, ``numpy.bool_`` before)."""
    if not isinstance(value, bool) and not (
        type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    ):
        raise _wrong_type(value, name, owner, "a bool")
    return bool(value)


def check_number(
    value: object,
    name: str,
    owner: str,
    minimum: float | None = None,
    *,
    above: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
) -> float:
    """A real number (int or float, numpy's included, never a bool) in ``[minimum, maximum]``,
    greater than ``above`` when given, and finite unless ``finite=False``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _wrong_type(value, name, owner, "a number")
    number = float(value)
    _bounds(number, value, name, owner, minimum, maximum, above, finite)
    return number


def check_directory(value: object, name: str, owner: str, max_length: int = 1024) -> str:
    """A directory's real path: a non-blank str or ``os.PathLike``, at most ``max_length``
    characters once resolved, and not an existing file. Nothing is created here."""
    if not isinstance(value, str | os.PathLike):
        raise _wrong_type(value, name, owner, "a str or os.PathLike")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            f"For '{owner}', the argument '{name}' must not be empty or blank, but got {value!r}"
        )
    path = os.path.realpath(text)
    if len(path) > max_length:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be at most {max_length} characters "
            f"as a real path, but got {len(path)}"
        )
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(
            f"For '{owner}', the argument '{name}' must be a directory, but {text!r} is a file"
        )
    return path
