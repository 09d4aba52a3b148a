"""A second `research dev` refuses a queue another stack's worker serves, not one a stopped
stack's worker served: Temporal lists a poller for a while after the worker went away."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from runtime.settings import Settings
from starter.devstack import stack_gone, stack_identity


def test_a_stopped_stack_on_this_host_is_gone_a_live_or_foreign_one_is_not(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    live = stack_identity("dev", Settings(state_dir=tmp_path))

    assert stack_gone(f"{dead.pid}@{host} research dev {tmp_path}")
    assert not stack_gone(live)  # this process
    assert not stack_gone(f"{dead.pid}@another-host.example research dev /srv/state")
    assert not stack_gone("a worker") and not stack_gone("12345@")
