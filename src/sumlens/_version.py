"""The single place the package version lives."""

__version__ = "0.1.0"
