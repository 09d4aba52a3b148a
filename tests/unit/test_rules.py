"""The gate's rules are one table: the prompt tells each, the docs list each, refusals use it."""

from __future__ import annotations

import re

from activities.model.prompt import system_prompt
from runtime.settings import PROJECT_ROOT
from workflows.models import Brief
from workflows.rules import RULES, is_judgement, refusal

BRIEF = Brief(question="q", allowed_hosts=["docs.example"])
SECURITY = (PROJECT_ROOT / "docs" / "security.md").read_text()


def test_the_prompt_tells_every_rule_before_the_first_turn() -> None:
    prompt = system_prompt(BRIEF)
    for rule in RULES:
        if rule.told:
            assert f"{rule.number}. {rule.told.format(min_sources=2)}" in prompt


def test_the_docs_list_every_rule_as_the_table_has_it() -> None:
    section = SECURITY.split("## What a model cannot do", 1)[1].split("\n## ", 1)[0]
    for rule in RULES:
        row = f"| {rule.number}. {rule.name} | {rule.kind} | {rule.checks} | {rule.cannot} |"
        assert row in section, rule.name


def test_proof_rules_stay_refusals_and_judgement_rules_are_the_word_matchers() -> None:
    kinds = {rule.name: rule.kind for rule in RULES}
    assert kinds == {
        "cited": "proof and judgement",  # ids exist; shares and negates are word matchers
        "covered": "proof",
        "independent": "proof",
        "conflicts": "proof and judgement",  # disclosed by id; "states both" reads words
        "optional": "proof",
        "relevant": "proof and judgement",  # too short, navigation; relevance, the claim
        "figures": "proof and judgement",  # mixed scripts; the figure matchers
        "answer": "judgement",
        "meaning": "proof",  # the verifier's own verdicts are final
    }
    assert is_judgement(refusal("cited", "negates", where="finding 1", word="not", scope="x"))
    assert not is_judgement(refusal("cited", "unknown", number=1, ids="E009"))
    assert not is_judgement(refusal("relevant", "navigation", what="a table of contents"))


def test_refusals_are_plain_words_with_every_field_named() -> None:
    for rule in RULES:
        for key, template in rule.refusals.items():
            fields = set(re.findall(r"\{(\w+)\}", template))
            text = refusal(rule.name, key, **{name: f"<{name}>" for name in fields})
            assert "{" not in text and "}" not in text, (rule.name, key)
    stems = refusal("relevant", "off_question", terms="attempts, moves")
    assert stems.startswith("the quote does not mention what the question asks about")


def test_rules_are_numbered_in_order_as_the_design_numbers_them() -> None:
    assert [rule.number for rule in RULES] == list(range(1, len(RULES) + 1))
    assert RULES[8].name == "meaning", "rule 9 is the verifier's"
