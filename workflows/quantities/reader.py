# ruff: noqa: RUF001, RUF002 -- confusable characters are what this module is about
"""The quantity reader (pure): every figure a text states, as a `Quantity` (see
`workflows.quantities`). Its words are `lexicon`'s."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Literal

from workflows.canonical import canonical
from workflows.quantities.lexicon import (
    AFTER,
    BEFORE,
    BEFORE_PRONOUN,
    ERA_WORDS,
    GLUED_ONLY,
    GLUED_SCALES,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NEGATED,
    NEGATORS,
    NOT_NOUNS,
    ORDINALS,
    QUALIFIER_WORDS,
    SCALES,
    SMALL,
    SYNONYMS,
    UNIT_NAMES,
    UNIT_WORDS,
    UNITS,
    VERB_MONTHS,
    VERSION_NOUNS,
    VERSION_WORDS,
)
from workflows.text import clauses

READ_CACHE = 4_096  # texts whose figures a worker process keeps read (quotes, claims, questions)

Kind = Literal["amount", "version", "year", "date"]

# The reader's lexer: numbers (with their dots and commas), runs of letters, any other mark.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:\.x\b)?|[^\W\d_]+|\S")
_ERA = re.compile(
    r"(?i)\b(?:before|prior to|until|earlier than|older than|up to and including)\s+"
    r"(?:version\s+|release\s+|v)?\d+(?:\.\d+)*(?:\.x)?\b"
    r"|\b\d+(?:\.\d+)*\.x\b|\b\d+(?:\.\d+)+\s+and\s+(?:earlier|older|below)\b"
    r"|\b(?:older|earlier|previous|legacy|old)\s+(?:releases?|versions?|servers?|clients?)\b"
    r"|\b(?:used to|previously|formerly|originally|no longer)\b"
)


# ---------------------------------------------------------------- what a figure is


@dataclass(frozen=True)
class Quantity:
    kind: Kind
    value: Decimal | None  # base unit for durations and sizes; the low end of a range
    text: str  # as the sentence shows it: "30 seconds", "up to 1000 attempts", "v1.4"
    at: int  # where it starts in the canonical text
    high: Decimal | None = None  # the high end of a range
    unit: str = ""  # "duration", "size", "percent" or "" (a count or a bare number)
    noun: str = ""  # what it counts ("attempt", "message"), "" when bare or measured
    qualifier: str = "exactly"
    per: str = ""  # "second" for "per second"
    era: str = ""  # "before 2.0": the sentence ties the figure to an older version or time
    # "at most" when its paragraph calls the figure a maximum ("Maximum number of retries ...
    # set to 3", "max_retries = 3"), "at least" when a minimum: what a bare figure there bounds
    bound: str = ""
    name: str = field(default="", compare=False)  # a version, year or date as written
    # the words of its sentence that lead to it, with it: "this option is set to 3"
    words: str = field(default="", compare=False)

    def describe(self) -> str:
        """The figure in words, for a refusal: "30 seconds (a duration)", "1 to 1000 (a range)"."""
        parts = [self.measured()] if self.unit or self.noun else []
        if self.qualifier != "exactly":
            parts.insert(0, self.qualified())
        if self.era:
            parts.append(f"tied to {self.era}")
        return f"{self.text} ({', '.join(parts)})" if parts else self.text

    def measured(self) -> str:
        """What it measures or counts, in words: "a duration", "counting delivery attempts"."""
        if self.unit:
            return UNIT_WORDS.get(self.unit, self.unit)
        if self.noun:  # several words are a set, in no order: name only one
            return f"counting {plural(self.noun)}" if " " not in self.noun else "a count"
        return "a bare number"

    def qualified(self) -> str:
        """Its qualifier, in words: "a range", "at most", "with no qualifier"."""
        if self.qualifier == "range":
            return "a range"
        return "with no qualifier" if self.qualifier == "exactly" else self.qualifier

    def said(self) -> str:
        """The figure as its text says it, for a refusal: the words leading to it, quoted."""
        return f'"{self.words or self.text}"'


def plural(noun: str) -> str:
    """ "process" -> "processes", "retry" -> "retries", "extra task" -> "extra tasks"."""
    head, _, last = noun.rpartition(" ")
    if last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


@dataclass
class _Token:
    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def number(self) -> bool:
        return self.text[0].isdigit()

    @property
    def word(self) -> bool:
        return self.text[0].isalpha()


def read(text: str) -> list[Quantity]:
    """Every figure `text` states (amounts, versions, years, dates), in order."""
    return list(_read(text))


# The gate reads each quote once for every statement citing it, and again at every finish: the
# same texts, read in a worker's every run (measured: a twentieth of a worker's CPU per step with
# a real model, before). A pure function of the text, so what a run decides is the same.
@functools.lru_cache(maxsize=READ_CACHE)
def _read(text: str) -> tuple[Quantity, ...]:
    text = canonical(text)
    tokens = [_Token(m[0], m.start(), m.end()) for m in _TOKEN.finditer(text)]
    spans = clauses(text)
    eras = _eras(text, spans)
    dates = _full_dates(text)
    found: list[Quantity] = []
    index = 0
    while index < len(tokens):
        start = tokens[index].start
        date = next(((item, end) for item, end in dates if item.at <= start < end), None)
        if date is not None:  # "1 May 2023", "May 1, 2023", "2023-05-01": one date
            found.append(date[0])
            while index < len(tokens) and tokens[index].start < date[1]:
                index += 1
            continue
        quantity, index = _at(text, tokens, index)
        if quantity is not None:
            era = next((name for start, end, name in eras if start <= quantity.at < end), "")
            if era and quantity.kind == "amount":
                quantity = _replace(quantity, era=era)
            bound = _bound(text, quantity)
            if bound:
                quantity = _replace(quantity, bound=bound)
            found.append(_replace(quantity, words=_lead(text, quantity, spans)))
    return tuple(found)


_LEAD_WORDS = 5  # words of its sentence before a figure that a refusal shows with it


def _lead(text: str, quantity: Quantity, spans: list[tuple[int, int]]) -> str:
    """The figure with the words of its clause just before it: "this option is set to 3"."""
    start = next((first for first, _ in reversed(spans) if first <= quantity.at), 0)
    before = text[start : quantity.at].split()[-_LEAD_WORDS:]
    return " ".join([*before, *quantity.text.split()])


_MAXIMUM = re.compile(r"(?i)(?<![^\W_])(?:maximum|max|limit|limits|cap|capped)(?![^\W_])")
_MINIMUM = re.compile(r"(?i)(?<![^\W_])(?:minimum|min)(?![^\W_])")
_PARAGRAPH = re.compile(r"\n\s*\n")


def _bound(text: str, quantity: Quantity) -> str:
    """ "at most" for a bare amount in a paragraph that names a maximum and no minimum
    (`Quantity.bound`), "at least" the other way round, else ""."""
    if quantity.kind != "amount" or quantity.qualifier != "exactly":
        return ""
    starts = [match.end() for match in _PARAGRAPH.finditer(text, 0, quantity.at)]
    after = _PARAGRAPH.search(text, quantity.at)
    paragraph = text[starts[-1] if starts else 0 : after.start() if after else len(text)]
    maximum, minimum = _MAXIMUM.search(paragraph), _MINIMUM.search(paragraph)
    if maximum and not minimum:
        return "at most"
    return "at least" if minimum and not maximum else ""


_MONTH_NUMBERS = {
    name: number
    for number, abbreviation in enumerate(MONTH_ABBREVIATIONS, start=1)
    for name in MONTHS
    if name[:3] == abbreviation
}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_FULL_DATES = [
    re.compile(r"(?<![\w.-])(?P<year>\d{4})-(?P<number>[01]\d)-(?P<day>[0-3]\d)(?!\w|-\w|\.\d)"),
    re.compile(rf"(?i)(?<![\w.]){_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?P<year>\d{{4}})(?!\w|\.\d)"),
    re.compile(rf"(?i)(?<![\w.]){_MONTH}\s+{_DAY},?\s+(?P<year>\d{{4}})(?!\w|\.\d)"),
]


def _full_dates(text: str) -> list[tuple[Quantity, int]]:
    """Each calendar date with its year (and where it ends), named the same however it is
    written: "1 May 2023", "May 1st, 2023" and "2023-05-01" are all the date 2023-05-01."""
    found: list[tuple[Quantity, int]] = []
    for pattern in _FULL_DATES:
        for match in pattern.finditer(text):
            parts = match.groupdict()
            month = int(parts["number"]) if parts.get("number") else 0
            month = month or _MONTH_NUMBERS.get(parts["month"].lower(), 0)
            day = int(parts["day"])
            if not (1 <= month <= 12 and 1 <= day <= 31):
                continue
            if any(item.at < match.end() and match.start() < end for item, end in found):
                continue
            name = f"{parts['year']}-{month:02d}-{day:02d}"
            found.append((Quantity("date", None, match[0], match.start(), name=name), match.end()))
    return sorted(found, key=lambda item: item[0].at)


def date_parts(name: str) -> list[str]:
    """What a full date names on its own: its year and its day and month ("2023-05-01": "2023"
    and "1 may"); nothing for any other name."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\d", name):
        return []
    year, month, day = name.split("-")
    return [year, f"{int(day)} {MONTH_ABBREVIATIONS[int(month) - 1]}"]


def _replace(quantity: Quantity, **changes: object) -> Quantity:
    values = {name: getattr(quantity, name) for name in quantity.__dataclass_fields__}
    values.update(changes)
    return Quantity(**values)


def _eras(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(start, end, era) of each sentence that ties what it says to an older version or time,
    and before them, of each figure a change note replaces: in "Changed in version 2.0: the
    default is None instead of 12 hours", 12 hours is the value before 2.0 (the note may
    stand on its own line above the sentence)."""
    tied: list[tuple[int, int, str]] = []
    replaced_by: list[tuple[int, int, str]] = []
    changed = ""
    for start, end in spans:
        sentence = text[start:end]
        era = next((found for found in _ERA.finditer(sentence) if _era(sentence, found)), None)
        if era is not None:
            tied.append((start, end, " ".join(era[0].lower().split())))
        note = _CHANGED.search(sentence)
        changed = note[1] if note is not None else changed
        if changed:
            for replaced in _REPLACED.finditer(sentence):
                stop = _CLAUSE_STOP.search(sentence, replaced.end())
                clause_end = start + (stop.start() if stop else len(sentence))
                replaced_by.append((start + replaced.start(), clause_end, f"before {changed}"))
        if note is None or sentence[note.end() :].strip(" .:\n"):
            changed = ""  # a note on its own line governs the sentence below it only
    return replaced_by + tied


# "used to" says "formerly", but not after a form of "be" or "get": "is used to set it".
_USED_TO_BEFORE = re.compile(r"(?i)\b(?:is|are|was|were|be|been|being|get|gets|got)\s+$")
_CHANGED = re.compile(r"(?i)\bchanged\s+in\s+(?:version\s+|release\s+|v)?(\d+(?:\.\d+)+|\d+)\b")
_REPLACED = re.compile(r"(?i)\b(?:instead\s+of|rather\s+than|was\s+previously|previously)\b")
_CLAUSE_STOP = re.compile(r"[,;:()]|\b(?:and|but)\b")


def _era(sentence: str, found: re.Match[str]) -> bool:
    if found[0].lower().startswith("used to"):
        return _USED_TO_BEFORE.search(sentence[: found.start()]) is None
    return True


def _glued(tokens: list[_Token], index: int) -> bool:
    return 0 < index < len(tokens) and tokens[index - 1].end == tokens[index].start


def _at(text: str, tokens: list[_Token], index: int) -> tuple[Quantity | None, int]:
    """The figure starting at tokens[index] (or None) and the index after it."""
    token = tokens[index]
    if token.number:
        return _digits(text, tokens, index)
    if token.word:
        return _words(text, tokens, index)
    return None, index + 1


def _digits(text: str, tokens: list[_Token], index: int) -> tuple[Quantity | None, int]:
    token = tokens[index]
    before = tokens[index - 1] if index else None
    setting = ""  # "max_retries=5": the value of a setting, counting what the setting names
    if before is not None and _glued(tokens, index):
        if before.lower in ("v", "ver") and not _glued(tokens, index - 1):
            return _name("version", token, tokens, index, prefix=before), index + 1
        if before.text == "=" and _glued(tokens, index - 1) and tokens[index - 2].word:
            name = tokens[index - 2].lower
            if name in UNITS and name not in GLUED_ONLY:  # timedelta(days=31) is 31 days
                value = _decimal(token.text)
                if value is not None:
                    return _measured(text, tokens, index, value, UNITS[name])
            setting = _nouns([name])  # retries=3 counts attempts, not workers
        elif before.word or before.text in "_./:#@-–&=":
            return None, _skip_identifier(tokens, index)
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    if after is not None and _glued(tokens, index + 1):
        if after.lower in ("st", "nd", "rd", "th"):  # 5th: an ordinal
            return None, index + 2
        if token.text.endswith(".x"):
            return _name("version", token, tokens, index), index + 1
        if after.word and after.text not in GLUED_SCALES and after.lower not in UNITS:
            return None, _skip_identifier(tokens, index)
        if after.text in (":", "/", "_") and index + 2 < len(tokens) and _glued(tokens, index + 2):
            return None, _skip_identifier(tokens, index)
    if token.text.count(".") >= 2 or token.text.endswith(".x"):
        return _name("version", token, tokens, index), index + 1
    if after is not None and _month(after) and 1 <= _int(token.text) <= 31:
        return _name("date", token, tokens, index, suffix=after), index + 2
    if before is not None and _month(before) and 1 <= _int(token.text) <= 31:
        return _name("date", token, tokens, index, prefix=before), index + 1
    value = _decimal(token.text)
    if value is None:
        return None, index + 1
    if _year(token.text) and not _counted_after(tokens, index + 1):
        return _name("year", token, tokens, index), index + 1
    if "." in token.text and after is not None and after.lower in VERSION_NOUNS:
        return _name("version", token, tokens, index), index + 1  # "the 2.0 release"
    if before is not None and "," not in token.text and _names_version(tokens, index):
        return _name("version", token, tokens, index), index + 1
    fraction = _fraction_at(tokens, index)
    if fraction is not None:
        return _amount(text, tokens, index, fraction[1], fraction[0], noun=setting)
    return _amount(text, tokens, index, index + 1, value, noun=setting)


def _month(token: _Token) -> bool:
    return token.lower in MONTHS and (token.lower not in VERB_MONTHS or token.text[0].isupper())


def _names_version(tokens: list[_Token], index: int) -> bool:
    """ "version 2", "PostgreSQL 15", "Harbor Queue 2.1", "before 2.0": a name, not an amount."""
    before, token = tokens[index - 1], tokens[index]
    if _unit(tokens, index + 1)[1]:
        return False  # "after 2.5 seconds": measured
    counted = _counted_after(tokens, index + 1)
    if before.lower in VERSION_WORDS:
        return True
    if "." in token.text and before.lower in ERA_WORDS:
        return not counted
    if not before.word or not before.text[0].isupper() or before.lower in NOT_NOUNS:
        return False
    if before.lower in QUALIFIER_WORDS:
        return False
    product = any(char.isupper() or char.isdigit() for char in before.text[1:])
    if "." in token.text and not _glued(tokens, index):
        return True  # a name and its dotted number: "Python 3.11", "Harbor Queue 2.1"
    sentence_start = index < 2 or tokens[index - 2].text in ".;:!?"
    return product or not (sentence_start or counted)


def _fraction_at(tokens: list[_Token], index: int) -> tuple[Decimal, int] | None:
    """ "1⁄2" (a vulgar fraction as `canonical` writes it) or "1 1⁄2": (value, end)."""

    def simple(at: int) -> Decimal | None:
        if at + 2 >= len(tokens) or tokens[at + 1].text != "\u2044":
            return None
        if not (_glued(tokens, at + 1) and _glued(tokens, at + 2) and tokens[at + 2].number):
            return None
        numerator, denominator = _decimal(tokens[at].text), _decimal(tokens[at + 2].text)
        if numerator is None or not denominator:
            return None
        return numerator / denominator

    alone = simple(index)
    if alone is not None:
        return alone, index + 3
    whole = _decimal(tokens[index].text)
    if whole is not None and index + 1 < len(tokens) and not _glued(tokens, index + 1):
        part = simple(index + 1) if tokens[index + 1].number else None
        if part is not None:
            return whole + part, index + 4
    return None


def _int(raw: str) -> int:
    return int(raw) if raw.isdigit() else -1


def _year(raw: str) -> bool:
    return raw.isdigit() and len(raw) == 4 and 1900 <= int(raw) <= 2100


def _counted_after(tokens: list[_Token], index: int) -> bool:
    """A plural noun or a unit follows: "2000 messages", "2048 bytes" are amounts, not years."""
    if index >= len(tokens):
        return False
    word = tokens[index].lower
    return (
        word in UNITS
        or word in SCALES
        or (tokens[index].word and word.endswith("s") and word not in NOT_NOUNS and len(word) > 3)
    )


def _skip_identifier(tokens: list[_Token], index: int) -> int:
    while index + 1 < len(tokens) and _glued(tokens, index + 1):
        index += 1
    return index + 1


def _name(
    kind: Kind,
    token: _Token,
    tokens: list[_Token],
    index: int,
    prefix: _Token | None = None,
    suffix: _Token | None = None,
) -> Quantity:
    shown = token.text
    if kind == "version":
        shown = token.text.removeprefix("v")
    elif kind == "date":
        month = (prefix or suffix or token).lower[:3]
        shown = f"{int(token.text)} {month}"
    first = prefix or token
    last = suffix or token
    shown_text = first.text + ("" if first is token or _glued(tokens, index) else " ")
    shown_text = token.text if first is token else shown_text + token.text
    if last is not token:
        shown_text += " " + last.text
    return Quantity(kind, _decimal(token.text), shown_text, first.start, name=shown)


def _decimal(raw: str) -> Decimal | None:
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw):  # 1,234,567.5
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d+,\d{1,2}", raw):  # a decimal comma: 1,5
        raw = raw.replace(",", ".")
    try:
        return Decimal(raw)
    except InvalidOperation:  # 1.2,3 or 4,5678: not one number
        return None


# ---------------------------------------------------------------- number words


def _words(text: str, tokens: list[_Token], index: int) -> tuple[Quantity | None, int]:
    token = tokens[index]
    word = token.lower
    if word in ORDINALS or word not in (*SMALL, *SCALES, "dozen", "a", "an", "twice", "half"):
        return None, index + 1
    if _glued(tokens, index) and tokens[index - 1].text in "-_":  # "one-third-party", x_two
        return None, index + 1
    if word == "twice":
        return _amount(text, tokens, index, index + 1, Decimal(2), noun="attempt")
    if word in ("a", "one") and _single(tokens, index + 1):  # "a single worker": one worker
        if index > 0 and tokens[index - 1].lower in ("not", "without"):
            return None, index + 2  # "not a single worker": none
        return _amount(text, tokens, index, index + 2, Decimal(1))
    parsed = _number_words(tokens, index)
    if parsed is None:
        return None, index + 1
    value, end = parsed
    pronoun = index > 0 and tokens[index - 1].lower in BEFORE_PRONOUN
    if word == "one" and end == index + 1 and (pronoun or not _noun_follows(tokens, end, 1)):
        return None, end  # "one of them", "no one", "a setting of one means": a pronoun
    # "One trade-off is ...": an article opening a sentence; "One hour later" is a figure
    if token.text == "One" and end == index + 1 and _sentence_start(text, tokens, index):
        return (
            (None, end) if not _unit(tokens, end)[1] else _amount(text, tokens, index, end, value)
        )
    return _amount(text, tokens, index, end, value)


def _sentence_start(text: str, tokens: list[_Token], index: int) -> bool:
    if index == 0:
        return True
    return (
        tokens[index - 1].text in ".;:!?"
        or "\n" in text[tokens[index - 1].end : tokens[index].start]
    )


def _single(tokens: list[_Token], index: int) -> bool:
    """tokens[index] is "single" before the noun it counts (not "single-threaded")."""
    if index + 1 >= len(tokens) or tokens[index].lower != "single":
        return False
    return not _glued(tokens, index + 1) and _noun_follows(tokens, index + 1)


def _number_words(tokens: list[_Token], index: int) -> tuple[Decimal, int] | None:
    """A run of number words from tokens[index]: "twenty-five", "two hundred and fifty",
    "one billion", "a dozen"; None when there is none."""
    first = tokens[index].lower
    if first == "zero":
        return Decimal(0), index + 1
    total, current, last, end = 0, 0, "", index
    position = index
    while position < len(tokens):
        word = tokens[position].lower
        following = tokens[position + 1].lower if position + 1 < len(tokens) else ""
        if word in ("a", "an") and not last and following in (*SCALES, "dozen"):
            current, last = 1, "a"
        elif word in SMALL and word != "zero" and _may_follow(last, SMALL[word]):
            current += SMALL[word]
            last = "unit" if SMALL[word] < 10 else "teen" if SMALL[word] < 20 else "tens"
        elif word == "hundred" and last in ("a", "unit", "teen"):
            current, last = current * 100, "hundred"
        elif word in SCALES and word != "hundred" and last and last != "scale":
            total, current, last = total + current * SCALES[word], 0, "scale"
        elif word == "dozen" and last in ("a", "unit", "teen"):
            current, last = current * 12, "dozen"
        elif word == "and" and last in ("hundred", "scale") and following in SMALL:
            pass
        elif word in ("-", "\u2013") and last == "tens" and following in SMALL:
            if not (_glued(tokens, position) and _glued(tokens, position + 1)):
                break
        else:
            break
        position += 1
        if word not in ("and", "-", "\u2013"):
            end = position
    if not last or last == "a":
        return None
    return Decimal(total + current), end


def _may_follow(last: str, value: int) -> bool:
    """Whether a number word of `value` may follow the word kind `last` in one number."""
    if not last:
        return True
    if value < 10:
        return last in ("tens", "hundred", "scale")
    return last in ("hundred", "scale")


def _noun_follows(tokens: list[_Token], index: int, value: Decimal | int | None = None) -> bool:
    if index >= len(tokens):
        return False
    word = tokens[index].lower
    if word in UNITS:
        return True
    if value == 1 and _verb_after_one(word):
        return False
    return tokens[index].word and word not in NOT_NOUNS and word != "another"


def _verb_after_one(word: str) -> bool:
    """What follows "one" or "1" ending in -s is a verb ("one means", "1 lets"): a noun one
    thing counts is singular."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


# ---------------------------------------------------------------- amounts


def _amount(
    text: str, tokens: list[_Token], start: int, end: int, value: Decimal, noun: str = ""
) -> tuple[Quantity, int]:
    """The amount whose number spans tokens[start:end]: scale, unit or noun, qualifier, range."""
    end, value = _scaled(tokens, end, value)
    end, value = _exponent(tokens, end, value)
    end, unit, noun_found, factor = _unit(tokens, end, value)
    noun = noun or noun_found
    base = value * factor
    qualifier, first = _qualifier_before(tokens, start)
    high: Decimal | None = None
    ranged = _range_end(tokens, end, start)
    if ranged is not None and (ranged[2] == unit or not ranged[2] or not unit):
        high_end, high_value, high_unit, high_factor = ranged
        if not unit:
            unit, base = high_unit, value * high_factor
        high, end, qualifier = (
            high_value * (high_factor if high_unit else factor),
            high_end,
            "range",
        )
    else:
        end, qualifier = _qualifier_after(tokens, end, qualifier)
    end, per = _per(tokens, end)
    if qualifier == "range" and first > 0 and tokens[first - 1].lower in ("between", "from"):
        first -= 1
    shown = text[tokens[first].start : tokens[end - 1].end]
    return (
        Quantity(
            "amount", base, shown, tokens[first].start, high=high, unit=unit, noun=noun,
            qualifier=qualifier, per=per,
        ),
        end,
    )  # fmt: skip


def _measured(
    text: str, tokens: list[_Token], index: int, value: Decimal, unit: tuple[str, str]
) -> tuple[Quantity, int]:
    """A value whose unit is the name it is given (days=31): that many of the unit."""
    kind, factor = unit
    first = tokens[index - 2]
    figure = Quantity("amount", value * Decimal(factor), text[first.start : tokens[index].end],
                      first.start, unit=kind)  # fmt: skip
    return figure, index + 1


def _scaled(tokens: list[_Token], end: int, value: Decimal) -> tuple[int, Decimal]:
    """ "10k", "2.5 million", "1 billion": the number times its scale."""
    if end < len(tokens):
        word = tokens[end]
        if word.text in GLUED_SCALES and _glued(tokens, end):
            return end + 1, value * GLUED_SCALES[word.text]
        if word.lower in SCALES:
            return end + 1, value * SCALES[word.lower]
    return end, value


def _exponent(tokens: list[_Token], end: int, value: Decimal) -> tuple[int, Decimal]:
    """10^2 (a superscript written out by `canonical`): the power."""
    power = end + 1 < len(tokens) and tokens[end].text == "^" and tokens[end + 1].text.isdigit()
    if power and _glued(tokens, end) and _glued(tokens, end + 1) and len(tokens[end + 1].text) < 3:
        return end + 2, value ** int(tokens[end + 1].text)
    return end, value


def _unit(
    tokens: list[_Token], end: int, value: Decimal | None = None
) -> tuple[int, str, str, Decimal]:
    """(end, unit kind, counted nouns, factor to the base unit) of what follows a number (of
    `value`, when known: "1 means" is a verb after one)."""
    position, glued = end, _glued(tokens, end)
    hyphen = position + 1 < len(tokens) and tokens[position].text in ("-", "\u2013")
    if hyphen and glued and _glued(tokens, position + 1) and tokens[position + 1].word:
        position, glued = position + 1, False  # "60-second", "two-phase"
    if position >= len(tokens):
        return end, "", "", Decimal(1)
    token = tokens[position]
    name = token.lower
    if name in UNITS and (glued or name not in GLUED_ONLY):
        kind, factor = UNITS[name]
        return position + 1, kind, "", Decimal(factor)
    if not token.word or glued:
        return end, "", "", Decimal(1)
    nouns: list[str] = []
    while position < len(tokens) and len(nouns) < 2:
        word = tokens[position]
        if not word.word or word.lower in NOT_NOUNS or word.text[0].isupper():
            break
        if word.lower in UNITS and word.lower not in GLUED_ONLY:
            break
        if not nouns and value == 1 and _verb_after_one(word.lower):
            break
        nouns.append(word.lower)
        position += 1
    if not nouns:
        return end, "", "", Decimal(1)
    return position, "", _nouns(nouns), Decimal(1)


def _nouns(words: list[str]) -> str:
    """The counted words as one sorted, space-separated set ("attempt", "consumer handle")."""
    return " ".join(sorted({SYNONYMS.get(word) or singular(word) for word in words}))


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _qualifier_before(tokens: list[_Token], start: int) -> tuple[str, int]:
    """The qualifier just before tokens[start] and the index where the figure's text starts."""
    for phrase, qualifier in BEFORE:
        words = phrase.split()
        first = start - len(words)
        if first < 0:
            continue
        if [token.lower for token in tokens[first:start]] == words:
            if qualifier in NEGATED and _negated(tokens, first):
                return NEGATED[qualifier], first  # "never more than 5": at most 5
            return qualifier, first
    return "exactly", start


# A bound said with a negation is the other bound: "never more than 5" is at most 5, "not under


def _negated(tokens: list[_Token], first: int) -> bool:
    """A negation right before tokens[first], or one word before it ("never makes more than",
    "may not be above"); a word further back is another clause's."""
    for back in (1, 2):
        at = first - back
        if at < 0 or not tokens[at].word:
            return False
        if tokens[at].lower in NEGATORS:
            return True
    return False


def _qualifier_after(tokens: list[_Token], end: int, qualifier: str) -> tuple[int, str]:
    """ "5 or more", "5+", and "twice (or more)": an aside in brackets qualifies as well."""
    bracket = end < len(tokens) and tokens[end].text == "("
    start = end + 1 if bracket else end
    for phrase, after in AFTER:
        words = phrase.split()
        if [token.lower for token in tokens[start : start + len(words)]] == words:
            if phrase == "+" and (bracket or not _glued(tokens, end)):
                continue
            close = start + len(words)
            if bracket and not (close < len(tokens) and tokens[close].text == ")"):
                continue
            return close + bracket, after if qualifier == "exactly" else qualifier
    return end, qualifier


def _range_end(
    tokens: list[_Token], end: int, start: int
) -> tuple[int, Decimal, str, Decimal] | None:
    """The high end of "1 to 1000", "5-10 seconds", "between 2 and 5", "1 second to 12 hours",
    "from 1 second up to 12 hours":
    (end, value, unit kind, factor), or None."""
    if end + 1 >= len(tokens):
        return None
    joiner = tokens[end].lower
    between = start > 0 and tokens[start - 1].lower == "between"
    if (  # "from 1 second up to 12 hours" is the range "1 second to 12 hours"
        joiner == "up"
        and start > 0
        and tokens[start - 1].lower == "from"
        and end + 2 < len(tokens)
        and tokens[end + 1].lower == "to"
    ):
        end, joiner = end + 1, "to"
    dash = joiner in ("-", "\u2013") and _glued(tokens, end) == _glued(tokens, end + 1)
    if not (joiner in ("to", "through") or dash or (joiner == "and" and between)):
        return None
    following = tokens[end + 1]
    if following.number and following.text.count(".") < 2:
        value = _decimal(following.text)
        position = end + 2
    elif following.lower in SMALL:
        parsed = _number_words(tokens, end + 1)
        value, position = parsed if parsed is not None else (None, end)
    else:
        return None
    if value is None or (position < len(tokens) and _glued(tokens, position)
                         and tokens[position].word and tokens[position].lower not in UNITS
                         and tokens[position].text not in GLUED_SCALES):  # fmt: skip
        return None
    position, value = _scaled(tokens, position, value)
    position, unit, _, factor = _unit(tokens, position)
    return position, value, unit, factor


def _per(tokens: list[_Token], end: int) -> tuple[int, str]:
    """ "per second", "/s", "a day" after an amount: what it is a rate of."""
    if end + 1 < len(tokens) and tokens[end].lower in ("per", "/", "a", "an", "each", "every"):
        unit = tokens[end + 1].lower
        if unit in UNITS and UNITS[unit][0] == "duration":
            if tokens[end].lower in ("a", "an") and unit in GLUED_ONLY:
                return end, ""
            return end + 2, UNIT_NAMES.get(UNITS[unit][1], unit)
        if tokens[end].lower == "per" and tokens[end + 1].word:
            return end + 2, singular(unit)
    return end, ""
