"""The `research` command: argument parsing, and every failure as one sentence with an exit code."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

from starter.errors import EXIT_FAILED, EXIT_USAGE, CliError

if TYPE_CHECKING:
    import argparse

    from runtime.settings import Settings

# Start-up time (bench/cli_startup.py): `status ID` of a run that has ended imports only this
# module and starter.described (QUICK), no argparse; `--version` and `--help` this module and
# argparse; a command imports the settings and what it uses (Temporal's client, pydantic,
# psycopg, the workflow's models) when it runs. The `--status` choices are RunStatus's values,
# spelled here so the parser needs no pydantic (tests/unit/test_cli_startup.py keeps them equal).
RUN_STATUSES = ("running", "completed", "incomplete", "cancelled", "failed")

Command = Callable[["Settings", "argparse.Namespace"], Coroutine[Any, Any, int]]
# A command's answer from its words alone, or None: then the parser and the command run (QUICK).
Quick = Callable[[Sequence[str]], "int | None"]
HELP_WIDTH = 78
DIST_INFO_PREFIX = "research_agent-"  # its folder in site-packages: research_agent-0.1.0.dist-info
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports when the reader of a pipe left


def build_parser() -> argparse.ArgumentParser:
    import argparse  # here, not at the top: `research status ID` may answer without it (QUICK)

    parser = argparse.ArgumentParser(
        prog="research", description="Bounded, durable research runs with cited evidence."
    )
    parser.add_argument("--version", action=_version_action(), help="show the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = _add(commands, "demo", "run the sample brief on the embedded stack, offline")
    demo.add_argument("--brief", help="another brief file (default: the HarborQ sample)")
    demo.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait SECONDS before each step (up to 20): a run to watch and steer meanwhile",
    )
    _add(commands, "dev", "embedded Temporal + PostgreSQL + worker until Ctrl-C")
    _add(commands, "init-db", "apply the ledger's migrations, create and grant its roles")
    worker = _add(commands, "worker", "run worker processes on the task queue until SIGTERM")
    worker.add_argument(
        "--processes", type=int, default=1, metavar="N", help="worker processes (default 1)"
    )
    worker.add_argument(
        "--debug", action="store_true", help="log a failed activity attempt with its traceback"
    )
    _add_corpus(commands)
    start = _add(commands, "start", "validate a brief and start a run")
    start.add_argument("brief", metavar="BRIEF.json")
    start.add_argument(
        "--id", help="workflow id (default: research-<words of the question>-<6 hex>)"
    )
    start.add_argument("--wait", action="store_true", help="follow the run and print its report")
    start.add_argument(
        "--lane",
        choices=("auto", "fixed", "agent"),
        help="the brief's lane (default: the brief's, else auto with a model)",
    )
    _add_review(commands)
    _add_signal(commands)
    _add_extend(commands)
    _add(commands, "cancel", "cancel a run (it keeps a partial report)").add_argument(
        "id", metavar="ID"
    )
    search = _add(commands, "search", "the hits the agent would get for QUERY on allowed hosts")
    search.add_argument("query", nargs="+", metavar="QUERY")
    search.add_argument(
        "--allow", action="append", required=True, metavar="HOST", help="an allowed host (repeat)"
    )
    search.add_argument("--json", action="store_true", help="the tool result's data, as JSON")
    _add_eval(commands)
    check = _add(commands, "check-url", "would the fetcher read URL? (allowed/refused)")
    check.add_argument("url", metavar="URL")
    check.add_argument(
        "--allow", action="append", required=True, metavar="HOST", help="an allowed host (repeat)"
    )
    return parser


Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _add(commands: Commands, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand whose --help page has its description and examples (`starter.usage`)."""
    import argparse
    import textwrap

    from starter.usage import USAGE, epilog

    return commands.add_parser(
        name,
        help=summary,
        description=textwrap.fill(USAGE[name][0], HELP_WIDTH),
        epilog=epilog(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _version_action() -> type[argparse.Action]:
    import argparse

    class Version(argparse.Action):
        """`--version`, reading the installed version only when asked (importlib.metadata costs
        every other command tens of milliseconds)."""

        def __init__(
            self, option_strings: Sequence[str], dest: str, help: str | None = None
        ) -> None:
            super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

        def __call__(
            self, parser: argparse.ArgumentParser, *args: object, **kwargs: object
        ) -> NoReturn:
            print(f"research {_version()}")
            parser.exit()

    return Version


def _version() -> str:
    """The installed version, from its `.dist-info` folder's name (`{name}-{version}`, the wheel
    format's rule) without importlib.metadata, whose email parser costs `--version` 30 ms."""
    for entry in sys.path:
        with contextlib.suppress(OSError):
            for name in os.listdir(entry or "."):
                if name.startswith(DIST_INFO_PREFIX) and name.endswith(".dist-info"):
                    return name.removeprefix(DIST_INFO_PREFIX).removesuffix(".dist-info")
    from importlib import metadata  # installed another way (an egg-info, ...)

    try:
        return metadata.version("research-agent")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _add_corpus(commands: Commands) -> None:
    corpus = _add(commands, "corpus", "the local document corpus")
    corpus_commands = corpus.add_subparsers(dest="corpus_command", required=True)
    index = _add(corpus_commands, "index", "index a folder for search and reading")
    index.add_argument("dir", metavar="DIR")
    index.add_argument(
        "--host", help="DIR holds the pages of this one host (https://HOST/<path in DIR>)"
    )


def _add_review(commands: Commands) -> None:
    """Commands that look at runs: runs, status, report, export, audit, replay, rerun."""
    runs = _add(commands, "runs", "recent runs (and those no worker has taken yet: pending)")
    runs.add_argument("--status", choices=(*RUN_STATUSES, "pending"))
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="at most N (default 20)")
    runs.add_argument("--json", action="store_true", help="a JSON list")
    status = _add(commands, "status", "a run's counters")
    status.add_argument("id", metavar="ID")
    status.add_argument("--json", action="store_true", help="as JSON")
    report = _add(commands, "report", "a run's report (Markdown)")
    report.add_argument("id", metavar="ID")
    shape = report.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="as JSON")
    shape.add_argument("--html", action="store_true", help="as one self-contained HTML page")
    report.add_argument("-o", "--output", metavar="FILE", help="write it to FILE, not stdout")
    export = _add(commands, "export", "a run's report, evidence and snapshots in a folder")
    export.add_argument("id", metavar="ID")
    export.add_argument("dir", metavar="DIR")
    export.add_argument("--no-history", action="store_true", help="do not ask Temporal")
    audit = _add(commands, "audit", "check a run's ledger, report and history (a table)")
    audit.add_argument("target", metavar="ID|EXPORT_DIR")
    audit.add_argument(
        "--history",
        metavar="FILE",
        action="append",
        help="the workflow history as JSON (again for each execution of a continued run, oldest "
        "first)",
    )
    audit.add_argument("--no-history", action="store_true", help="skip the history checks")
    audit.add_argument("--json", action="store_true", help="the results as JSON")
    replay = _add(commands, "replay", "replay a run's history against the current code")
    replay.add_argument("target", metavar="ID|HISTORY.json")
    rerun = _add(commands, "rerun", "run a run again on its recorded decisions, then compare")
    rerun.add_argument("id", metavar="ID")
    rerun.add_argument(
        "--id", dest="rerun_id", metavar="RERUN_ID", help="the rerun's id (default: ID-rerun-…)"
    )
    rerun.add_argument("--json", action="store_true", help="both runs and the differences")


def _add_eval(commands: Commands) -> None:
    evaluate = _add(commands, "eval", "score policies and models on labelled golden briefs")
    evaluate.add_argument("golden", nargs="+", metavar="GOLDEN.json")
    evaluate.add_argument(
        "--arms",
        default="fixed,offline",
        help="policies to run: fixed, offline (default: both); or lanes: fixed, agent, auto "
        "(with a model each runs on it in that lane)",
    )
    evaluate.add_argument(
        "--model", action="append", metavar="NAME", help="also run this model (repeat to compare)"
    )
    evaluate.add_argument("--corpus", metavar="DIR", help="the corpus folder (default: the set's)")
    evaluate.add_argument("--limit", type=int, metavar="N", help="only the first N briefs per set")
    evaluate.add_argument(
        "--recorded",
        action="append",
        metavar="FOLDER",
        help="also replay this recorded real-model run's decisions (repeat for more)",
    )
    evaluate.add_argument(
        "--out", metavar="PATH", help="write PATH.md and PATH.json (default: .research/eval/…)"
    )
    evaluate.add_argument(
        "--figures", metavar="PATH", help="also write the figures alone, dated, to PATH (.json)"
    )


def _add_signal(commands: Commands) -> None:
    signal = _add(commands, "signal", "steer a running run")
    signal.add_argument("id", metavar="ID")
    kinds = signal.add_subparsers(dest="signal", required=True)
    kinds.add_parser("guidance", help="advice for the model").add_argument("text", nargs="+")
    kinds.add_parser("seed", help="more URLs it may read").add_argument("urls", nargs="+")
    escalate = kinds.add_parser("escalate", help="hand a fixed-lane run to the agent")
    escalate.add_argument("--reason", default="")
    finish = kinds.add_parser("finish", help="stop now with what is recorded")
    finish.add_argument("--reason", default="operator asked to finish")


def _add_extend(commands: Commands) -> None:
    extend = _add(commands, "extend", "raise a running run's limits (new absolute values)")
    extend.add_argument("id", metavar="ID")
    for flag in ("steps", "searches", "pages", "tokens"):
        extend.add_argument(f"--{flag}", type=int, metavar="N")
    extend.add_argument("--deadline", type=int, metavar="SECONDS")


# command -> (module, function): only the module of the command that runs is imported.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("starter.local", "demo"),
    "dev": ("starter.local", "dev"),
    "init-db": ("starter.local", "init_db"),
    "corpus": ("starter.local", "corpus_index"),
    "start": ("starter.runs", "start"),
    "runs": ("starter.review", "runs"),
    "status": ("starter.status", "status"),
    "report": ("starter.review", "report"),
    "export": ("starter.export", "export"),
    "audit": ("starter.audit.command", "audit"),
    "replay": ("starter.replay", "replay"),
    "rerun": ("starter.rerun", "rerun"),
    "signal": ("starter.steer", "signal"),
    "extend": ("starter.steer", "extend"),
    "cancel": ("starter.steer", "cancel"),
    "check-url": ("starter.check", "check_url"),
    "search": ("starter.search", "search"),
    "eval": ("starter.evaluation", "evaluate"),
    "worker": ("starter.workers", "workers"),
}


# First word -> (module, function) answering the command's words before the parser, the settings
# and an event loop are built, when it can (None: it cannot, and the parser reads the words):
# `research status ID` of a run that has ended, through the Temporal CLI (`starter.described`).
QUICK: dict[str, tuple[str, str]] = {
    "status": ("starter.described", "quick_status"),
}


def _quick(words: Sequence[str]) -> Quick | None:
    if not words or words[0] not in QUICK:
        return None
    import importlib

    module, name = QUICK[words[0]]
    quick: Quick = getattr(importlib.import_module(module), name)
    return quick


def _command(args: argparse.Namespace) -> Command:
    import importlib

    module, name = COMMANDS[args.command]
    command: Command = getattr(importlib.import_module(module), name)
    return command


async def _settled(command: Coroutine[Any, Any, int]) -> int:
    from runtime.telemetry import telemetry

    # Telemetry (when an exporter is configured) is flushed and shut down before the exit.
    async with telemetry():
        try:
            return await command
        finally:
            # A command that read only the ledger loaded no Temporal client; under `entry` the
            # process leaves without finalising, so the client needs no time to settle.
            if "runtime.temporal" in sys.modules and not _exits_at_once:
                from runtime.temporal import settle_before_exit

                await settle_before_exit()


_exits_at_once = False  # set by `entry`, the console script


def entry() -> int:
    """The `research` console script: `main`, then, when the command opened a Temporal client,
    out of the process at once.

    The SDK's core threads can still call into Python while the interpreter finalises, which
    aborts a short-lived client (PyGILState_Release fatal error or a segfault,
    temporalio/sdk-python#300). `main` called in a process that goes on waits 0.2 s for them
    (`settle_before_exit`); here the process does what finalisation would have done for the
    command (joins its threads, runs the atexit handlers, flushes) and leaves with os._exit, so
    nothing is finalised and nothing waits (bench/cli_startup.py measures `research status`)."""
    global _exits_at_once
    _exits_at_once = True
    code = main()
    if "runtime.temporal" not in sys.modules:
        return code
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # the reader left, or closed
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not at exit: a reader that left is seen while we can act
        return code
    except BrokenPipeError:
        # The reader left (`research report ID | head`): stop quietly, as `cat` does, and keep
        # the interpreter's last flush from failing too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _run(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        quick = _quick(words)
        answered = quick(words) if quick is not None else None
        if answered is not None:
            return answered
        args = _parsed(words)
        from runtime.settings import Settings

        settings = Settings.from_env()
        import asyncio

        return asyncio.run(_settled(_command(args)(settings, args)))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except Exception as error:
        message, code = _explain(error)
        print(f"error: {message}", file=sys.stderr)
        return code


def _parsed(words: Sequence[str]) -> argparse.Namespace:
    try:
        return build_parser().parse_args(words)
    except SystemExit:  # --help, --version or a usage error: argparse printed it
        sys.stdout.flush()
        raise


def _explain(error: Exception) -> tuple[str, int]:
    """One sentence and an exit code for every failure a user can cause or meet.

    An error can only be of a type whose module the command loaded: a module not loaded is not
    imported here just to ask (a refusal of `research runs` would load Temporal's client)."""
    if isinstance(error, CliError):
        return str(error), error.exit_code
    if _loaded("runtime.settings"):
        from runtime.settings import SettingsError

        if isinstance(error, SettingsError):
            return str(error), EXIT_USAGE
    if _loaded("pydantic"):
        from pydantic import ValidationError

        from workflows.validation import describe_validation

        if isinstance(error, ValidationError):
            return describe_validation(error), EXIT_USAGE
    if _loaded("runtime.database"):
        from runtime.database import DatabaseError

        if isinstance(error, DatabaseError):
            return str(error), EXIT_FAILED
    if _loaded("runtime.temporal"):
        from runtime.temporal import DevServerError, NamespaceNotReady, TemporalUnavailable

        if isinstance(error, TemporalUnavailable | DevServerError | NamespaceNotReady):
            return str(error), EXIT_FAILED
    if _loaded("temporalio"):
        from temporalio.exceptions import ApplicationError
        from temporalio.service import RPCError

        if isinstance(error, ApplicationError):  # a search provider refused or failed
            return error.message, EXIT_FAILED
        if isinstance(error, RPCError):
            return f"Temporal refused the request: {error.message}", EXIT_FAILED
    if _loaded("psycopg"):
        import psycopg

        if isinstance(error, psycopg.Error):
            detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
            if isinstance(error, psycopg.errors.UndefinedColumn | psycopg.errors.UndefinedTable):
                # Code newer than the ledger's migrations (a pull while `research dev` ran).
                return (
                    f"the ledger is older than this code ({detail}): `research init-db` applies "
                    "its migrations (`research dev` and the worker do when they start)",
                    EXIT_FAILED,
                )
            return f"the database failed: {detail} (check DATABASE_URL)", EXIT_FAILED
    raise error


def _loaded(module: str) -> bool:
    return module in sys.modules


if __name__ == "__main__":
    sys.exit(entry())
