"""`research search`: the configured search provider's ranked hits, as the agent would get them."""

from __future__ import annotations

import argparse
import json

from activities.search import keep_allowed
from runtime.settings import Settings
from starter.devstack import open_database, open_ledger
from starter.errors import EXIT_USAGE, CliError
from starter.providers import open_search
from workflows.contracts import SearchInput
from workflows.hosts import normalise_host
from workflows.tools import search_data

NOTHING_INDEXED = (
    "no results: the corpus has no document on these hosts (index a folder laid out as "
    "<host>/<path> with `research corpus index DIR`)"
)


async def search(settings: Settings, args: argparse.Namespace) -> int:
    """Print the hits (numbered, or `--json`: the tool result's `data` the model sees)."""
    try:
        allowed = [normalise_host(host, allow_wildcard=True) for host in args.allow]
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    query = " ".join(args.query).strip()
    if not query:
        raise CliError("the query is empty: give the words to search for", EXIT_USAGE)
    limit = SearchInput.model_fields["max_results"].default
    async with (
        open_database(settings) as url,
        open_ledger(url) as ledger,
        open_search(settings, ledger) as provider,
    ):
        hits = keep_allowed(await provider.search(query, allowed, limit), allowed, limit)
    data = search_data(hits)
    if args.json:
        # `kind` tells result models apart in the ledger; the model is never sent it.
        shown = data.model_dump(mode="json", exclude={"kind"})
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print(NOTHING_INDEXED if settings.search_provider == "corpus" else "no results")
        return 0
    for rank, hit in enumerate(data.results, start=1):
        print(f"{rank}. {hit.title or '(no title)'}\n   {hit.url}\n   {hit.snippet}")
    return 0
