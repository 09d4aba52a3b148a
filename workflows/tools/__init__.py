"""The tools the model reasons with: one module per tool, each one `ToolSpec`, and the registry
everything else is derived from (re-exported here)."""

from workflows.ending import Outcome
from workflows.tool_base import InvalidCall, ToolArgs, ToolData
from workflows.tools import compose_report
from workflows.tools.calls import MAX_NESTING, bounded_call, describe, parse_call
from workflows.tools.finish_research import NAME as FINISH_RESEARCH
from workflows.tools.finish_research import FinishArgs, GateFailed, GatePassed
from workflows.tools.read_page import (
    COMPACTED,
    PageWindow,
    ReadPageArgs,
    WindowPassage,
    check_seeds,
)
from workflows.tools.read_page import NAME as READ_PAGE
from workflows.tools.record_evidence import NAME as RECORD_EVIDENCE
from workflows.tools.record_evidence import EvidenceData, RecordEvidenceArgs
from workflows.tools.registry import REGISTRY, Registry, tool_schemas
from workflows.tools.search_web import NAME as SEARCH_WEB
from workflows.tools.search_web import SearchArgs, SearchData, SearchResultItem, search_data
from workflows.tools.spec import Executed, Slimming, ToolContext, ToolSpec, Untrusted

__all__ = [
    "COMPACTED",
    "FINISH_RESEARCH",
    "MAX_NESTING",
    "READ_PAGE",
    "RECORD_EVIDENCE",
    "REGISTRY",
    "SEARCH_WEB",
    "EvidenceData",
    "Executed",
    "FinishArgs",
    "GateFailed",
    "GatePassed",
    "InvalidCall",
    "Outcome",
    "PageWindow",
    "ReadPageArgs",
    "RecordEvidenceArgs",
    "Registry",
    "SearchArgs",
    "SearchData",
    "SearchResultItem",
    "Slimming",
    "ToolArgs",
    "ToolContext",
    "ToolData",
    "ToolSpec",
    "Untrusted",
    "WindowPassage",
    "bounded_call",
    "check_seeds",
    "compose_report",
    "describe",
    "parse_call",
    "search_data",
    "tool_schemas",
]
