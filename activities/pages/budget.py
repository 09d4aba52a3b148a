"""A CPU-time budget for page extraction (I/O at the edge): a fetched page that would take more
than its budget of CPU to turn into text (a PDF of millions of drawing operators, say) is stopped
there, instead of spending a worker's CPU for as long as the page likes.

The work runs in a thread of its own; a watchdog reads that thread's CPU clock and, once the budget
is spent, raises `OverBudget` inside it with `PyThreadState_SetAsyncExc` (CPython's C API, through
ctypes: the only way to stop pure-Python work such as pypdf's content-stream parser from outside).
`OverBudget` is a BaseException, so the parsers' own `except Exception` cannot swallow it.
tests/integration/test_extraction_budget.py proves a slow PDF is stopped within its budget.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")

CHECK_SECONDS = 0.02  # how often the watchdog reads the thread's CPU clock


class OverBudget(BaseException):
    """Raised inside the working thread when its CPU budget is spent."""


class ExtractionOverBudget(Exception):
    """The work took more than `seconds` of CPU time and was stopped."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"more than {seconds:g} s of CPU time")
        self.seconds = seconds


class _Work(Generic[T]):
    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.lock = threading.Lock()
        self.finished = False
        self.stopped = False
        self.result: T | None = None
        self.error: BaseException | None = None
        self.clock = 0  # this thread's CPU clock, read by the watchdog
        self.started = threading.Event()

    def run(self) -> None:
        self.clock = time.pthread_getcpuclockid(threading.get_ident())
        self.started.set()
        try:
            try:
                self.result = self.work()
            except OverBudget:
                self.stopped = True
            except BaseException as error:  # handed to the caller's thread as it is
                self.error = error
            finally:
                with self.lock:
                    self.finished = True
        except OverBudget:  # it landed as the work ended, before `finished` was set
            self.stopped = True


def run_within_cpu_budget(work: Callable[[], T], seconds: float) -> T:
    """`work()`'s result, computed in a thread of its own; ExtractionOverBudget once that thread
    has used `seconds` of CPU time. Blocks the caller (run it off the event loop)."""
    job = _Work(work)
    thread = threading.Thread(target=job.run, name="page-extraction", daemon=True)
    thread.start()
    job.started.wait()
    assert thread.ident is not None
    while True:
        thread.join(CHECK_SECONDS)
        if not thread.is_alive():
            break
        with job.lock:
            if job.finished:
                continue
            try:
                used = time.clock_gettime(job.clock)
            except OSError:  # the thread is ending
                continue
            if used > seconds:
                _raise_in(thread.ident)
    if job.stopped:
        raise ExtractionOverBudget(seconds)
    if job.error is not None:
        raise job.error
    return cast(T, job.result)  # set: the work returned


def _raise_in(thread_id: int) -> None:
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async_exc(ctypes.c_ulong(thread_id), ctypes.py_object(OverBudget))
