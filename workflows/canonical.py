# ruff: noqa: RUF002, RUF003 -- confusable characters are what this module is about
"""Canonical text (pure): what every check reads and every store keeps of a model's string.

Text is compared after Unicode normalisation, so that what a reader sees is what the host
checks:

- **NFKC**, after writing superscript and subscript digits and vulgar fractions out
  (``10²`` is ``10^2``, ``1½`` is ``1 1⁄2``), so that no normalisation makes two figures
  that display differently one figure (NFKC alone reads ``10²`` as ``102``).
- **Invisible format characters removed** (zero-width spaces and joiners, soft hyphens, byte
  order marks: Unicode category Cf), except the **direction controls** (U+202A-U+202E,
  U+2066-U+2069, U+200E, U+200F, U+061C), which display text in another order than it is stored
  ("\\u202e05\\u202c" shows 50): a tool call holding one is refused (`direction_controls`), and
  `strip_invisible` removes them from anything shown on a terminal.
- **Mixed-script tokens** (`mixed_script`): a word or figure that mixes Latin letters or digits
  with Cyrillic or Greek letters ("5О" with a Cyrillic О looks like 50) is refused where the
  model states something (claims, findings, the answer, the limitations). The Greek letters that
  NFKC makes of unit signs (µ of µs, Ω) are units, not a second script.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from workflows.text import words

DIRECTION_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUPER_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUB_RUN = re.compile("[₀₁₂₃₄₅₆₇₈₉]+")
_VULGAR = re.compile("(\\d?)([\u00bc-\u00be\u2150-\u215e\u2189])")
_UNIT_GREEK = frozenset("μΩ")  # NFKC of the micro sign and the ohm sign


class Canonical(str):
    """Text made canonical (`canonical`): made so once, where it comes in (a tool call's
    arguments, a quote, a report at the gate), and read as it is from then on. A piece of
    canonical text (a sentence, a clause, its lower case) is canonical too."""

    __slots__ = ()


def canonical(text: str) -> Canonical:
    """`text` as every check reads it: superscripts, subscripts and fractions written out, NFKC,
    invisible format characters (direction controls included) removed. Canonical text is
    returned as it is."""
    if isinstance(text, Canonical):
        return text
    if text.isascii():
        return Canonical(text)
    text = _SUPER_RUN.sub(lambda m: "^" + m[0].translate(_SUPERSCRIPTS), text)
    text = _SUB_RUN.sub(lambda m: "_" + m[0].translate(_SUBSCRIPTS), text)
    text = _VULGAR.sub(_fraction, text)
    text = unicodedata.normalize("NFKC", text)
    return Canonical("".join(char for char in text if unicodedata.category(char) != "Cf"))


def _fraction(match: re.Match[str]) -> str:
    whole, char = match[1], match[2]
    fraction = unicodedata.normalize("NFKC", char)  # "1⁄2", with U+2044 FRACTION SLASH
    return f"{whole} {fraction}" if whole else fraction


def canonical_value(value: Any, verbatim: frozenset[str] = frozenset()) -> Any:
    """Every string inside parsed JSON made canonical, except the values of keys in `verbatim`
    (a quote is page text, matched against the stored page as the page has it)."""
    if isinstance(value, str):
        return canonical(value)
    if isinstance(value, list):
        return [canonical_value(item, verbatim) for item in value]
    if isinstance(value, dict):
        return {
            key: item if key in verbatim else canonical_value(item, verbatim)
            for key, item in value.items()
        }
    return value


def direction_controls(value: Any) -> list[str]:
    """The direction controls inside any string of parsed JSON, as U+XXXX (sorted)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found |= DIRECTION_CONTROLS.intersection(item)
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
    return [f"U+{ord(char):04X}" for char in sorted(found)]


def strip_invisible(text: str) -> str:
    """`text` without invisible format characters (direction controls, zero-width ones): what a
    terminal or a Markdown viewer is given."""
    if text.isascii():
        return text
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def mixed_script(text: str) -> list[str]:
    """Tokens of `text` that mix Latin letters or digits with Cyrillic or Greek letters, or
    Cyrillic with Greek (in order, each once)."""
    if text.isascii():
        return []
    found: list[str] = []
    for token in words(text):
        if token.isascii() or token in found:
            continue
        if len(_scripts(token)) > 1:
            found.append(token)
    return found


def _scripts(token: str) -> set[str]:
    scripts = set()
    for char in token:
        if "0" <= char <= "9" or ("a" <= char.lower() <= "z"):
            scripts.add("latin")
        elif char.isalpha() and char not in _UNIT_GREEK:
            name = unicodedata.name(char, "")
            if name.startswith("CYRILLIC"):
                scripts.add("cyrillic")
            elif name.startswith("GREEK"):
                scripts.add("greek")
    return scripts
