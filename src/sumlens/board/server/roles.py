"""Roles, least first: ``viewer < editor < admin``, and who holds which (the roles file).

A viewer reads; an editor also writes notes, colours, saved views and run states; an
admin also imports annotations and deletes or restores runs. The roles file (TOML,
checked by :func:`sumlens.board.settings.read_roles_file`) maps token names, user names,
emails and groups to roles (user names and emails in tables of their own: an identity
provider's user name may look like someone's email); the highest role that matches wins, and anyone
authenticated who matches nothing gets ``default`` (``editor`` when the file does not
say, or when there is no file).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from sumlens.board.settings import ROLE_NAMES, read_roles_file


class Role(str, Enum):
    """A role; compares by rank (``Role.VIEWER < Role.EDITOR``), its value is its name."""

    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """0 for a viewer, 1 for an editor, 2 for an admin."""
        return ROLE_NAMES.index(self.value)

    def __lt__(self, other: object) -> bool:
        return self.rank < _rank(other)

    def __le__(self, other: object) -> bool:
        return self.rank <= _rank(other)

    def __gt__(self, other: object) -> bool:
        return self.rank > _rank(other)

    def __ge__(self, other: object) -> bool:
        return self.rank >= _rank(other)

    def __str__(self) -> str:
        return self.value


def _rank(other: object) -> int:
    if not isinstance(other, Role):
        raise TypeError(f"a Role compares with a Role, not {type(other).__name__}")
    return other.rank


@dataclass(frozen=True)
class RoleMap:
    """Who holds which role: by token name, user name, email and group."""

    default: Role = Role.EDITOR
    tokens: dict[str, Role] = field(default_factory=dict)
    users: dict[str, Role] = field(default_factory=dict)
    emails: dict[str, Role] = field(default_factory=dict)
    groups: dict[str, Role] = field(default_factory=dict)

    def role_of(
        self,
        token: str | None = None,
        user: str | None = None,
        email: str | None = None,
        groups: Iterable[str] = (),
    ) -> Role:
        """The highest role that matches the token's name, the user name, the email or a
        group; ``default`` when none does."""
        found = [self.tokens[token]] if token in self.tokens else []
        found += [self.users[user]] if user in self.users else []
        found += [self.emails[email]] if email in self.emails else []
        found += [self.groups[group] for group in groups if group in self.groups]
        return max(found, default=self.default)


def load_roles(path: Path | None) -> RoleMap:
    """The roles file at ``path`` (None: everyone authenticated is an editor)."""
    if path is None:
        return RoleMap()
    given = read_roles_file(path)
    return RoleMap(
        default=Role(given["default"]),
        **{
            table: {name: Role(role) for name, role in given[table].items()}
            for table in ("tokens", "users", "emails", "groups")
        },
    )
