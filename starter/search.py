"""`research search`: the configured search provider's ranked hits, as the agent would get them."""

from __future__ import annotations

import argparse
import json

from activities.search import keep_allowed
from composition.ledger import open_existing_ledger
from composition.providers import open_search
from runtime.settings import Settings
from starter.errors import EXIT_USAGE, CliError
from workflows.hosts import allowed_host, host_matches
from workflows.tools import search_data
from workflows.tools.search_web import SearchInput

NOTHING_INDEXED = (
    "no results: the corpus has no document on these hosts (index a folder laid out as "
    "<host>/<path> with `research corpus index DIR`)"
)
NOTHING_MATCHED = (
    "no results: no document on these hosts matches the query ({hosts} indexed; words as common "
    "as `the` or `and` match nothing, so name what you look for)"
)


async def search(settings: Settings, args: argparse.Namespace) -> int:
    """Print the hits (numbered, or `--json`: the tool result's `data` the model sees)."""
    try:
        allowed = [allowed_host(host) for host in args.allow]
    except ValueError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    query = " ".join(args.query).strip()
    if not query:
        raise CliError("the query is empty: give the words to search for", EXIT_USAGE)
    limit = SearchInput.model_fields["max_results"].default
    async with open_existing_ledger(settings) as ledger, open_search(settings, ledger) as provider:
        hits = keep_allowed(await provider.search(query, allowed, limit), allowed, limit)
        indexed = await ledger.corpus_folders() if not hits else {}
    data = search_data(hits)
    if args.json:
        # `kind` tells result models apart in the ledger; the model is never sent it.
        shown = data.model_dump(mode="json", exclude={"kind"})
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print(_nothing_found(settings, allowed, indexed))
        return 0
    for rank, hit in enumerate(data.results, start=1):
        print(f"{rank}. {hit.title or '(no title)'}\n   {hit.url}\n   {hit.snippet}")
    return 0


def _nothing_found(settings: Settings, allowed: list[str], indexed: dict[str, str]) -> str:
    """Why a search found nothing: for the corpus, whether it holds any page on these hosts."""
    if settings.search_provider != "corpus":
        return "no results"
    hosts = [host for host in indexed if host_matches(host, allowed)]
    if not hosts:
        return NOTHING_INDEXED
    return NOTHING_MATCHED.format(hosts=", ".join(hosts))
