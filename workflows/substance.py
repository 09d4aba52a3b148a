"""Does evidence inform, and does a report say only what its evidence says? (pure, documented)

Deterministic tests on content words and stated figures, shared by the ledger (when evidence is
recorded) and the gate (when a report is submitted):

- **Informative:** a quote or passage has at least MIN_EVIDENCE_WORDS distinct content words
  (words that are not stopwords) and figures, and MIN_EVIDENCE_CHARS characters: "The default
  timeout is 30 seconds" informs, "Harbor Queue" or "after 5 attempts" does not.
- **Relevant:** the quote, with what it sits under (its section heading and the paragraph just
  before it, where documentation names the term a definition explains), shares a content word with
  the question's *distinctive* words: the question's content words less those of the brief's main
  question and less those every sub-question shares (the topic: "Harbor Queue" tells nothing
  about which sub-question a quote answers). Without distinctive words, any content word counts.
- **Supported:** a claim, a finding or an answer states no figure (a number) that its evidence
  quotes (or the brief's questions) do not contain; a finding also shares at least
  MIN_SHARED_WORDS content words or figures with the quotes it cites.
- **Conflicting:** two pieces of evidence for one question from different source families that
  state figures of the same kind (a duration, a size, a percentage, a count of the same thing)
  with no value in common disagree, whatever stance the model gave them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MIN_EVIDENCE_CHARS = 20
MIN_EVIDENCE_WORDS = 4
MIN_SHARED_WORDS = 2

_WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")
_PARTS = re.compile(r"[_-]+")
STOPWORDS = frozenset(
    (
        "a an and are as at be been before but by can could do does did for from had has have how "
        "if in into is it its may might must no not of on or our should so such than that the "
        "their them then there these they this those to was we were what when where which while "
        "who whom why will with would you your after about also any all each more most other "
        "over same some very yes"
    ).split()
)


def keywords(text: str) -> set[str]:
    """Distinct content words of `text`, lower-cased and crudely stemmed; a compound
    (`wait_for`, `dead-letter`) counts as itself and as its parts."""
    words = _WORD.findall(text.lower())
    words += [part for word in words if "_" in word or "-" in word for part in _PARTS.split(word)]
    return {
        _stem(word)
        for word in words
        if len(word) > 1 and word not in STOPWORDS and not word.isdigit()
    }


def _stem(word: str) -> str:
    """Crude suffix stripping: "replayed" matches "replay", "queues" matches "queue"."""
    for suffix, shortest in (("ing", 6), ("ed", 5)):
        if word.endswith(suffix) and len(word) >= shortest:
            return word[: -len(suffix)]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# ---------------------------------------------------------------- recording evidence


def distinctive_words(question: str, main_question: str, sub_questions: list[str]) -> list[str]:
    """The content words of `question` that tell it apart from the brief's topic (sorted)."""
    own = keywords(question)
    topic = keywords(main_question) if main_question.strip() != question.strip() else set()
    if len(sub_questions) > 1:
        topic |= set.intersection(*(keywords(text) for text in sub_questions))
    return sorted(own - topic or own)


def evidence_problem(quote: str, context: str, claim: str, terms: list[str]) -> str | None:
    """Why this quote cannot be evidence for a question with distinctive `terms`, or None.
    `context` is page text around the quote (section heading, the paragraph before it)."""
    words = keywords(quote)
    size = len(words | figures(quote))
    if len(" ".join(quote.split())) < MIN_EVIDENCE_CHARS or size < MIN_EVIDENCE_WORDS:
        return (
            f"the quote is too short to inform: it has {size} content word(s) and figure(s), "
            f"at least {MIN_EVIDENCE_WORDS} are needed (quote a whole sentence, or cite its "
            "passage_id)"
        )
    if terms and not (words | keywords(context)) & set(terms):
        shown = ", ".join(terms[:8])
        return (
            f"the quote does not mention what the question asks about (none of: {shown}): "
            "record evidence under the question it answers"
        )
    unsupported = unsupported_figures(claim, [quote])
    if unsupported:
        return (
            f"the claim states {', '.join(unsupported[:5])}, which the quote does not contain: "
            "a claim may only say what its quote says"
        )
    return None


# ---------------------------------------------------------------- figures

_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])(\d+(?:[.,]\d+)*)")
_UNIT = re.compile(r"(?<![A-Za-z0-9_.,])(\d+(?:[.,]\d+)*)(?:\s*|-)([A-Za-z%]+)")

# Units of one kind convert to one base (seconds, bytes), so 60 s equals 1 minute.
_DURATION = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
}  # fmt: skip
_SIZE = {
    "b": 1, "byte": 1, "bytes": 1,
    "kb": 1e3, "kib": 1024, "mb": 1e6, "mib": 1024**2, "gb": 1e9, "gib": 1024**3,
    "tb": 1e12, "tib": 1024**4,
}  # fmt: skip
# Nouns that never count a kind of thing ("2 of", "5 by default" have no noun at all).
_NOT_COUNTED = STOPWORDS | {"th", "st", "nd", "rd", "x", "default", "percent"}


def _number(raw: str) -> float | None:
    text = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def figures(text: str) -> set[str]:
    """The numbers `text` states, normalised ("1,000" and "1000" alike; "30.0" is "30")."""
    found = set()
    for raw in _NUMBER.findall(text):
        value = _number(raw)
        if value is not None:
            found.add(f"{value:g}")
    return found


def unsupported_figures(text: str, quotes: Iterable[str], allowed: str = "") -> list[str]:
    """The figures of `text` that none of `quotes` (nor `allowed`) states, in sorted order."""
    known = figures(allowed).union(*(figures(quote) for quote in quotes))
    return sorted(figures(text) - known, key=lambda figure: float(figure))


@dataclass(frozen=True)
class Figure:
    kind: str  # "duration", "size", "percent" or "count:<noun>"
    value: float  # in the kind's base unit
    text: str  # as stated: "30 seconds"


def stated_figures(text: str) -> list[Figure]:
    """Figures with a unit or a counted noun: "30 seconds", "5 attempts", "2 MiB", "99%"."""
    stated = []
    for raw, unit in _UNIT.findall(text):
        value = _number(raw)
        word = unit.lower()
        if value is None:
            continue
        if word in _DURATION:
            stated.append(Figure("duration", value * _DURATION[word], f"{raw} {unit}"))
        elif word in _SIZE:
            stated.append(Figure("size", value * _SIZE[word], f"{raw} {unit}"))
        elif word in ("%", "percent"):
            stated.append(Figure("percent", value, f"{raw}%"))
        elif len(word) > 2 and word not in _NOT_COUNTED:
            stated.append(Figure(f"count:{_stem(word)}", value, f"{raw} {unit}"))
    return stated


def disagreement(first: str, second: str) -> tuple[str, str] | None:
    """Where two quotes state figures of one kind with no value in common: what each says."""
    mine, theirs = stated_figures(first), stated_figures(second)
    for kind in sorted({figure.kind for figure in mine} & {figure.kind for figure in theirs}):
        left = [figure for figure in mine if figure.kind == kind]
        right = [figure for figure in theirs if figure.kind == kind]
        if not {round(f.value, 6) for f in left} & {round(f.value, 6) for f in right}:
            return left[0].text, right[0].text
    return None
