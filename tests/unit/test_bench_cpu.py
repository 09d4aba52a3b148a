"""bench.cpu: the resident memory and CPU groups the bench reads from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench import cpu


def test_resident_memory_is_this_process_s_and_none_for_a_process_gone() -> None:
    own = cpu.resident([os.getpid()])
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as status:
        rss_kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    assert abs(own - rss_kb * 1024) < 16 * 1024 * 1024  # the same figure, read a moment apart
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    assert cpu.resident([int(finished.stdout)]) == 0
    assert cpu.resident([os.getpid(), int(finished.stdout)]) >= own // 2


def test_a_named_process_is_a_group_of_its_own(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        snapshot = cpu.snapshot(tmp_path, [os.getpid()], {cpu.MODEL: child.pid})
    finally:
        child.kill()
        child.wait()

    assert set(snapshot.groups[cpu.MODEL]) == {child.pid}
    assert set(snapshot.groups[f"{cpu.WORKER} 1"]) >= {os.getpid()}
    assert cpu.THIS in snapshot.groups
