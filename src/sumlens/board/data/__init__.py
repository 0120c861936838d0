"""The dashboard's data wing: discovery, per-run reading, the column store and its state."""
