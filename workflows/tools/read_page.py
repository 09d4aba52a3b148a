"""`read_page`: a window of a page's passages, by URL (fetched once) or by stored source id."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.activity import Activity
from workflows.hosts import MAX_URL_CHARS
from workflows.models import MAX_ID_CHARS, Passage, RefusedSeed, SourceRef
from workflows.scope import RunScope
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import (
    Executed,
    Slimming,
    ToolContext,
    ToolSpec,
    Untrusted,
    first_line,
)

NAME = "read_page"
COMPACTED = "[compacted to save context: read_page this source again to see it]"
# The prompt shows the newest WHOLE_WINDOWS windows whole while they are among the last
# RECENT_STEPS steps (a window serves its evidence records); older ones show passage ids and
# first lines (the model can cite a passage_id, or read the page again: no fetch).
WHOLE_WINDOWS = 2
RECENT_STEPS = 3
OLDER_WINDOW = "older window: passage ids and first lines only; read_page again for the text"


class ReadPageArgs(ToolArgs):
    url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    source_id: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    offset: int = Field(default=0, ge=0, le=1_000_000_000)
    find: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _one_target(self) -> ReadPageArgs:
        if (self.url is None) == (self.source_id is None):
            raise ValueError("give exactly one of url or source_id")
        return self


class ReadPageInput(BaseModel):
    """Read a window of a source. `fetch` is True only for a URL not yet stored for this run."""

    scope: RunScope
    source_id: str  # assigned by the workflow ("S3") before the fetch
    url: str
    allowed_hosts: list[str]
    fetch: bool
    offset: int = 0
    find: str | None = None
    window_passages: int = 6  # at most this many passages,
    window_chars: int = 3_000  # and no more text than this past the first passage


class ReadPageResult(BaseModel):
    source: SourceRef
    passages: list[Passage] = Field(default_factory=list)
    next_offset: int | None = None
    total_chars: int = 0
    truncated: bool = False  # the snapshot was cut at its size cap
    # with `find`: more passages hold it past the window (`find` at `next_offset` shows them)
    more_matches: bool = False


READ_PAGE = "read_page"  # the activity's registered name (worker.py)
READ_PAGE_ACTIVITY = Activity(
    READ_PAGE, ReadPageInput, ReadPageResult, "when_page_is_local", heartbeat=True
)


class CheckSeedsInput(BaseModel):
    """The brief's seed URLs, each read once through the fetcher when the run starts, to learn
    which cannot be read: nothing is stored and no page fetch is counted (the model's own read of
    a seed is the fetch that counts, as for any URL)."""

    scope: RunScope
    urls: list[str]
    allowed_hosts: list[str]


class CheckSeedsResult(BaseModel):
    unreadable: list[RefusedSeed] = Field(default_factory=list)  # each with why, in brief order


CHECK_SEEDS = "check_seeds"  # the activity's registered name (worker.py)
CHECK_SEEDS_ACTIVITY = Activity(
    CHECK_SEEDS, CheckSeedsInput, CheckSeedsResult, "never", heartbeat=True
)


async def check_seeds(tool: ToolContext) -> list[RefusedSeed]:
    """Read the brief's seed URLs once, before the first model turn: the ones that cannot be read
    are kept in the state, whose every decide request names them (instead of a step spent on
    one), and returned. Nothing is stored and no page fetch is counted (`CheckSeedsInput`)."""
    brief, step = tool.state.brief, tool.scope()
    if not brief.seed_urls:
        return []
    scope = RunScope.start(step.run_id, step.execution)  # before any step: the run's start
    checked = await tool.activity(
        CHECK_SEEDS_ACTIVITY,
        CheckSeedsInput(scope=scope, urls=list(brief.seed_urls), allowed_hosts=brief.allowed_hosts),
        summary=f"check seeds: {len(brief.seed_urls)} URL(s)",
    )
    tool.state.unreadable_seeds = checked.unreadable
    return checked.unreadable


class WindowPassage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str  # "S1.P4"
    offset: int = 0
    section: str = ""
    text: str


class PageWindow(ToolData):
    """A window of a stored source's passages."""

    kind: Literal["page_window"] = "page_window"
    source_id: str
    url: str
    title: str = ""
    passages: list[WindowPassage]
    next_offset: int | None = None
    total_chars: int = 0
    truncated: bool = False
    more_matches: bool = False  # with `find`: find at next_offset shows more (shown when true)


async def run(args: ReadPageArgs, tool: ToolContext) -> Executed:
    state = tool.state
    target = state.read_target(args.url, args.source_id)
    if not state.take_fetch(target):
        error = "page budget exhausted: stored pages stay readable by source_id"
        return Executed(ok=False, error=error)
    page = await tool.activity(
        READ_PAGE_ACTIVITY,
        ReadPageInput(
            scope=tool.scope(),
            source_id=target.source_id,
            url=target.url,
            allowed_hosts=state.brief.allowed_hosts,
            fetch=target.fetch,
            offset=args.offset,
            find=args.find,
        ),
        summary=f"read: {target.source_id} {target.url[:80]}",
    )
    texts = [page.source.url, page.source.title, *(passage.text for passage in page.passages)]
    state.add_source(target.source_id, page.source, texts)
    if not page.source.ok:
        error = f"{target.url} could not be read: {page.source.error}"
        return Executed(ok=False, error=error)
    return Executed(window(page), insufficient=not page.passages)


def window(page: ReadPageResult) -> PageWindow:
    source = page.source
    return PageWindow(
        source_id=source.id,
        url=source.url,
        title=source.title,
        passages=[
            WindowPassage(id=p.id, offset=p.start, section=p.section, text=p.text)
            for p in page.passages
        ],
        next_offset=page.next_offset,
        total_chars=page.total_chars,
        truncated=page.truncated,
        more_matches=page.more_matches,
    )


def describe(args: ReadPageArgs, data: PageWindow) -> str:
    url = data.url.split("://", 1)[-1]
    return f"read {data.source_id} {url} ({len(data.passages)} passages)"


def compact(data: PageWindow) -> PageWindow | None:
    """The window without its passages' text (ids and offsets stay), or None: it has none."""
    if not data.passages:
        return None
    passages = [WindowPassage(id=p.id, offset=p.offset, text=COMPACTED) for p in data.passages]
    return data.model_copy(update={"passages": passages})


def cut(data: PageWindow) -> PageWindow:
    """Passage ids and first lines, the note once (on the first passage)."""
    passages = [
        passage.model_copy(update={"text": first_line(passage.text, "" if n else OLDER_WINDOW)})
        for n, passage in enumerate(data.passages)
    ]
    return data.model_copy(update={"passages": passages})


def untrusted(data: PageWindow) -> Untrusted:
    body = "\n\n".join(f"[{p.id} offset={p.offset}] {p.text}" for p in data.passages)
    return Untrusted(field="passages", source=data.source_id, body=body)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Read passages of a page by url (a seed or search result) or source_id. offset (from "
        "next_offset) pages on; find lists passages containing a term (else each of its "
        "words), more_matches if find at next_offset shows more. A stored page costs a step, "
        "no fetch."
    ),
    arguments=ReadPageArgs,
    parameters={
        "url": "A seed or search result URL.",
        "source_id": "A read page's id (S1).",
        "offset": "A window's next_offset.",
        "find": "A term the passages must contain (a heading that holds it comes with the text "
        "under it; next_offset then reads on after the last shown).",
    },
    verbatim=frozenset(),
    results=(PageWindow,),
    runs=READ_PAGE_ACTIVITY,
    run=run,
    describe=describe,
    compact=compact,
    slimming=Slimming(cut, keep_latest=WHOLE_WINDOWS, recent_steps=RECENT_STEPS),
    untrusted=untrusted,
    rests_on=None,
    label=NAME,
)
