"""Whether a stated figure is one its evidence states (pure; see `workflows.quantities`)."""

from __future__ import annotations

from workflows.quantities.reader import Quantity, date_parts


def same_date(stated: Quantity, evidence: Quantity) -> bool:
    """A date (or year) the evidence's date states: the same day, or a day and month without a
    year that the evidence's full date has ("1 May" of 2023-05-01), or that date's year."""
    if evidence.kind != "date" or stated.kind not in ("date", "year"):
        return False
    return stated.name == evidence.name or stated.name in date_parts(evidence.name)


def same_value(left: Quantity, right: Quantity) -> bool:
    if left.value is None or right.value is None:
        return left.name == right.name and bool(left.name)
    return left.value == right.value and left.high == right.high


def compatible_unit(stated: Quantity, evidence: Quantity) -> bool:
    if stated.unit or evidence.unit:
        return stated.unit == evidence.unit or (not stated.unit and not stated.noun)
    return not stated.noun or not evidence.noun or bool(_words_of(stated) & _words_of(evidence))


def _words_of(quantity: Quantity) -> set[str]:
    return set(quantity.noun.split())


def compatible_qualifier(stated: Quantity, evidence: Quantity) -> bool:
    """The same qualifier; "about 5" says "5" more loosely; and a bare figure its paragraph
    calls a maximum is an "at most" one ("at most 3 retries" for "Maximum number of retries
    ... set to 3"; a minimum likewise)."""
    if stated.qualifier == evidence.qualifier:
        return True
    if stated.qualifier == "about" and evidence.qualifier == "exactly":
        return True
    return _bounded(stated) == _bounded(evidence)


def _bounded(quantity: Quantity) -> str:
    return (
        quantity.bound if quantity.qualifier == "exactly" and quantity.bound else quantity.qualifier
    )


def matches(stated: Quantity, evidence: Quantity) -> bool:
    """`evidence` states the figure `stated` states: value, unit or noun, qualifier, era."""
    if stated.kind != "amount" or evidence.kind != "amount":
        if (stated.name and stated.name == evidence.name) or same_date(stated, evidence):
            return True
        if stated.kind == "version" and evidence.kind == "amount":
            # "2.0 was released": a dotted number as written, bare (not "3 workers", "a limit
            # of 5": a whole number alone is a count as often as a version)
            bare = not evidence.unit and not evidence.noun and "." in stated.name
            return bare and evidence.text.split()[0] == stated.name
        bare = stated.kind == "amount" and not stated.unit and not stated.noun
        return bare and stated.qualifier == "exactly" and same_value(stated, evidence)
    return (
        same_value(stated, evidence)
        and compatible_unit(stated, evidence)
        and compatible_qualifier(stated, evidence)
        and bool(stated.era) == bool(evidence.era)
        and (not stated.per or not evidence.per or stated.per == evidence.per)
    )


def mismatch(stated: Quantity, evidence: list[Quantity]) -> str:
    """Why none of `evidence` states `stated`, in plain words (the closest figure named)."""
    same = [item for item in evidence if same_value(stated, item) or _same_low(stated, item)]
    if not same:
        return "which the evidence does not state"
    closest = same[0]
    said = f"the evidence says {closest.said()}"
    if stated.kind == "amount" and closest.kind == "amount":
        if not compatible_unit(stated, closest):
            return f"but {said}, {closest.measured()}: not the same unit or thing"
        if closest.era and not stated.era:
            return f"as current, but {said}, tied to {closest.era}: say so"
        if stated.era and not closest.era:
            return f"as of {stated.era}, but {said}, as current"
    return f"but {said}, {closest.qualified()}: state it with the quote's qualifier"


def _same_low(stated: Quantity, evidence: Quantity) -> bool:
    if stated.value is None or evidence.value is None:
        return False
    return stated.value in (evidence.value, evidence.high) or (
        stated.high is not None and stated.high == evidence.high
    )
