"""The fixtures of the deployment tests: the team topology (``helpers.team``); the browser
is the session's (``tests/conftest.py``)."""

from helpers.team import endpoint, proxy_team, team

__all__ = ["endpoint", "proxy_team", "team"]
