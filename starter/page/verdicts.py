"""The verifier's verdicts on the review page: a badge with the word, the full reason, the
sentence it copied (linked to its evidence).

Verdicts are read as the rows have them (`model_dump`), grouped by what each says it judges
(`subject`: a claim when it says nothing), so a kind of verdict this page was not written for
still shows, with its word, reason, supporting sentence and any other text it holds.
"""

from __future__ import annotations

from typing import Any

from starter.page.markup import Html, cut, definitions, element, jump, section
from starter.review import ReportView

MAX_TEXT_CHARS = 20_000  # a reason, a sentence, a claim
VERDICT_FIELDS = ("verdict", "said", "reason", "sentence", "evidence_id", "model")
BADGES = {"supported": "good", "partly": "warn", "not_supported": "bad", "contradicted": "bad"}


def cite(evidence_id: str, recorded: bool) -> Html:
    shown = element("code", cut(evidence_id, 80))
    if not recorded:
        return element("span", shown, " (not recorded)", class_="warning")
    return jump("evidence", evidence_id, shown)


def claim_verdicts(view: ReportView) -> dict[int, list[dict[str, Any]]]:
    """The verdicts on claims, by claim number (0: the answer)."""
    found: dict[int, list[dict[str, Any]]] = {}
    for verdict in _verdict_rows(view):
        if verdict.get("subject", "claim") in ("claim", "", None):
            found.setdefault(int(verdict.get("number", 0)), []).append(verdict)
    return found


def _verdict_rows(view: ReportView) -> list[dict[str, Any]]:
    return [verdict.model_dump(mode="json") for verdict in view.verification.verdicts]


def verdict_block(verdict: dict[str, Any], recorded: set[str]) -> Html:
    """The verifier's word as a badge, its full reason, and the sentence it copied."""
    word = str(verdict.get("verdict", ""))
    said = str(verdict.get("said", ""))
    parts: list[object] = [
        element("span", "Verifier: ", class_="label"),
        element(
            "span", word.replace("_", " ") or "?", class_=f"badge {BADGES.get(word, 'neutral')}"
        ),
    ]
    if said and said != word:
        parts.append(element("span", f" (it said {said.replace('_', ' ')})", class_="note"))
    reason = str(verdict.get("reason", ""))
    sentence = str(verdict.get("sentence", ""))
    evidence_id = str(verdict.get("evidence_id", ""))
    return element(
        "div",
        element("p", parts),
        element("p", element("span", "Reason: ", class_="label"), cut(reason, MAX_TEXT_CHARS))
        if reason
        else None,
        element(
            "p",
            element("span", "Supporting sentence", class_="label"),
            [" (", cite(evidence_id, evidence_id in recorded), ")"] if evidence_id else None,
            ": ",
            element("q", cut(sentence, MAX_TEXT_CHARS)),
        )
        if sentence
        else None,
        _more_fields(verdict),
        class_="verdict",
    )


def _more_fields(verdict: dict[str, Any]) -> Html | None:
    """Any other text a verdict row holds (a question, a subject): shown, not interpreted."""
    skip = {*VERDICT_FIELDS, "number", "claim", "question", "usage", "subject"}
    extra = [(k, v) for k, v in verdict.items() if k not in skip and isinstance(v, str) and v]
    return (
        definitions([(k.replace("_", " "), cut(v, MAX_TEXT_CHARS)) for k, v in extra])
        if extra
        else None
    )


def other_verdicts_section(view: ReportView, recorded: set[str]) -> Html | None:
    """Verdicts on anything but a claim (coverage of a sub-question, the limitations, ...),
    grouped by subject."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for verdict in _verdict_rows(view):
        subject = str(verdict.get("subject") or "claim")
        if subject != "claim":
            groups.setdefault(subject, []).append(verdict)
    if not groups:
        return None
    blocks = []
    for subject, verdicts in groups.items():
        blocks.append(element("h3", subject.replace("_", " ").capitalize()))
        for verdict in verdicts:
            what = str(verdict.get("claim") or verdict.get("question") or "")
            blocks.append(
                element(
                    "div",
                    element("p", cut(what, MAX_TEXT_CHARS)) if what else None,
                    verdict_block(verdict, recorded),
                    class_="judged",
                )
            )
    return section("verdicts", "More verdicts", blocks)
