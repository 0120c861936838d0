"""MindInsight 2.3.1's routes and JSON, read through the same surface as ``/api/v1``."""
