"""The fixtures of the deployment tests: the team topology (``helpers.team``)."""

from helpers.team import browser, endpoint, proxy_team, team

__all__ = ["browser", "endpoint", "proxy_team", "team"]
