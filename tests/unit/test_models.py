"""Brief validation: each refusal is the one sentence a user sees; hosts are normalised once."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.hosts import host_allowed
from workflows.models import LIMIT_CEILINGS, Brief, Limits, Question
from workflows.validation import describe_validation


def brief(**fields: Any) -> dict[str, Any]:
    return {"question": "How does the queue time out?", "allowed_hosts": ["a.example"], **fields}


def refusal(raw: dict[str, Any]) -> str:
    """The sentence the CLI shows for a brief that fails validation."""
    with pytest.raises(ValidationError) as error:
        Brief.model_validate(raw)
    sentence = describe_validation(error.value)
    assert "\n" not in sentence
    return sentence


def test_a_valid_brief_keeps_its_questions_hosts_and_seeds() -> None:
    accepted = Brief.model_validate(
        brief(
            questions=[{"id": "Q1", "text": " timeout "}, {"id": "Q2", "text": "x", "required": 0}],
            seed_urls=["https://a.example/docs"],
            limits={"max_steps": 8},
        )
    )

    assert accepted.questions == [
        Question(id="Q1", text="timeout"),
        Question(id="Q2", text="x", required=False),
    ]
    assert accepted.seed_urls == ["https://a.example/docs"]
    assert accepted.limits == Limits(max_steps=8)


def test_an_empty_question_is_refused() -> None:
    assert refusal(brief(question="   ")) == "the brief's question is empty"


def test_a_sub_question_with_empty_text_is_refused() -> None:
    assert refusal(brief(questions=[{"id": "Q1", "text": " "}])) == "a sub-question has empty text"


def test_a_malformed_question_id_is_refused() -> None:
    sentence = refusal(brief(questions=[{"id": "1st", "text": "t"}]))

    assert sentence == (
        "question id '1st' must start with a letter and use only letters, digits, - or _"
    )


def test_no_questions_makes_the_question_itself_required_q1() -> None:
    # Documented decision (Brief's docstring): a brief without sub-questions is one question.
    accepted = Brief.model_validate(brief())

    assert accepted.questions == [Question(id="Q1", text="How does the queue time out?")]
    assert accepted.questions[0].required


def test_duplicate_question_ids_are_refused() -> None:
    questions = [{"id": "Q1", "text": "a"}, {"id": "Q2", "text": "b"}, {"id": "Q1", "text": "c"}]

    assert refusal(brief(questions=questions)) == (
        "duplicate question id 'Q1': question ids must be unique"
    )


def test_a_brief_with_only_optional_questions_is_refused() -> None:
    questions = [{"id": "Q1", "text": "a", "required": False}]

    assert refusal(brief(questions=questions)) == "at least one question must be required"


@pytest.mark.parametrize(
    ("host", "sentence"),
    [
        ("https://x.com/", "allowed host 'https://x.com/' is not a bare host name"),
        ("x.com:443", "allowed host 'x.com:443' is not a bare host name"),
        ("user@x.com", "allowed host 'user@x.com' is not a bare host name"),
        ("exa mple.com", "allowed host 'exa mple.com' is not a bare host name"),
        ("", "an allowed host is empty"),
        ("   ", "an allowed host is empty"),
        ("localhost", "allowed host 'localhost' is not a valid host name"),
        ("-bad.example", "allowed host '-bad.example' is not a valid host name"),
        ("x..com", "allowed host 'x..com' is not a valid host name"),
        ("*.com", "allowed host '*.com' is not a valid host name"),
        ("a.*.example", "allowed host 'a.*.example' is not a bare host name"),
    ],
)
def test_a_malformed_host_is_refused(host: str, sentence: str) -> None:
    assert refusal(brief(allowed_hosts=["ok.example", host])).startswith(sentence)


def test_an_empty_host_list_is_refused() -> None:
    assert refusal(brief(allowed_hosts=[])) == (
        "allowed_hosts is empty: name at least one host the run may read"
    )


def test_a_missing_host_list_is_refused() -> None:
    assert refusal({"question": "q"}) == "field allowed_hosts is required"


def test_a_seed_url_outside_the_allowed_hosts_is_refused() -> None:
    sentence = refusal(brief(seed_urls=["https://a.example/ok", "https://evil.example/x"]))

    assert sentence == "seed URL 'https://evil.example/x' is not on an allowed host"


def test_a_seed_url_that_is_not_http_is_refused() -> None:
    assert refusal(brief(seed_urls=["ftp://a.example/file"])) == (
        "seed URL 'ftp://a.example/file' is not on an allowed host"
    )


@pytest.mark.parametrize("value", [0, -1, -500])
@pytest.mark.parametrize("name", sorted(LIMIT_CEILINGS))
def test_a_limit_below_one_is_refused(name: str, value: int) -> None:
    assert refusal(brief(limits={name: value})) == (f"limit {name} must be at least 1, got {value}")


@pytest.mark.parametrize("name", sorted(LIMIT_CEILINGS))
def test_a_limit_above_its_ceiling_is_refused(name: str) -> None:
    ceiling = LIMIT_CEILINGS[name]

    assert refusal(brief(limits={name: ceiling + 1})) == (
        f"limit {name} is {ceiling + 1}, above its ceiling of {ceiling}"
    )


@pytest.mark.parametrize("name", sorted(LIMIT_CEILINGS))
def test_a_limit_at_its_ceiling_is_accepted(name: str) -> None:
    ceiling = LIMIT_CEILINGS[name]

    assert getattr(Brief.model_validate(brief(limits={name: ceiling})).limits, name) == ceiling


def test_a_context_bound_below_the_minimum_is_refused() -> None:
    assert refusal(brief(limits={"max_context_chars": 1_999})) == (
        "limit max_context_chars must be at least 2000"
    )
    assert Brief.model_validate(brief(limits={"max_context_chars": 2_000}))


def test_a_brief_too_large_for_its_context_bound_is_refused() -> None:
    sentence = refusal(brief(question="why? " * 500, limits={"max_context_chars": 2_000}))

    assert "max_context_chars" in sentence


def test_an_unknown_field_is_refused() -> None:
    assert refusal(brief(colour="red")) == "field colour is not a brief field (check its spelling)"


def test_an_unknown_limit_is_refused() -> None:
    assert refusal(brief(limits={"max_stepz": 3})) == (
        "field limits.max_stepz is not a brief field (check its spelling)"
    )


def test_hosts_are_normalised_for_case_trailing_dot_and_idna() -> None:
    accepted = Brief.model_validate(
        brief(allowed_hosts=["Docs.Example.COM.", "BÜCHER.example", "*.Mirror.Example."])
    )

    assert accepted.allowed_hosts == [
        "docs.example.com",
        "xn--bcher-kva.example",
        "*.mirror.example",
    ]


def test_a_seed_on_a_unicode_host_matches_its_idna_rule() -> None:
    accepted = Brief.model_validate(
        brief(allowed_hosts=["xn--bcher-kva.example"], seed_urls=["https://Bücher.example/x"])
    )

    assert accepted.seed_urls == ["https://Bücher.example/x"]


def test_a_seed_with_trailing_dot_and_upper_case_host_matches() -> None:
    assert Brief.model_validate(brief(seed_urls=["https://A.EXAMPLE./docs"]))


def test_a_wildcard_matches_subdomains_on_a_dot_boundary_only() -> None:
    hosts = Brief.model_validate(brief(allowed_hosts=["*.example.com"])).allowed_hosts

    assert host_allowed("https://a.example.com/page", hosts)
    assert host_allowed("https://deep.a.example.com/page", hosts)
    assert not host_allowed("https://example.com/page", hosts)
    assert not host_allowed("https://badexample.com/page", hosts)
    assert not host_allowed("https://example.com.evil.net/page", hosts)


def test_a_wildcard_brief_accepts_a_subdomain_seed_and_refuses_the_apex() -> None:
    assert Brief.model_validate(
        brief(allowed_hosts=["*.example.com"], seed_urls=["https://a.example.com/x"])
    )
    assert refusal(brief(allowed_hosts=["*.example.com"], seed_urls=["https://example.com/"])) == (
        "seed URL 'https://example.com/' is not on an allowed host"
    )
    assert refusal(
        brief(allowed_hosts=["*.example.com"], seed_urls=["https://badexample.com/"])
    ) == ("seed URL 'https://badexample.com/' is not on an allowed host")


def test_an_exact_host_does_not_match_its_subdomains() -> None:
    assert not host_allowed("https://sub.a.example/x", ["a.example"])
    assert host_allowed("https://a.example:8443/x", ["a.example"])


def test_limits_whose_history_would_be_too_large_are_refused() -> None:
    sentence = refusal(brief(limits={"max_steps": 300, "max_context_chars": 300_000}))
    assert sentence == (
        "limits max_steps (at most 100 an execution) x max_context_chars is above 20,000,000: "
        "lower one of them"
    )
    # A long run's steps are spread over executions: 1,000 steps of 100,000 characters fit.
    assert Brief.model_validate(brief(limits={"max_steps": 1_000, "max_context_chars": 100_000}))


def test_limits_must_be_whole_numbers_not_booleans_or_floats() -> None:
    assert refusal(brief(limits={"max_steps": True})).startswith("field limits.max_steps:")
    assert refusal(brief(limits={"max_steps": 2.0})).startswith("field limits.max_steps:")
