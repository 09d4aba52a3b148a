"""Addresses the CLI prints for a run (pure): its page in the Temporal Web UI."""

from __future__ import annotations

from runtime.settings import Settings


def web_ui_link(settings: Settings, run_id: str) -> str:
    return (
        f"http://localhost:{settings.ui_port}/namespaces/{settings.temporal_namespace}"
        f"/workflows/{run_id}"
    )
