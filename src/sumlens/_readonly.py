"""``ReadOnly``: a read-only attribute backed by a private one.

A property that only returns ``self._name`` is three lines of boilerplate per attribute;
a class with a dozen settings (``CheckpointConfig``) repeats them a dozen times.
``ReadOnly`` says the same in one line and behaves as such a property does: reading gives
the private attribute, assigning or deleting raises ``AttributeError``, and type checkers
see the declared type::

    class Config:
        steps = ReadOnly[int]("Save every this many steps.")

        def __init__(self, steps: int) -> None:
            self._steps = steps
"""

from __future__ import annotations

from typing import Generic, TypeVar, overload

T = TypeVar("T")


class ReadOnly(Generic[T]):
    """A class attribute reading ``self._<its name>`` (or ``self.<attribute>``); see the
    module docstring."""

    def __init__(self, doc: str | None = None, *, attribute: str | None = None) -> None:
        self.__doc__ = doc
        self._attribute = attribute or ""
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        self._attribute = self._attribute or f"_{name}"

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> ReadOnly[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> ReadOnly[T] | T:
        if instance is None:
            return self
        value: T = getattr(instance, self._attribute)
        return value

    def __set__(self, instance: object, value: T) -> None:
        raise AttributeError(self._refusal(instance, "setter"))

    def __delete__(self, instance: object) -> None:
        raise AttributeError(self._refusal(instance, "deleter"))

    def _refusal(self, instance: object, what: str) -> str:
        return f"property {self._name!r} of {type(instance).__name__!r} object has no {what}"
