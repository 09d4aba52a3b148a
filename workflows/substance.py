"""Does evidence inform, and does a report say only what its evidence says? (pure, documented)

Deterministic tests on content words and stated figures, shared by the ledger (when evidence is
recorded) and the gate (when a report is submitted):

- **Informative:** a quote or passage has at least MIN_EVIDENCE_WORDS distinct content words
  (words that are not stopwords) and figures, and MIN_EVIDENCE_CHARS characters: "The default
  timeout is 30 seconds" informs, "Harbor Queue" or "after 5 attempts" does not.
- **Relevant:** the quote, with what it sits under (its section heading and the paragraph just
  before it, where documentation names the term a definition explains), shares a content word
  with the question's *distinctive* words (one is enough: requiring two refused real answers):
  the question's content words less those of the brief's main question and less those every
  sub-question shares (the topic: "Harbor Queue" tells nothing about which sub-question a quote
  answers). Without distinctive words, any content word counts.
- **Supported:** a claim, a finding, the answer or the limitations state no figure that their
  evidence does not: a duration, size or percentage must match in kind and value (30 s is
  30,000 ms, not 30 hours), any other number must appear (digits, a number word, 10k), a version
  such as 9.9.9 as it is; the brief's own questions count as evidence for this. A finding also
  shares at least MIN_SHARED_WORDS content words or figures with the quotes it cites, and says
  "not", "no" or "never" only if one of them does.
- **Conflicting:** two pieces of evidence for one question from different source families state
  a figure of one kind (a duration, a size, a percentage, a count of the same thing: times,
  tries, retries and attempts are one thing) about the same thing (a content word, names aside,
  among the four before each) with different values, and neither also states the other's value:
  they disagree, whatever stance the model gave them.

Known limits: one shared distinctive word is enough, so an off-topic sentence that happens to
use one passes the relevance test; a number written as "one", or split across words ("five
hundred"), is read loosely.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

MIN_EVIDENCE_CHARS = 20
MIN_EVIDENCE_WORDS = 4
MIN_SHARED_WORDS = 2

_WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")
_LETTERS = re.compile(r"[a-z]+")
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
    """Distinct content words of `text`, lower-cased and crudely stemmed; an identifier
    (`wait_for`, `allow_nan`) counts as itself and as its parts ("dead-letter" stays one word)."""
    words = _WORD.findall(text.lower())
    words += [part for word in words if "_" in word for part in word.split("_")]
    return {
        _stem(word)
        for word in words
        if len(word) > 1 and word not in STOPWORDS and not word.isdigit()
    }


def stop_words(text: str) -> tuple[int, int]:
    """How many of `text`'s words are stop words, and how many words it has: prose runs at about
    a third, a signature, an index or a list of links far lower."""
    words = _LETTERS.findall(text.lower())
    return sum(word in STOPWORDS for word in words), len(words)


def _stem(word: str) -> str:
    """Crude suffix stripping, so that inflections meet: "replayed" and "replay", "retries",
    "retried" and "retry", "queues" and "queue", "cached" and "cache", "policies" and "policy"."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


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

# A number: digits with separators, or a number word. Ordinal suffixes ("5th") keep the number.
_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9,
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "twice": 2,
}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,])(\d+(?:[.,]\d+)*|(?i:"
    + "|".join(sorted(_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z]))"
    r"(?:st|nd|rd|th)?"
    r"(?:\s*(k|K|M|bn|(?i:thousand|million|billion))(?![A-Za-z]))?"
)
_SCALE = {"k": 1000, "thousand": 1000, "m": 10**6, "million": 10**6, "bn": 10**9, "billion": 10**9}
_AFTER = re.compile(r"\s*-?\s*([A-Za-z%]+)")

# Units of one kind convert to one base (seconds, bytes), so 60 s equals 1 minute.
_DURATION = {
    "ms": "0.001", "millisecond": "0.001", "milliseconds": "0.001",
    "s": "1", "sec": "1", "secs": "1", "second": "1", "seconds": "1",
    "min": "60", "mins": "60", "minute": "60", "minutes": "60",
    "h": "3600", "hr": "3600", "hrs": "3600", "hour": "3600", "hours": "3600",
    "day": "86400", "days": "86400", "week": "604800", "weeks": "604800",
}  # fmt: skip
_SIZE = {
    "b": "1", "byte": "1", "bytes": "1", "kb": "1000", "kib": "1024", "mb": "1000000",
    "mib": "1048576", "gb": "1000000000", "gib": "1073741824",
}  # fmt: skip
# Count nouns that name the same thing ("5 times" and "3 attempts" can disagree).
_SAME_COUNT = {_stem(noun): "attempt" for noun in ("time", "try", "retry", "delivery", "attempt")}
# Nouns that never count a kind of thing ("5 by default" has no noun at all).
_NOT_COUNTED = STOPWORDS | {"default", "percent", "x"}


@dataclass(frozen=True)
class Figure:
    value: Decimal  # in the kind's base unit for durations and sizes
    kind: str  # "duration", "size", "percent", "count:<noun>" or "" (a bare number)
    text: str  # as stated: "30 seconds"
    at: int  # where it starts in the text


def _value(raw: str) -> Decimal | None:
    word = _WORDS.get(raw.lower())
    if word is not None:
        return Decimal(word)
    if not raw[0].isdigit():
        return None
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw):  # 1,234,567.5
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d+,\d+", raw):  # a decimal comma: 1,5
        raw = raw.replace(",", ".")
    try:
        return Decimal(raw)
    except InvalidOperation:  # 9.9.9, 1.2,3: not one number
        return None


def stated(text: str) -> list[Figure]:
    """Every number `text` states, with its kind when a unit or a counted noun follows it."""
    found = []
    for match in _NUMBER.finditer(text):
        raw, scale = match[1], match[2]
        value = _value(raw)
        if value is None:
            if raw[0].isdigit():  # a version or an identifier: it must appear as it is
                found.append(Figure(Decimal(-1), f"literal:{raw}", raw, match.start()))
            continue
        if scale:
            value *= _SCALE[scale.lower()]
        unit = _AFTER.match(text, match.end())
        word = unit[1].lower() if unit else ""
        if raw[0].isalpha() and not word:  # "five" alone is a word, not a figure
            continue
        found.append(_figure(value, word, text[match.start() : unit.end() if unit else match.end()],
                             match.start()))  # fmt: skip
    return found


def _figure(value: Decimal, word: str, shown: str, at: int) -> Figure:
    if word in _DURATION:
        return Figure(value * Decimal(_DURATION[word]), "duration", shown, at)
    if word in _SIZE:
        return Figure(value * Decimal(_SIZE[word]), "size", shown, at)
    if word in ("%", "percent"):
        return Figure(value, "percent", shown, at)
    if len(word) > 2 and word not in _NOT_COUNTED:
        noun = _stem(word)
        return Figure(value, f"count:{_SAME_COUNT.get(noun, noun)}", shown, at)
    return Figure(value, "", shown, at)


def _key(figure: Figure) -> str:
    return figure.kind if figure.kind.startswith("literal:") else f"{figure.value.normalize():f}"


def figures(text: str) -> set[str]:
    """The numbers `text` states, normalised ("1,000" and "1000" alike; "30.0" is "30")."""
    return {_key(figure) for figure in stated(text)}


_MEASURED = ("duration", "size", "percent")


def unsupported_figures(text: str, quotes: Iterable[str], allowed: str = "") -> list[str]:
    """The figures of `text` that none of `quotes` (nor `allowed`) states, as `text` states them.

    A duration, size or percentage must match in kind and value ("30 hours" is not "30
    seconds", "30,000 ms" is); any other number must appear as a number (or a number word).
    """
    known = [*stated(allowed), *(figure for quote in quotes for figure in stated(quote))]
    numbers = {_key(figure) for figure in known}
    measured = {(figure.kind, figure.value.normalize()) for figure in known}
    missing = []
    for figure in stated(text):
        if figure.kind in _MEASURED:
            supported = (figure.kind, figure.value.normalize()) in measured
        else:
            supported = _key(figure) in numbers
        if not supported and figure.text not in missing:
            missing.append(figure.text)
    return missing


# ---------------------------------------------------------------- conflicts

_CONTEXT_WORDS = 4  # content words before a figure that say what it measures
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]*")


def disagreement(mine: Labelled, theirs: Labelled) -> tuple[str, str] | None:
    """Two quotes (`labelled`) that state a figure of one kind about the same thing (they share
    a content word among the few before it, names aside) with different values, and where
    neither quote also states the other's value for it: what each says."""
    for left, left_context in mine:
        for right, right_context in theirs:
            if left.kind != right.kind or left.value == right.value:
                continue
            if not left_context & right_context:
                continue
            if _states(mine, right) or _states(theirs, left):
                continue
            return left.text, right.text
    return None


Labelled = list[tuple[Figure, set[str]]]


def labelled(text: str) -> Labelled:
    """The quote's measured or counted figures, each with the content words just before it
    (names and units aside). The text is tokenised once; each figure looks back a few words."""
    words = [
        (match.start(), _stem(match[0].lower()))
        for match in _TOKEN.finditer(text)
        if not match[0][0].isupper() and _context_word(match[0].lower())
    ]
    starts = [start for start, _ in words]
    result = []
    for figure in stated(text):
        if figure.kind in _MEASURED or figure.kind.startswith("count:"):
            index, recent = bisect.bisect_left(starts, figure.at), set[str]()
            while index > 0 and len(recent) < _CONTEXT_WORDS:
                index -= 1
                recent.add(words[index][1])
            result.append((figure, recent))
    return result


def _context_word(word: str) -> bool:
    return len(word) > 1 and word not in STOPWORDS and not word.isdigit() and word not in _DURATION


def _states(figures: Labelled, figure: Figure) -> bool:
    return any(own.kind == figure.kind and own.value == figure.value for own, _ in figures)


# ---------------------------------------------------------------- negation

_NEGATIONS = frozenset(
    "not no never cannot can't won't doesn't don't isn't aren't wasn't weren't nothing none "
    "neither nor without".split()
)


def negates(text: str, quotes: Iterable[str]) -> bool:
    """`text` says "not", "never", ... and none of `quotes` negates anything."""

    def negated(value: str) -> bool:
        return bool(_NEGATIONS & set(re.findall(r"[a-z']+", value.lower().replace("\u2019", "'"))))

    return negated(text) and not any(negated(quote) for quote in quotes)
