"""The `research` command line: start, steer and inspect research runs (entry: starter.cli:main)."""
