"""Site chrome at index time (`activities.search.corpus.drop_chrome`): a paragraph on a large share
of one host's documents is not indexed; a small host keeps everything."""

from __future__ import annotations

from activities.search.corpus import CHROME_MIN_DOCUMENTS, CorpusDocument, drop_chrome

FOOTER = "Copyright 2026 The Example Foundation. Licensed under the Example License."


def _host(pages: int, footer_on: int) -> list[CorpusDocument]:
    return [
        CorpusDocument(
            url=f"https://docs.example/p{n}.html",
            host="docs.example",
            title=f"Page {n}",
            body=f"Page {n} explains topic {n} in prose of its own."
            + (f"\n\n{FOOTER}" if n < footer_on else ""),
        )
        for n in range(pages)
    ]


def test_a_paragraph_on_a_large_share_of_a_hosts_pages_is_not_indexed() -> None:
    kept = drop_chrome(_host(40, footer_on=30))
    assert all(FOOTER not in document.body for document in kept)
    assert [document.body for document in kept[:2]] == [
        "Page 0 explains topic 0 in prose of its own.",
        "Page 1 explains topic 1 in prose of its own.",
    ]


def test_a_paragraph_on_a_few_pages_and_a_small_host_keep_it() -> None:
    assert FOOTER in drop_chrome(_host(40, footer_on=5))[0].body, "5 of 40 is no chrome"
    small = _host(CHROME_MIN_DOCUMENTS - 1, footer_on=CHROME_MIN_DOCUMENTS)
    assert drop_chrome(small) == small
