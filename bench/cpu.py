"""CPU seconds (and resident memory) of the processes that serve a bench section, read from
/proc (Linux only).

The groups: the Temporal dev server and the embedded PostgreSQL (its postmaster and backends) that
`embedded_stack` started under the bench's state folder, the worker processes, any other named
process (the fake model server), and this process (the client, and whatever else runs in it). A
group's figure is the CPU its processes used between two snapshots; a backend that exited in
between counts through its parent's reaped-children time. Figures only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
SERVER = "Temporal dev server"
DATABASE = "PostgreSQL"
THIS = "bench process (client)"
WORKER = "worker process"
MODEL = "fake model server"
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class _Process:
    parent: int
    ticks: int  # user + system, own and (for a parent) of its reaped children
    command: list[str]


@dataclass(frozen=True)
class Snapshot:
    """CPU ticks so far of each process of each group, by pid."""

    groups: dict[str, dict[int, int]]


def snapshot(
    state_dir: Path, workers: Iterable[int] = (), named: Mapping[str, int] | None = None
) -> Snapshot:
    processes = _processes()
    groups = {
        SERVER: _family(processes, _started_here(processes, state_dir, "start-dev")),
        DATABASE: _family(processes, _started_here(processes, state_dir, "postgres")),
    }
    for number, pid in enumerate(workers, start=1):
        groups[f"{WORKER} {number}"] = _family(processes, [pid])
    for name, pid in (named or {}).items():
        groups[name] = _family(processes, [pid])
    own = _stat(os.getpid(), children=False)  # the dev server is our child: not its time
    groups[THIS] = {os.getpid(): own.ticks} if own else {}
    return Snapshot(groups)


def used(before: Snapshot, after: Snapshot) -> dict[str, float]:
    """CPU seconds each group used between two snapshots (groups not found are left out)."""
    seconds = {}
    for group, now in after.groups.items():
        if now:
            then = before.groups.get(group, {})
            seconds[group] = sum(t - then.get(pid, 0) for pid, t in now.items()) / TICKS
    return seconds


def resident(pids: Iterable[int]) -> int:
    """The resident memory of the processes together, in bytes (0 for one that exited)."""
    total = 0
    for pid in pids:
        try:
            pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        total += pages * PAGE
    return total


def cores() -> int:
    return len(os.sched_getaffinity(0))


def _processes() -> dict[int, _Process]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            process = _stat(int(entry))
            if process is not None:
                found[int(entry)] = process
    return found


def _stat(pid: int, *, children: bool = True) -> _Process | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:  # exited meanwhile
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) "; the name may hold spaces
    times = [int(value) for value in fields[11:15]]  # utime, stime, cutime, cstime
    ticks = sum(times) if children else times[0] + times[1]
    return _Process(int(fields[1]), ticks, command.split("\0"))


def _started_here(processes: dict[int, _Process], state_dir: Path, program: str) -> list[int]:
    """The processes whose command names `program` and a path in the state folder."""
    inside = str(state_dir) + os.sep
    return [
        pid
        for pid, process in processes.items()
        if any(Path(arg).name == program or arg == program for arg in process.command[:3])
        and any(arg.startswith(inside) for arg in process.command)
    ]


def _family(processes: dict[int, _Process], roots: list[int]) -> dict[int, int]:
    members, waiting = set(roots), list(roots)
    while waiting:
        parent = waiting.pop()
        children = [pid for pid, p in processes.items() if p.parent == parent]
        waiting += [pid for pid in children if pid not in members]
        members.update(children)
    return {pid: processes[pid].ticks for pid in members if pid in processes}
