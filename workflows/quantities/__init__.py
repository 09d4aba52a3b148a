"""Figures as quantities (pure): what a sentence states, read as value, unit or noun, qualifier.

`read(text)` finds every figure of a sentence and says what it is:

- an **amount**: a value (digits, "1,000", "10k", "2.5 million", or number words both ways:
  "zero" to "twenty", tens, "twenty-five", "one billion", "a dozen", "twice"), its **unit**
  (durations and sizes converted to seconds and bytes, so 60 s is 1 minute; percentages) or the
  **noun** it counts ("5 delivery attempts"), its **qualifier** (exactly, at least, at most / up
  to, more than, fewer than, about, or a range "1 to 1000"; "twice (or more)"), what it is
  **per** ("50 messages per second"), the **era** its sentence ties it to ("Releases before 2.0
  used 60 seconds"; the value a "Changed in version 2.0: ... instead of 12 hours" note
  replaced), and the **bound** its paragraph gives a bare figure ("Maximum number of retries
  ... set to 3" is at most 3);
- a **version**, **year** or **date** ("PostgreSQL 15", "v1.4", "2.0" after "before", "2023",
  "18 April"): names, not counts; they must appear as they are;
- nothing at all: ordinals ("third-party", "first-class", "5th"), identifiers ("E001",
  "max_deliveries", "7f3c9a", "0.0.0.0:7450"), "one" as a pronoun ("one of them", "a setting
  of one means") or an article opening a sentence ("One trade-off is ..."); a word after a
  number is no counted noun when it is a verb or an adverb ("-c 10 may reserve", "one still
  lets").

`matches(stated, evidence)` says whether a stated figure is one its evidence states: the same
value, a compatible unit or noun (a bare "Default: 5" supports "5 attempts", "30 seconds" does
not support "30 attempts"), the same qualifier ("up to 1000" is not "1 to 1000", "at least 5" is
not "5"; "about 5" may say "5" more loosely), and the same era.

Three modules: `lexicon` (the words, as data), `reader` (`read`) and `matcher` (`matches`).
"""

from workflows.quantities.matcher import (
    compatible_qualifier,
    compatible_unit,
    matches,
    mismatch,
    same_date,
    same_value,
)
from workflows.quantities.reader import (
    READ_CACHE,
    Kind,
    Quantity,
    date_parts,
    plural,
    read,
    singular,
)

__all__ = [
    "READ_CACHE",
    "Kind",
    "Quantity",
    "compatible_qualifier",
    "compatible_unit",
    "date_parts",
    "matches",
    "mismatch",
    "plural",
    "read",
    "same_date",
    "same_value",
    "singular",
]
