"""The gate's rules as one table (pure data): what each checks, what the model is told before
its first turn, the refusal it gets, and its line in docs/security.md ("What a model cannot do").

`activities/model/prompt.py` renders `told` of every rule into the system prompt; the gate
(`workflows.gate`) and the evidence rules (`workflows.substance`) build every refusal with
`refusal`; `tests/unit/test_rules.py` checks the docs list every rule's `cannot` line. The
numbers follow DESIGN.md ("The gate"). Refusals are plain sentences with named fields, never
word stems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from string import Formatter
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Rule:
    number: int
    name: str
    checks: str  # what the host checks, for the docs
    told: str  # the sentence in the system prompt, before the first turn
    cannot: str  # the line in docs/security.md, "What a model cannot do"
    refusals: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # The refusals that are judgement (word matchers that read meaning): with a verifier they
    # become its questions about the claim ("concerns"); without one they refuse. Every other
    # refusal is proof: what text alone proves, a refusal in every configuration.
    judged: frozenset[str] = frozenset()

    @property
    def kind(self) -> str:
        """ "proof", "judgement", or "proof and judgement", for the docs' table."""
        if not self.judged:
            return "proof"
        return "judgement" if self.judged >= set(self.refusals) else "proof and judgement"


def _rule(
    number: int,
    name: str,
    checks: str,
    told: str,
    cannot: str,
    judged: tuple[str, ...] = (),
    **refusals: str,
) -> Rule:
    assert set(judged) <= set(refusals), f"rule {name}: judged refusals it does not have"
    return Rule(number, name, checks, told, cannot, MappingProxyType(refusals), frozenset(judged))


RULES: tuple[Rule, ...] = (
    _rule(
        1,
        "cited",
        "Every finding cites recorded evidence ids, and says what its quotes say: it shares "
        "their content words and negates only what a quote negates.",
        "Each finding cites evidence ids (E001) and says what their quotes say; it says not, "
        "no or never about something only where a cited quote does.",
        "submit a finding without evidence, with an unknown id, or saying what no cited quote "
        "says (different words, an added not or never)",
        judged=("shares", "negates"),
        no_findings="the report has no findings: each finding must cite recorded evidence",
        no_evidence="finding {number} cites no evidence",
        unknown="finding {number} cites unknown evidence {ids}",
        shares="{where} shares {count} content word(s) or figure(s) with the evidence it cites, "
        "at least {needed} are needed: say what the quotes say",
        negates='{where} says "{word} {scope}", but none of its cited quotes negates that: say '
        "what the quotes say",
    ),
    _rule(
        2,
        "covered",
        "Every required question has at least one cited piece of evidence recorded for it.",
        "Every required question needs cited evidence recorded under it.",
        "finish with a required question that no cited evidence answers",
        uncovered="required question {question} has no cited evidence: {text}",
    ),
    _rule(
        3,
        "independent",
        "The cited evidence comes from at least min_sources independent sources (a mirror or "
        "another rendering of the same text counts once).",
        "Cite at least {min_sources} independent sources (a mirror or another rendering of the "
        "same text counts once).",
        "count a mirror, another rendering of a page, or one source twice, as independent "
        "confirmation",
        too_few="the cited evidence comes from {count} independent source(s); at least "
        "{needed} are required (a mirror or another rendering of the same text counts once)",
    ),
    _rule(
        4,
        "conflicts",
        "Contradicting evidence and evidence the host flags as disagreeing on a figure is "
        "disclosed (cited, or named by its id in the limitations), and a finding about a "
        "conflicted question states both values or says that the sources disagree.",
        'Record contradicting evidence with stance "contradicts". Disclose it, and every '
        "conflict the host flags, by its evidence id; a finding about a conflicted question "
        "states both values or says that the sources disagree. Never silently pick a side.",
        "hide a conflict: leave contradicting evidence out, name it inside a longer token "
        "(XE003), or cite both sides while stating only one",
        judged=("one_side",),
        contradiction="contradicting evidence {evidence} for {question} is neither cited in a "
        "finding nor named in the limitations",
        conflict="conflicting evidence: {conflict}; cite or name both in the limitations",
        one_side="finding {number} states one side of a conflict: {conflict}; state both "
        "values or say that the sources disagree",
    ),
    _rule(
        5,
        "optional",
        "Optional questions never block; unanswered ones belong in the limitations.",
        "Optional questions never block; name the ones left open in the limitations.",
        "be refused for an optional question it could not answer",
    ),
    _rule(
        6,
        "relevant",
        "Evidence informs and answers its own question: enough content words of its own (a "
        "heading or a list item's label supports a quote, it does not replace it); a key term "
        "of the sub-question in the quote or its section heading; navigation, link lists and "
        "tables of contents are not evidence.",
        "Record evidence by passage_id (preferred) or a verbatim quote: a whole sentence that "
        "answers its sub-question in its own words (a heading gives context, it does not "
        "answer); navigation, link lists and tables of contents are not evidence; snippets "
        "never are.",
        "record a fragment, a table of contents, a list of links, or a sentence about something "
        "else as evidence",
        judged=("off_question", "claim"),
        too_short="the quote is too short to inform: it has {count} content word(s) and "
        "figure(s), at least {needed} are needed (record a whole sentence)",
        off_question="the quote does not mention what the question asks about (none of: "
        "{terms}): record evidence under the question it answers",
        navigation="the quote is {what}, not a statement: record the sentence on the page it "
        "points to",
        claim="the claim {problem}: a claim may only say what its quote says",
    ),
    _rule(
        7,
        "figures",
        "Figures are quantities: a stated figure matches a figure of its cited evidence in "
        "value, unit or counted noun, and qualifier (exactly, at least, up to, more than, "
        "fewer than, about, a range, per what), and a figure the evidence ties to an older "
        "version is not stated as current. Number words count both ways; ordinals, years, "
        "versions and identifiers are not counts. Text is Unicode-normalised first; a word "
        "mixing scripts (a Cyrillic letter among Latin digits) and direction controls are "
        "refused.",
        "State every figure as its quote does: the same value, unit or thing counted, and "
        "qualifier (up to, at least, a range, before version 2.0); write plain text (no "
        "direction controls, no letters of another script inside a word or figure).",
        "turn a duration into a count (30 seconds into 30 attempts), drop a qualifier (up to, "
        "at least, a range, before 2.0), or write a figure that looks like another (5\u041e with a "
        "Cyrillic \u041e, a right-to-left override)",
        judged=("missing", "mismatch", "deferred"),
        missing="{where} {states} {figure}, which the evidence {whose} does not state",
        mismatch='{where} {states} "{figure}" {why}',
        mixed_script="{where} writes {tokens}, mixing letters of different scripts (or digits "
        "with letters of another script): write them in one script",
        deferred="{where} {states} {figure}, which the rules cannot match to the evidence {whose} "
        "(a figure derived from it): state the figure as the quote does",
    ),
    _rule(
        8,
        "answer",
        "The answer is held to the findings' rules against all the evidence the findings "
        "cite; the limitations disclose gaps and conflicts and describe the sources (their "
        "dates and versions as the pages state them); a sentence there that states a fact is "
        "held to the recorded quotes (one of them says it, figures included).",
        "The answer is checked like a finding, against the evidence the findings cite. The "
        "limitations only say what is open, where sources disagree and what the sources are "
        "(their dates and versions as the pages give them); state facts in findings.",
        "state in the answer what no finding's evidence says, or slip a new fact into the "
        "limitations",
        judged=("fact",),
        fact='the limitations state a fact no recorded quote states ("{sentence}"): state '
        "facts in a finding that cites evidence; the limitations say what is open, where "
        "sources disagree and what the sources are",
    ),
    _rule(
        9,
        "meaning",
        "Meaning is judged independently: after the proof rules pass, a verifier with a fresh "
        "context reads the answer, each finding and the limitations against the quotes they "
        "cite, and each required question against the evidence cited for it (does it answer "
        "it?). It sees every quote in its whole sentence with its page's title, URL, section "
        "and stated date or release, and answers every concern the judgement rules raised about "
        "the claim. Only supported (for a question: answered) stands; partly is a gap with the "
        "verifier's whole reason.",
        "Then, where a verifier is configured, it reads the answer, each finding and the "
        "limitations against their cited quotes (each shown with its page), and judges whether "
        "each required question's cited evidence answers it; only a claim it finds fully "
        "supported stands, so say only what a cited quote states and move what it does not "
        "into the limitations as open.",
        "pass a claim the cited quotes do not fully support in meaning (an inversion, an "
        "unscoped fragment, a derived total, two quotes stitched into a relation neither states), "
        "or cover a required question with evidence that does not answer it",
        contradicted="{where} is contradicted by the quotes it cites, says the independent "
        "verifier: {reason} (say only what the quotes state)",
        not_supported="{where} is not supported by the quotes it cites, says the independent "
        "verifier: {reason} (say only what the quotes state)",
        partly="{where} is only partly supported by the quotes it cites, says the independent "
        "verifier: {reason} (state only the supported part; move the rest to the limitations as "
        "open)",
        unanswered="required question {question} is not answered by the evidence cited for it, "
        "says the independent verifier ({said}): {reason} (record evidence that answers it, or "
        "name it open in the limitations)",
    ),
)

_BY_NAME = {rule.name: rule for rule in RULES}


def rule(name: str) -> Rule:
    return _BY_NAME[name]


def refusal(name: str, key: str, **fields: Any) -> str:
    """The refusal `key` of rule `name`, with its fields filled in."""
    return _BY_NAME[name].refusals[key].format(**fields)


# what a field of a refusal may hold, where the refusal fixes its words (else anything)
_FIELD_WORDS = {"states": "states?"}


@cache
def _refusals() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """Each rule's refusals as patterns, their fields filled in any way, the most literal
    first: "{where} {states} {figure} {why}" is the last one tried. Built on first use (the
    evaluation's), not when the workflow imports the rules."""
    patterns = []
    for item in RULES:
        for key, text in item.refusals.items():
            parsed = list(Formatter().parse(text))
            literal = "".join(part for part, _, _, _ in parsed)
            pattern = "".join(
                re.escape(part) + (f"(?:{_FIELD_WORDS.get(name, '.*?')})" if name else "")
                for part, name, _, _ in parsed
            )
            patterns.append((len(literal), item.name, key, re.compile(pattern, re.DOTALL)))
    patterns.sort(key=lambda found: -found[0])
    return tuple((name, key, pattern) for _, name, key, pattern in patterns)


def refusal_of(gap: str) -> tuple[str, str] | None:
    """(rule name, refusal key) of the refusal `gap` is (its fields filled in any way; the
    refusal with the most words of its own first), or None for a sentence no rule writes."""
    return next(((n, k) for n, k, pattern in _refusals() if pattern.fullmatch(gap)), None)


def refused_by(gap: str) -> str | None:
    """The name of the rule whose refusal `gap` is, or None for a sentence no rule writes."""
    found = refusal_of(gap)
    return None if found is None else found[0]


def is_judgement(gap: str) -> bool:
    """Whether `gap` is a judgement rule's refusal (a verifier's question when one is set)."""
    found = refusal_of(gap)
    return found is not None and judged(*found)


def judged(name: str, key: str) -> bool:
    """Whether refusal `key` of rule `name` is judgement (a verifier's question when one is
    configured) rather than proof."""
    return key in _BY_NAME[name].judged


def told(min_sources: int) -> list[str]:
    """What the model is told of every rule, in order (rules with nothing to tell left out)."""
    return [
        f"{item.number}. {item.told.format(min_sources=min_sources)}" for item in RULES if item.told
    ]
