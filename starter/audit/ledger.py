"""Audit checks on the ledger's own rows: snapshots, passages, quotes, IDs, counters and the
steps' and evidence's hash chains."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from activities.ledger import chain
from activities.ledger.review import EvidenceRow, StepRow
from activities.pages.extract import content_hash
from starter.audit.base import AuditData, check, numbered
from workflows.families import sketch, words
from workflows.tools import FinishArgs

SOURCE_STATUSES = ("ok", "failed", "refused")


@check("snapshot-hashes", "every stored snapshot hashes to its source's content_hash")
def snapshot_hashes(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        if source.snapshot is not None and content_hash(source.snapshot) != source.content_hash:
            yield f"{source.source_id}: its snapshot does not hash to {source.content_hash}"


@check("snapshot-sketches", "every stored sketch is its snapshot's (none before migration 019)")
def snapshot_sketches(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        if source.sketch and source.sketch != sketch(words(source.snapshot or "")):
            yield f"{source.source_id}: its sketch is not its snapshot's"


@check("source-status", "a read source has a snapshot and hash; a failed one says why")
def source_status(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        stored = source.snapshot is not None and bool(source.content_hash)
        if source.status not in SOURCE_STATUSES:
            yield f"{source.source_id}: unknown status {source.status!r}"
        elif (source.status == "ok") != stored:
            yield f"{source.source_id}: status {source.status} but snapshot stored: {stored}"
        elif source.status != "ok" and not source.error:
            yield f"{source.source_id}: {source.status} without an error"


@check("passages-in-snapshots", "every passage is its snapshot's text at its offsets")
def passages_in_snapshots(data: AuditData) -> Iterator[str]:
    for passage in data.rows.passages:
        source = data.source(passage.source_id)
        snapshot = source.snapshot if source else None
        if snapshot is None:
            yield f"{passage.passage_id}: its source has no snapshot"
        elif snapshot[passage.start : passage.end] != passage.text:
            yield f"{passage.passage_id}: text differs from the snapshot at {passage.start}"


@check("passage-numbering", "passages are numbered 1..n per source, in order, not overlapping")
def passage_numbering(data: AuditData) -> Iterator[str]:
    for source in data.rows.sources:
        passages = data.passages_of(source.source_id)
        yield from numbered([p.passage_no for p in passages], f"{source.source_id}'s passages")
        end = 0
        for passage in passages:
            if passage.passage_id != f"{source.source_id}.P{passage.passage_no}":
                yield f"{source.source_id}'s passage {passage.passage_no} is {passage.passage_id}"
            if not end <= passage.start <= passage.end:
                yield f"{passage.passage_id}: offsets {passage.start}-{passage.end} overlap"
            end = passage.end


@check("quotes-in-snapshots", "every quote is its source snapshot's text at its offsets")
def quotes_in_snapshots(data: AuditData) -> Iterator[str]:
    for evidence in data.rows.evidence:
        source = data.source(evidence.source_id)
        snapshot = (source.snapshot if source else None) or ""
        if snapshot[evidence.start : evidence.end] != evidence.quote or not evidence.quote:
            yield f"{evidence.id}: the quote is not {evidence.source_id}'s text at {evidence.start}"


@check("quotes-in-passages", "a quote's passage is in its source and holds the quote's start")
def quotes_in_passages(data: AuditData) -> Iterator[str]:
    for evidence in data.rows.evidence:
        if evidence.passage_id is None:
            continue
        passages = data.passages_of(evidence.source_id)
        passage = next((p for p in passages if p.passage_id == evidence.passage_id), None)
        if passage is None:
            yield f"{evidence.id}: passage {evidence.passage_id} is not in {evidence.source_id}"
        elif not passage.start <= evidence.start < max(passage.end, passage.start + 1):
            yield f"{evidence.id}: starts at {evidence.start}, outside {passage.passage_id}"


@check("evidence-from-read-sources", "evidence cites a source of this run that was read")
def evidence_from_read_sources(data: AuditData) -> Iterator[str]:
    for evidence in data.rows.evidence:
        source = data.source(evidence.source_id)
        if source is None or source.status != "ok":
            yield f"{evidence.id}: source {evidence.source_id} was not read in this run"


@check("evidence-questions", "evidence is filed under a question of the brief")
def evidence_questions(data: AuditData) -> Iterator[str]:
    known = data.rows.run.brief.question_ids()
    for evidence in data.rows.evidence:
        if evidence.question_id not in known:
            yield f"{evidence.id}: question {evidence.question_id} is not in the brief"


@check("source-ids-in-order", "source IDs are S1..Sn, assigned in order")
def source_ids_in_order(data: AuditData) -> Iterator[str]:
    ids = [source.source_id for source in data.rows.sources]
    if ids != [f"S{n}" for n in range(1, len(ids) + 1)]:
        yield f"source ids are {', '.join(ids)}"


@check("evidence-ids-in-order", "evidence IDs are E001..En, assigned in order")
def evidence_ids_in_order(data: AuditData) -> Iterator[str]:
    ids = [evidence.id for evidence in data.rows.evidence]
    if ids != [f"E{n:03d}" for n in range(1, len(ids) + 1)]:
        yield f"evidence ids are {', '.join(ids)}"


# ---------------------------------------------------------------- counters against rows


@check("counter-steps", "the run's step counter equals its step rows")
def counter_steps(data: AuditData) -> Iterator[str]:
    yield from _counted(data, "steps", data.rows.run.counters.steps, len(data.rows.steps))


@check("counter-searches", "the run's search counter equals its search rows")
def counter_searches(data: AuditData) -> Iterator[str]:
    counted, rows = data.rows.run.counters.searches, len(data.rows.searches)
    yield from _counted(data, "searches", counted, rows)


@check("counter-pages", "the run's page-fetch counter equals its source rows")
def counter_pages(data: AuditData) -> Iterator[str]:
    counted, rows = data.rows.run.counters.page_fetches, len(data.rows.sources)
    yield from _counted(data, "page fetches", counted, rows)


@check("counter-model-calls", "the run's model-call counter equals its model_calls rows")
def counter_model_calls(data: AuditData) -> Iterator[str]:
    counted, rows = data.rows.run.counters.model_calls, len(data.rows.model_calls)
    # After a loose end the turn in flight may be counted but unanswered, or answered (its row
    # written by the activity) after the workflow stopped counting.
    if not (counted == rows or (data.loose_last_turn and abs(counted - rows) == 1)):
        yield f"counter says {counted} model calls, the ledger holds {rows}"


@check(
    "counter-tokens", "the run's token counter is the sum of its model calls' and verdicts' usage"
)
def counter_tokens(data: AuditData) -> Iterator[str]:
    counts = [call.usage().counted() for call in data.rows.model_calls]
    verdicts = {row.step: 0 for row in data.rows.verdicts}  # each finish step's verifier tokens
    for row in data.rows.verdicts:
        verdicts[row.step] += row.as_verdict().usage.counted()
    counted = data.rows.run.counters.tokens
    total = sum(counts) + sum(verdicts.values())
    allowed = {total}
    if data.loose_last_turn and counts:
        allowed.add(total - counts[-1])  # answered, but not counted before the run ended
    if data.loose_last_turn and verdicts:  # verified, but the verifier failed on a later claim
        allowed.add(total - verdicts[max(verdicts)])
    if counted not in allowed:
        yield f"counter says {counted} tokens, the model calls and verdicts report {total}"


@check("counter-finish-attempts", "the finish counter equals the finish steps that were checked")
def counter_finish_attempts(data: AuditData) -> Iterator[str]:
    checked = 0
    for step in data.rows.steps:
        if step.tool != "finish_research":
            continue
        if step.entry is not None:
            checked += isinstance(step.entry.args, FinishArgs)
        else:
            checked += step.ok or (step.error or "").startswith("the coverage gate failed")
    counted = data.rows.run.counters.finish_attempts
    # After a loose end the last submission may be counted and unrecorded (its verifier failed).
    if not (counted == checked or (data.loose_last_turn and counted == checked + 1)):
        yield f"counter says {counted} finish attempts, the steps show {checked}"


def _counted(data: AuditData, what: str, counter: int, rows: int) -> Iterator[str]:
    """Equal, or after a loose end one more counted than written (the action in flight)."""
    if not (counter == rows or (data.loose_last_turn and counter == rows + 1)):
        yield f"counter says {counter} {what}, the ledger holds {rows}"


# ---------------------------------------------------------------- hash chains (migration 011)


@check("steps-chain", "each step row hashes to its chain link: no row edited, deleted or moved")
def steps_chain(data: AuditData) -> Iterator[str]:
    run_id = data.rows.run.run_id
    links = [(f"step {s.step}", s.chain, step_fields(run_id, s)) for s in data.rows.steps]
    head = data.rows.report.steps_chain if data.rows.report else None
    yield from _chain_problems(links, chain.step_link, head, "step", data.loose_last_turn)


@check("evidence-chain", "each evidence row hashes to its chain link: none edited, deleted, moved")
def evidence_chain(data: AuditData) -> Iterator[str]:
    run_id = data.rows.run.run_id
    links = [(e.id, e.chain, evidence_fields(run_id, e)) for e in data.rows.evidence]
    head = data.rows.report.evidence_chain if data.rows.report else None
    yield from _chain_problems(links, chain.evidence_link, head, "evidence", data.loose_last_turn)


Link = tuple[str, str | None, dict[str, Any]]  # the row's name, its stored link, its fields


def _chain_problems(
    links: list[Link],
    hashed: Callable[[str, Mapping[str, Any]], str],
    head: str | None,
    what: str,
    loose: bool,
) -> Iterator[str]:
    """Recompute a chain: each row must hash, from the link before it, to its own link; rows
    written before migration 011 (no link) may only come first. The report's `head` must be the
    last link (after a loose last turn, the one before may be)."""
    previous, chained = "", False
    for name, stored, fields in links:
        if stored is None:
            if chained:
                yield f"{name}: no chain hash after chained rows (its hash was removed)"
            continue
        chained = True
        if hashed(previous, fields) != stored:
            yield (
                f"{name}: does not hash to its chain link (the row was edited, or a row before "
                "it was deleted or moved)"
            )
        previous = stored
    stored_links = [link[1] for link in links]
    if head is not None and head not in stored_links[-1:] + (stored_links[-2:-1] if loose else []):
        yield f"the report's last {what} hash is not the last row's (a row was deleted or added)"


def step_fields(run_id: str, step: StepRow) -> dict[str, Any]:
    """A step row's fields as the chain encodes them (`activities.ledger.chain.STEP_FIELDS`)."""
    fields = step.model_dump(include=set(chain.STEP_FIELDS) - {"run_id", "entry"})
    return fields | {"run_id": run_id, "entry": chain.entry_fields(step.entry)}


def evidence_fields(run_id: str, evidence: EvidenceRow) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "evidence_id": evidence.id,
        "question_id": evidence.question_id,
        "source_id": evidence.source_id,
        "claim": evidence.claim,
        "stance": str(evidence.stance),
        "quote": evidence.quote,
        "passage_id": evidence.passage_id,
        "start_offset": evidence.start,
        "end_offset": evidence.end,
        "step": evidence.step,
    }  # chain.EVIDENCE_FIELDS, named as the table names them
