"""`search_web`: find pages on the allowed hosts (URLs, titles, snippets; never evidence)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from workflows.activity import Activity
from workflows.cleaning import echo
from workflows.models import SearchHit
from workflows.scope import RunScope
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import Executed, Slimming, ToolContext, ToolSpec

NAME = "search_web"
# The prompt shows an older search with its URLs only (snippets serve one choice of page), and
# even the newest once it is this many steps back.
RECENT_SEARCH = 2
NOTE = "snippets are for discovery only: read a page before recording evidence"


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=400)

    @field_validator("query")
    @classmethod
    def _words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the query is blank")
        return value


class SearchInput(BaseModel):
    """The search activity's request: a query, searched on the brief's hosts only."""

    scope: RunScope
    query: str
    allowed_hosts: list[str]
    max_results: int = 8


class SearchResult(BaseModel):
    hits: list[SearchHit] = Field(default_factory=list)
    provider: str = ""


SEARCH_WEB = "search_web"  # the activity's registered name (worker.py)
SEARCH_WEB_ACTIVITY = Activity(
    SEARCH_WEB, SearchInput, SearchResult, "when_search_is_local", heartbeat=True
)


class SearchResultItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    title: str = ""
    snippet: str = ""
    also: list[str] = Field(default_factory=list)  # near-duplicates of this page, readable too

    @model_serializer(mode="wrap")
    def _without_empty_also(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """No `also` when there is none: most results have no near-duplicate."""
        data: dict[str, object] = handler(self)
        if not self.also:
            data.pop("also", None)
        return data


class SearchData(ToolData):
    """Results on allowed hosts; snippets are for discovery only."""

    kind: Literal["search_results"] = "search_results"
    results: list[SearchResultItem]
    note: str = ""


def search_data(hits: list[SearchHit]) -> SearchData:
    """What `search_web` returns to the model for these hits (`research search` prints it too)."""
    results = [
        SearchResultItem(url=hit.url, title=hit.title, snippet=hit.snippet, also=hit.also)
        for hit in hits
    ]
    return SearchData(results=results, note=NOTE)


async def run(args: SearchArgs, tool: ToolContext) -> Executed:
    state = tool.state
    if not state.take_search():
        return Executed(ok=False, error="search budget exhausted: read or record instead")
    found = await tool.activity(
        SEARCH_WEB_ACTIVITY,
        SearchInput(
            scope=tool.scope(),
            query=args.query,
            allowed_hosts=state.brief.allowed_hosts,
        ),
        summary=f"search: {args.query[:80]}",
    )
    state.discover(found.hits)  # a near-duplicate listed under a result can be read too
    data = search_data(found.hits)
    return Executed(data, insufficient=not data.results)


def describe(args: SearchArgs, data: SearchData) -> str:
    return f"search {echo(args.query, 50)!r}: {len(data.results)} results"


def cut(data: SearchData) -> SearchData:
    """Only the URLs: they say enough to read a page again."""
    results = [item.model_copy(update={"snippet": "", "title": ""}) for item in data.results]
    return data.model_copy(update={"results": results})


SPEC = ToolSpec(
    name=NAME,
    description="Find pages on the allowed hosts: URLs, titles, snippets (never evidence).",
    arguments=SearchArgs,
    parameters={"query": "Search terms."},
    verbatim=frozenset(),
    results=(SearchData,),
    runs=SEARCH_WEB_ACTIVITY,
    run=run,
    describe=describe,
    compact=None,
    slimming=Slimming(cut, keep_latest=1, recent_steps=RECENT_SEARCH),
    untrusted=None,
    rests_on=None,
    label=NAME,
)
