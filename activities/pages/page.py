"""A fetched page as the fetcher hands it on: what the ledger stores and extraction reads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FetchedPage:
    url: str  # the URL asked for
    final_url: str  # after redirects
    status: int
    content_type: str  # media type without parameters, lower-case
    charset: str | None
    body: bytes
