"""The gate's rules are one table: the prompt tells each, the docs list each, refusals use it."""

from __future__ import annotations

import re

from activities.model.prompt import system_prompt
from runtime.settings import PROJECT_ROOT
from workflows.models import Brief
from workflows.rules import RULES, refusal

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
        assert f"| {rule.number}. {rule.name} | {rule.checks} | {rule.cannot} |" in section, (
            rule.name
        )


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
