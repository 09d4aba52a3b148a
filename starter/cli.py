"""The `research` command: argument parsing, and every failure as one sentence with an exit code."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import psycopg
from pydantic import ValidationError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from runtime.settings import Settings, SettingsError
from runtime.temporal import DevServerError, TemporalUnavailable, settle_before_exit
from starter.errors import EXIT_FAILED, EXIT_USAGE, CliError
from workflows.validation import describe_validation

Command = Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="research", description="Bounded, durable research runs with cited evidence."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser("demo", help="run the sample brief on the embedded stack, offline")
    demo.add_argument("--brief", help="another brief file (default: the HarborQ sample)")
    commands.add_parser("dev", help="embedded Temporal + PostgreSQL + worker until Ctrl-C")
    commands.add_parser("init-db", help="apply the ledger's SQL migrations")
    worker = commands.add_parser(
        "worker", help="run worker processes on the task queue until Ctrl-C or SIGTERM"
    )
    worker.add_argument(
        "--processes", type=int, default=1, metavar="N", help="worker processes (default 1)"
    )
    corpus = commands.add_parser("corpus", help="the local document corpus")
    corpus_commands = corpus.add_subparsers(dest="corpus_command", required=True)
    index = corpus_commands.add_parser(
        "index", help="index a folder (one sub-folder per host, or --host) for search and reading"
    )
    index.add_argument("dir", metavar="DIR")
    index.add_argument(
        "--host", help="DIR holds the pages of this one host (https://HOST/<path in DIR>)"
    )
    start = commands.add_parser("start", help="validate a brief and start a run")
    start.add_argument("brief", metavar="BRIEF.json")
    start.add_argument("--id", help="workflow id (default: research-<8 hex>)")
    start.add_argument("--wait", action="store_true", help="follow the run and print its report")
    for name, text in (("status", "a run's counters"), ("report", "a run's report (Markdown)")):
        commands.add_parser(name, help=text).add_argument("id", metavar="ID")
    _add_signal(commands)
    _add_extend(commands)
    commands.add_parser("cancel", help="cancel a run (it keeps a partial report)").add_argument(
        "id", metavar="ID"
    )
    search = commands.add_parser(
        "search", help="the ranked hits the agent would get for QUERY on the allowed hosts"
    )
    search.add_argument("query", nargs="+", metavar="QUERY")
    search.add_argument(
        "--allow", action="append", required=True, metavar="HOST", help="an allowed host (repeat)"
    )
    search.add_argument("--json", action="store_true", help="the tool result's data, as JSON")
    _add_eval(commands)
    check = commands.add_parser("check-url", help="would the fetcher read URL? (allowed/refused)")
    check.add_argument("url", metavar="URL")
    check.add_argument(
        "--allow", action="append", required=True, metavar="HOST", help="an allowed host (repeat)"
    )
    return parser


def _add_eval(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluate = commands.add_parser(
        "eval", help="run labelled golden briefs per arm and table completion, recall, precision"
    )
    evaluate.add_argument("golden", nargs="+", metavar="GOLDEN.json")
    evaluate.add_argument(
        "--arms", default="fixed,offline", help="policies to run: fixed, offline (default: both)"
    )
    evaluate.add_argument(
        "--model", action="append", metavar="NAME", help="also run this model (repeat to compare)"
    )
    evaluate.add_argument("--corpus", metavar="DIR", help="the corpus folder (default: the set's)")
    evaluate.add_argument("--limit", type=int, metavar="N", help="only the first N briefs per set")
    evaluate.add_argument(
        "--out", metavar="PATH", help="write PATH.md and PATH.json (default: .research/eval/…)"
    )


def _add_signal(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    signal = commands.add_parser("signal", help="steer a running run")
    signal.add_argument("id", metavar="ID")
    kinds = signal.add_subparsers(dest="signal", required=True)
    kinds.add_parser("guidance", help="advice for the model").add_argument("text", nargs="+")
    kinds.add_parser("seed", help="more URLs it may read").add_argument("urls", nargs="+")
    finish = kinds.add_parser("finish", help="stop now with what is recorded")
    finish.add_argument("--reason", default="operator asked to finish")


def _add_extend(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    extend = commands.add_parser(
        "extend", help="raise a running run's limits (new absolute values)"
    )
    extend.add_argument("id", metavar="ID")
    for flag in ("steps", "searches", "pages", "tokens"):
        extend.add_argument(f"--{flag}", type=int, metavar="N")
    extend.add_argument("--deadline", type=int, metavar="SECONDS")


def _command(args: argparse.Namespace) -> Command:
    from starter import check, evaluation, local, runs, search, workers

    table: dict[str, Command] = {
        "demo": local.demo,
        "dev": local.dev,
        "init-db": local.init_db,
        "corpus": local.corpus_index,
        "start": runs.start,
        "status": runs.status,
        "report": runs.report,
        "signal": runs.signal,
        "extend": runs.extend,
        "cancel": runs.cancel,
        "check-url": check.check_url,
        "search": search.search,
        "eval": evaluation.evaluate,
        "worker": workers.workers,
    }
    return table[args.command]


async def _settled(command: Coroutine[Any, Any, int]) -> int:
    try:
        return await command
    finally:
        await settle_before_exit()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        return asyncio.run(_settled(_command(args)(settings, args)))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message, code = _explain(error)
        print(f"error: {message}", file=sys.stderr)
        return code


def _explain(error: Exception) -> tuple[str, int]:
    """One sentence and an exit code for every failure a user can cause or meet."""
    if isinstance(error, CliError):
        return str(error), error.exit_code
    if isinstance(error, SettingsError):
        return str(error), EXIT_USAGE
    if isinstance(error, ValidationError):
        return describe_validation(error), EXIT_USAGE
    if isinstance(error, TemporalUnavailable | DevServerError):
        return str(error), EXIT_FAILED
    if isinstance(error, ApplicationError):  # a search provider refused or failed
        return error.message, EXIT_FAILED
    if isinstance(error, RPCError):
        return f"Temporal refused the request: {error.message}", EXIT_FAILED
    if isinstance(error, psycopg.Error):
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return f"the database failed: {detail} (check DATABASE_URL)", EXIT_FAILED
    raise error


if __name__ == "__main__":
    sys.exit(main())
