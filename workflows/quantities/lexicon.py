"""The quantity reader's vocabulary (data): units and their factors, number words, qualifier
phrases, the words that make a number a version or leave it uncounted, months. Words of the
language only: no product's name (a name before a number is read by its form, `reader`)."""

from __future__ import annotations

UNITS: dict[str, tuple[str, str]] = {}
for _spellings, _kind, _factor in (
    ("ms msec millisecond milliseconds", "duration", "0.001"),
    ("us μs microsecond microseconds", "duration", "0.000001"),
    ("ns nanosecond nanoseconds", "duration", "0.000000001"),
    ("s sec secs second seconds", "duration", "1"),
    ("m min mins minute minutes", "duration", "60"),
    ("h hr hrs hour hours", "duration", "3600"),
    ("d day days", "duration", "86400"),
    ("w week weeks", "duration", "604800"),
    ("b byte bytes", "size", "1"),
    ("kb kilobyte kilobytes", "size", "1000"),
    ("kib kibibyte kibibytes", "size", "1024"),
    ("mb megabyte megabytes", "size", "1000000"),
    ("mib mebibyte mebibytes", "size", "1048576"),
    ("gb gigabyte gigabytes", "size", "1000000000"),
    ("gib gibibyte gibibytes", "size", "1073741824"),
    ("tb terabyte terabytes", "size", "1000000000000"),
    ("% percent per-cent", "percent", "1"),
):
    for _spelling in _spellings.split():
        UNITS[_spelling] = (_kind, _factor)
# Units that are also ordinary words or letters: read as units only glued to digits ("5m",
# "4d"); "5 m" could be metres, "5 d" anything.
GLUED_ONLY = frozenset("m d w b us ns".split())

SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9,
           "trillion": 10**12}  # fmt: skip
GLUED_SCALES = {"k": 1000, "K": 1000, "M": 10**6, "bn": 10**9}
ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "thirtieth fortieth fiftieth hundredth thousandth millionth".split()
)
MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# Month names that are also ordinary words ("-c 10 may reserve", "10 march on"): a month only
# when written with a capital.
VERB_MONTHS = frozenset("may march mar".split())

# Qualifier phrases, longest first; each names its class.
BEFORE = [
    # A negated comparative is the other bound: "no larger than 5 MB" is at most 5 MB.
    *[(f"{no} {word} than", "at most")
      for no in ("no", "not") for word in "greater larger bigger longer higher".split()],
    *[(f"{no} {word} than", "at least")
      for no in ("no", "not") for word in "smaller shorter lower".split()],
    ("no fewer than", "at least"), ("no less than", "at least"), ("not less than", "at least"),
    ("a minimum of", "at least"), ("at least", "at least"), ("minimum", "at least"),
    ("min", "at least"),
    ("no more than", "at most"), ("not more than", "at most"), ("a maximum of", "at most"),
    ("at most", "at most"), ("up to", "at most"), ("maximum", "at most"), ("max", "at most"),
    ("capped at", "at most"), ("not exceeding", "at most"), ("never exceeding", "at most"),
    ("without exceeding", "at most"), ("not in excess of", "at most"),
    ("more than", "more than"), ("greater than", "more than"), ("larger than", "more than"),
    ("bigger than", "more than"), ("longer than", "more than"), ("higher than", "more than"),
    ("in excess of", "more than"), ("exceeding", "more than"), ("over", "more than"),
    ("above", "more than"), ("fewer than", "fewer than"), ("less than", "fewer than"),
    ("smaller than", "fewer than"), ("shorter than", "fewer than"), ("lower than", "fewer than"),
    ("under", "fewer than"), ("below", "fewer than"),
    ("approximately", "about"), ("about", "about"), ("around", "about"), ("roughly", "about"),
    ("nearly", "about"), ("almost", "about"), ("circa", "about"), ("~", "about"),
    ("exactly", "exactly"), ("precisely", "exactly"),
]  # fmt: skip
AFTER = [("or more", "at least"), ("or fewer", "at most"), ("or less", "at most"),
          ("and more", "at least"), ("and above", "at least"), ("or above", "at least"),
          ("+", "at least")]  # fmt: skip
QUALIFIERS = ("exactly", "at least", "at most", "more than", "fewer than", "about", "range")

# Nouns that count one thing: "5 times", "5 tries", "5 retries", "5 delivery attempts".
SYNONYMS = {
    word: "attempt"
    for word in "time times try tries retry retries attempt attempts delivery deliveries "
    "redelivery redeliveries".split()
}
# Words after a number that do not say what it counts.
NOT_NOUNS = frozenset(
    "a an and are as at be been but by can could do does for from had has have if in into is it "
    "its may might must no not of on or our should so such than that the their them then there "
    "these they this those to was we were when where which while will with would default "
    "defaults per times x vs versus before after over under between during until since via "
    "within without against among across through "
    # adverbs: "one still lets", "10 also run"
    "still also only just always never often usually even already actually simply really "
    "now again merely typically generally thus therefore however instead yet ever rather "
    "sometimes later".split()
) - {"times"}
# Words before a bare number that make it a version or a name: "version 2", "PostgreSQL 15".
VERSION_WORDS = frozenset("version versions release releases v ver".split())
# Words after a dotted number that make it a version: "the 2.0 release", "the 1.4 series".
VERSION_NOUNS = frozenset("release version series branch line".split())

BEFORE_PRONOUN = frozenset("no any every some each the this that which".split())
ERA_WORDS = frozenset("before since until after in than from to and or".split())
QUALIFIER_WORDS = frozenset(word for phrase, _ in BEFORE for word in phrase.split())

UNIT_WORDS = {"duration": "a duration", "size": "a size", "percent": "a percentage"}
MONTH_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
# 5" at least 5 ("no more than" and the like are phrases of their own above).
NEGATORS = frozenset("not never no without nothing cannot t".split())  # t: don't, doesn't
NEGATED = {"more than": "at most", "fewer than": "at least"}
UNIT_NAMES = {"0.001": "millisecond", "1": "second", "60": "minute", "3600": "hour",
               "86400": "day", "604800": "week"}  # fmt: skip
