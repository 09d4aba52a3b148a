"""The tool contract the model reasons with: names, JSON schemas and argument validation (pure)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from workflows.models import FinishArgs, ReadPageArgs, RecordEvidenceArgs, SearchArgs, ToolCall

SEARCH_WEB = "search_web"
READ_PAGE = "read_page"
RECORD_EVIDENCE = "record_evidence"
FINISH_RESEARCH = "finish_research"

ARGUMENT_MODELS: dict[str, type[BaseModel]] = {
    SEARCH_WEB: SearchArgs,
    READ_PAGE: ReadPageArgs,
    RECORD_EVIDENCE: RecordEvidenceArgs,
    FINISH_RESEARCH: FinishArgs,
}

DESCRIPTIONS: dict[str, str] = {
    SEARCH_WEB: (
        "Search for pages on the allowed hosts. Returns URLs, titles and snippets. Snippets are "
        "for discovery only and can never be evidence: read the page first."
    ),
    READ_PAGE: (
        "Read a window of passages of a page: give a url (a seed or a search result) or the "
        "source_id of a page already read. Use offset (character offset, from next_offset) to "
        "page on, or find to list passages containing a term. Re-reading a stored page costs a "
        "step but no page fetch."
    ),
    RECORD_EVIDENCE: (
        "Record evidence for one question from a page you have read: cite passage_id (the host "
        "copies the exact text) or give a quote that appears verbatim in the page. stance is "
        "supports or contradicts."
    ),
    FINISH_RESEARCH: (
        "Submit the report: answer, findings (each citing evidence ids such as E001) and "
        "limitations. The host checks coverage; if it fails you get the gaps and may continue."
    ),
}


def tool_schemas() -> list[dict[str, Any]]:
    """OpenAI-style function tool definitions, generated from the argument models."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": DESCRIPTIONS[name],
                "parameters": model.model_json_schema(),
            },
        }
        for name, model in ARGUMENT_MODELS.items()
    ]


class InvalidCall(ValueError):
    """The call cannot be executed; the message is returned to the model as the tool error."""


def parse_call(call: ToolCall) -> BaseModel:
    """Validate a raw call into its argument model, or raise InvalidCall with one sentence."""
    model = ARGUMENT_MODELS.get(call.name)
    if model is None:
        known = ", ".join(ARGUMENT_MODELS)
        raise InvalidCall(f"unknown tool {call.name!r}; the tools are {known}")
    try:
        raw = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as error:
        raise InvalidCall(f"arguments of {call.name} are not valid JSON: {error.msg}") from None
    if not isinstance(raw, dict):
        raise InvalidCall(f"arguments of {call.name} must be a JSON object")
    if "\\u0000" in call.arguments or "\x00" in call.arguments:
        raise InvalidCall(f"arguments of {call.name} contain a NUL character")
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise InvalidCall(f"invalid arguments for {call.name}: {describe(error)}") from None


def describe(error: ValidationError) -> str:
    """One line per problem, joined: `field: message`."""
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)
