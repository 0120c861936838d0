"""Argument checks whose errors read like MindSpore's: they name the owner (the function
the user called), the argument, the value and what is allowed.

Every package checks its arguments with these, so one kind of mistake reads the same
wherever it is made: ``For 'Owner', the argument 'name' must be ..., but got <type> <value>``.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Sequence
from typing import Literal, overload


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


@overload
def check_int(
    value: object,
    name: str,
    owner: str,
    minimum: int | None = None,
    *,
    allow_none: Literal[False] = False,
    maximum: int | None = None,
) -> int: ...
@overload
def check_int(
    value: object,
    name: str,
    owner: str,
    minimum: int | None = None,
    *,
    allow_none: bool,
    maximum: int | None = None,
) -> int | None: ...
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


@overload
def check_number(
    value: object,
    name: str,
    owner: str,
    minimum: float | None = None,
    *,
    above: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
    allow_none: Literal[False] = False,
) -> float: ...
@overload
def check_number(
    value: object,
    name: str,
    owner: str,
    minimum: float | None = None,
    *,
    above: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
    allow_none: bool,
) -> float | None: ...
def check_number(
    value: object,
    name: str,
    owner: str,
    minimum: float | None = None,
    *,
    above: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
    allow_none: bool = False,
) -> float | None:
    """A real number (int or float, numpy's included, never a bool) in ``[minimum, maximum]``,
    greater than ``above`` when given, and finite unless ``finite=False``; None if allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _wrong_type(value, name, owner, "a number or None" if allow_none else "a number")
    number = float(value)
    _bounds(number, value, name, owner, minimum, maximum, above, finite)
    return number


def check_instance(
    value: object,
    name: str,
    owner: str,
    kinds: type | tuple[type, ...],
    allowed: str,
    *,
    allow_none: bool = False,
) -> object:
    """``value`` when it is an instance of ``kinds`` (a bool only when ``bool`` is one of
    them, not as an int); None if allowed. ``allowed`` says what it must be, in words."""
    if value is None and allow_none:
        return None
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _wrong_type(value, name, owner, f"{allowed} or None" if allow_none else allowed)
    return value


@overload
def check_str(
    value: object,
    name: str,
    owner: str,
    *,
    allow_none: Literal[False] = False,
    non_empty: bool = False,
) -> str: ...
@overload
def check_str(
    value: object, name: str, owner: str, *, allow_none: bool, non_empty: bool = False
) -> str | None: ...
def check_str(
    value: object, name: str, owner: str, *, allow_none: bool = False, non_empty: bool = False
) -> str | None:
    """A str (a ``ValueError`` when empty and ``non_empty``); None if allowed."""
    allowed = "a non-empty str" if non_empty else "a str"
    text = check_instance(value, name, owner, str, allowed, allow_none=allow_none)
    if non_empty and text == "":
        raise ValueError(f"For '{owner}', the argument '{name}' must be {allowed}, but got ''")
    return text  # type: ignore[return-value]


@overload
def check_text(
    value: object,
    name: str,
    owner: str,
    *,
    allow_none: Literal[False] = False,
    non_empty: bool = False,
) -> str: ...
@overload
def check_text(
    value: object, name: str, owner: str, *, allow_none: bool, non_empty: bool = False
) -> str | None: ...
def check_text(
    value: object, name: str, owner: str, *, allow_none: bool = False, non_empty: bool = False
) -> str | None:
    """A str that UTF-8 can hold (no lone surrogates such as ``"\\ud800"``), as tags, texts
    and labels written into files must be; otherwise as :func:`check_str`."""
    text = check_str(value, name, owner, allow_none=allow_none, non_empty=non_empty)
    if text is not None and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(
                f"For '{owner}', the argument '{name}' must be text that UTF-8 can hold, but "
                f"character {text[err.start]!r} at position {err.start} of {text!r:.200} is a "
                "lone surrogate"
            ) from None
    return text


def check_choice(
    value: object, name: str, owner: str, choices: Sequence[str], *, ignore_case: bool = False
) -> str:
    """One of the strs ``choices`` (compared in lower case with ``ignore_case``: the
    choices are then lower case), returned as the choice it matched."""
    allowed = f"one of {', '.join(repr(choice) for choice in choices)}"
    if not isinstance(value, str):
        raise _wrong_type(value, name, owner, allowed)
    key = value.lower() if ignore_case else value
    if key not in choices:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be {allowed}, but got {value!r}"
        )
    return key


def check_callable(value: object, name: str, owner: str, *, allow_none: bool = False) -> object:
    """A callable; None if allowed."""
    if value is None and allow_none:
        return None
    if not callable(value):
        raise _wrong_type(value, name, owner, "callable or None" if allow_none else "callable")
    return value


def check_module(value: object, name: str, owner: str, *, allow_none: bool = False) -> object:
    """A torch ``nn.Module``; None if allowed. Torch is not imported here: when it is not
    loaded yet, no value can be a module."""
    torch = sys.modules.get("torch")
    kinds = (torch.nn.Module,) if torch is not None else ()
    return check_instance(value, name, owner, kinds, "a torch.nn.Module", allow_none=allow_none)


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
