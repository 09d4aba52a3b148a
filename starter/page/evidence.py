"""Each piece of evidence on the review page: its quote highlighted inside its passage.

The quote is cut out of the stored snapshot at its offsets (where `research audit` checks it
stands), so the highlighted text is the snapshot's own and the text around it is what the page
said before and after; the section heading is the passage's. Each block links back to the
findings that cite it.
"""

from __future__ import annotations

from activities.ledger.review import EvidenceRow, PassageRow, RunRows, SourceRow
from starter.page.markup import Html, anchor, cut, element, join, link, section

CONTEXT_CHARS = 600  # of the passage shown on either side of a quote
MAX_QUOTE_CHARS = 20_000  # a longer quote is shown cut (report.json holds it whole)
MAX_FIELD_CHARS = 2_000  # a title, URL, claim or heading
MAX_UNCITED = 200  # recorded evidence no finding cites, shown after the cited


def evidence_section(rows: RunRows, cited_by: dict[str, list[tuple[str, str]]]) -> Html:
    """Every cited piece of evidence in order of first citation, then the rest recorded.
    `cited_by`: evidence id -> (fragment id, label) of each part of the report citing it."""
    by_id = {item.id: item for item in rows.evidence}
    cited = [by_id[eid] for eid in cited_by if eid in by_id]
    missing = [eid for eid in cited_by if eid not in by_id]
    uncited = [item for item in rows.evidence if item.id not in cited_by]
    blocks = [_block(rows, item, cited_by.get(item.id, [])) for item in cited]
    if missing:
        listed = join([element("code", cut(eid, 80)) for eid in missing])
        blocks.append(element("p", "Cited but not recorded in the ledger: ", listed))
    if uncited:
        blocks.append(element("h3", "Recorded, not cited by the report"))
        blocks += [_block(rows, item, []) for item in uncited[:MAX_UNCITED]]
        if len(uncited) > MAX_UNCITED:
            blocks.append(element("p", f"... {len(uncited) - MAX_UNCITED} more not shown"))
    if not blocks:
        blocks = [element("p", "No evidence was recorded.")]
    note = "Quotes highlighted where they stand in the stored page snapshots."
    return section(
        "evidence",
        "Evidence",
        element("p", note, class_="note"),
        blocks,
    )


def _block(rows: RunRows, item: EvidenceRow, citing: list[tuple[str, str]]) -> Html:
    source = next((s for s in rows.sources if s.source_id == item.source_id), None)
    passage = _passage(rows.passages, item)
    questions = {question.id: question.text for question in rows.run.brief.questions}
    heading = element(
        "h3",
        element("code", item.id),
        element("span", item.stance.replace("_", " "), class_=f"stance {_stance(item.stance)}"),
        element("span", f"{item.question_id}: {questions.get(item.question_id, '')}", class_="q"),
    )
    back = [element("a", label, href=f"#{fragment}") for fragment, label in citing]
    return element(
        "article",
        heading,
        element("p", element("span", "Model's claim: ", class_="label"), cut(item.claim, 2_000)),
        _in_context(item, source, passage),
        _where(item, source, passage),
        element("p", "Cited by: ", join(back), class_="cited-by") if back else None,
        id=anchor("evidence", item.id),
        class_="evidence",
    )


def _stance(stance: str) -> str:
    return "contradicts" if stance == "contradicts" else "supports"


def _passage(passages: list[PassageRow], item: EvidenceRow) -> PassageRow | None:
    """The passage the quote was recorded from, or the one holding its start."""
    own = [p for p in passages if p.source_id == item.source_id]
    named = next((p for p in own if p.passage_id == item.passage_id), None)
    return named or next((p for p in own if p.start <= item.start < p.end), None)


def _in_context(item: EvidenceRow, source: SourceRow | None, passage: PassageRow | None) -> Html:
    """The quote marked inside the text around it, as the snapshot has it; the ledger's quote
    alone (and why) where the snapshot does not hold it at its offsets."""
    snapshot = source.snapshot if source is not None else None
    mark_attrs = {"class_": "quote", "data_evidence": item.id}
    if snapshot is None or snapshot[item.start : item.end] != item.quote or not item.quote:
        return element(
            "div",
            element("p", "Not found at its offsets in the stored snapshot:", class_="warning"),
            element("blockquote", element("mark", cut(item.quote, MAX_QUOTE_CHARS), **mark_attrs)),
            class_="passage",
        )
    low = max(passage.start if passage else 0, item.start - CONTEXT_CHARS)
    high = min(passage.end if passage else len(snapshot), item.end + CONTEXT_CHARS)
    low, high = min(low, item.start), max(high, item.end)
    before, after = snapshot[low : item.start], snapshot[item.end : high]
    return element(
        "blockquote",
        "..." if low > (passage.start if passage else 0) else None,
        before,
        element("mark", cut(item.quote, MAX_QUOTE_CHARS), **mark_attrs),
        after,
        "..." if high < (passage.end if passage else len(snapshot)) else None,
        class_="passage",
    )


def _where(item: EvidenceRow, source: SourceRow | None, passage: PassageRow | None) -> Html:
    if source is None:
        return element("p", f"Source {item.source_id} is not in the ledger.", class_="warning")
    url = source.final_url or source.url
    facts = [
        ("Section", cut(passage.section, MAX_FIELD_CHARS) if passage and passage.section else "-"),
        ("Source", f"{source.source_id}: {cut(source.title, MAX_FIELD_CHARS) or '(no title)'}"),
        ("URL", link(url) if len(url) <= MAX_FIELD_CHARS else cut(url, MAX_FIELD_CHARS)),
        ("Fetched", source.fetched_at.isoformat(timespec="seconds")),
        ("Content hash", element("code", source.content_hash or "-")),
        (
            "Offsets",
            f"{item.start}-{item.end}" + (f" in {item.passage_id}" if item.passage_id else ""),
        ),
    ]
    if source.url != url:
        asked = link(source.url) if len(source.url) <= MAX_FIELD_CHARS else cut(source.url, 200)
        facts.insert(3, ("Asked for", asked))
    return element(
        "dl", [[element("dt", name), element("dd", value)] for name, value in facts], class_="where"
    )
