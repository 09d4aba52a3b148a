"""Search providers: `corpus` (a local folder indexed with PostgreSQL full-text search) and the
web providers (`web`: Serper, SearXNG), every one behind `SearchProvider` and `keep_allowed`."""

from activities.search.corpus import (
    CONTROL_CHARACTERS,
    CorpusDocument,
    CorpusSearch,
    SearchProvider,
    corpus_hosts,
    index_corpus,
    keep_allowed,
    normalised_url,
    read_corpus,
)

__all__ = [
    "CONTROL_CHARACTERS",
    "CorpusDocument",
    "CorpusSearch",
    "SearchProvider",
    "corpus_hosts",
    "index_corpus",
    "keep_allowed",
    "normalised_url",
    "read_corpus",
]
