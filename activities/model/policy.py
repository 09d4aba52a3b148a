"""The policy protocol: a decision-maker the worker runs in place of a model (no client, no prompt).

`decide` depends on this protocol only; the composition root (`worker.py`) chooses which policy,
if any, to inject (the offline policy and the fixed pipeline live in the `baselines` package).
"""

from __future__ import annotations

from typing import Protocol

from workflows.contracts import DecideInput
from workflows.models import Decision


class Policy(Protocol):
    """One turn decided from what a model would see (the brief and the transcript), in-process."""

    def __call__(self, request: DecideInput, /) -> Decision: ...
