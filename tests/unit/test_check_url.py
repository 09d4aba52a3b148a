"""`research check-url` prints the fetcher's verdict on a URL: `allowed (...)` or `refused: ...`."""

from __future__ import annotations

import pytest

from starter.cli import main


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check-url", *argv])
    out, err = capsys.readouterr()
    return code, out.strip(), err.strip()


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESEARCH_MODEL_PROVIDER", raising=False)
    monkeypatch.delenv("RESEARCH_LOCAL_HOSTS", raising=False)


def test_a_corpus_page_is_allowed_without_dns(capsys: pytest.CaptureFixture[str]) -> None:
    url = "https://docs.harborq.example/guides/dead-letter-queues.html"

    code, out, _ = check(capsys, url, "--allow", "docs.harborq.example")

    assert code == 0
    assert out.startswith("allowed (served from the local corpus")


@pytest.mark.parametrize(
    ("url", "allow", "reason"),
    [
        ("https://evil.example/", "docs.example", "host evil.example is not in the allowed hosts"),
        ("https://169.254.169.254/latest/", "docs.example", "names an IP address"),
        ("http://docs.example/", "docs.example", "is plain http"),
        ("https://docs.example:8443/", "docs.example", "names port 8443"),
        ("https://u:p@docs.example/", "docs.example", "carries a user name or password"),
        ("https://sub.docs.example/", "docs.example", "not in the allowed hosts"),
    ],
)
def test_refusals_name_their_reason(
    capsys: pytest.CaptureFixture[str], url: str, allow: str, reason: str
) -> None:
    code, out, _ = check(capsys, url, "--allow", allow)

    assert code == 2
    assert out.startswith("refused: ") and reason in out


def test_a_wildcard_rule_matches_on_a_dot_boundary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, "https://evildocs.example/", "--allow", "*.docs.example")

    assert (code, out) == (2, "refused: host evildocs.example is not in the allowed hosts")


def test_a_name_that_does_not_resolve_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, "https://nowhere.invalid/", "--allow", "nowhere.invalid")

    assert code == 2
    assert out.startswith("refused: host nowhere.invalid does not resolve")


def test_a_configured_local_host_connects_to_its_pinned_address(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESEARCH_LOCAL_HOSTS", "pages.test=127.0.0.1")

    code, out, _ = check(capsys, "http://pages.test:8080/a", "--allow", "pages.test")

    assert (code, out) == (0, "allowed (connects to 127.0.0.1 port 8080)")


def test_a_malformed_allow_rule_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, "https://docs.example/", "--allow", "https://docs.example")

    assert (code, out) == (2, "")
    assert err.startswith("error: allowed host 'https://docs.example' is not a bare host name")
