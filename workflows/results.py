"""What each tool returns inside the envelope's `data` (pure): one model per tool outcome.

Read by attribute everywhere (context, prompt, offline policy, progress lines); serialised, they are
the JSON the model has always seen. Each forbids unknown fields, so a stored `data` object reads
back as exactly one of them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchResultItem(_Data):
    url: str
    title: str = ""
    snippet: str = ""


class SearchData(_Data):
    """`search_web`: results on allowed hosts; snippets are for discovery only."""

    results: list[SearchResultItem]
    note: str = ""


class WindowPassage(_Data):
    id: str  # "S1.P4"
    offset: int = 0
    section: str = ""
    text: str


class PageWindow(_Data):
    """`read_page`: a window of a stored source's passages."""

    source_id: str
    url: str
    title: str = ""
    passages: list[WindowPassage]
    next_offset: int | None = None
    total_chars: int = 0
    truncated: bool = False


class EvidenceData(_Data):
    """`record_evidence`: the id assigned and the exact stored text; the host's conflicts."""

    evidence_id: str
    quote: str
    conflicts: list[str] = Field(default_factory=list)  # sentences naming both evidence ids

    @model_serializer(mode="wrap")
    def _without_empty_conflicts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("conflicts"):
            data.pop("conflicts", None)
        return data


class GateFailed(_Data):
    """`finish_research` refused: every gap, what is left, and where to look next."""

    gaps: list[str]
    finish_attempts_left: int
    unread_urls: list[str] = Field(default_factory=list)


class GatePassed(_Data):
    passed: Literal[True]


ToolData = SearchData | PageWindow | EvidenceData | GateFailed | GatePassed
