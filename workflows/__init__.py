"""Deterministic code only: the research loop, its models, bounds, tools, gate and composer."""
