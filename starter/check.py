"""`research check-url`: the fetcher's policy for one URL, so a user can debug a brief's scope."""

from __future__ import annotations

import argparse

from activities.pages.fetch import check_fetchable
from activities.pages.guard import FetchRefused
from runtime.settings import Settings
from starter.errors import EXIT_USAGE, CliError
from workflows.hosts import allowed_host


async def check_url(settings: Settings, args: argparse.Namespace) -> int:
    """Print `allowed (...)` and return 0, or `refused: <reason>` and return 2."""
    try:
        allowed = [allowed_host(host) for host in args.allow]
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    try:
        where = await check_fetchable(settings.fetch_options(), args.url, allowed)
    except FetchRefused as refused:
        print(f"refused: {refused}")
        return EXIT_USAGE
    print(f"allowed ({where})")
    return 0
