"""Steering commands check what they were given before they connect: a limit out of range, empty
guidance or a seed URL no run could read is refused in one sentence, with no Temporal server
there to ask (TEMPORAL_ADDRESS names a port nothing listens on)."""

from __future__ import annotations

import pytest

from starter.cli import main
from tests.conftest import free_port

NO_SERVER = "cannot reach Temporal"


@pytest.fixture(autouse=True)
def nothing_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", f"127.0.0.1:{free_port()}")


@pytest.mark.parametrize(
    ("flag", "value", "sentence"),
    [
        ("--steps", "-3", "--steps must be 1 to 1,000, got -3"),
        ("--steps", "0", "--steps must be 1 to 1,000, got 0"),
        ("--steps", str(10**9), "--steps must be 1 to 1,000, got 1000000000"),
        ("--tokens", "20000000", "--tokens must be 1 to 10,000,000, got 20000000"),
        ("--deadline", "-1", "--deadline must be 1 to 86,400, got -1"),
    ],
)
def test_extend_refuses_a_limit_out_of_range_before_connecting(
    flag: str, value: str, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["extend", "research-any", flag, value])

    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"error: {sentence}\n")


def test_empty_guidance_is_refused_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["signal", "research-any", "guidance", " "])

    assert (code, capsys.readouterr().err) == (
        2,
        "error: guidance needs a text for the model to read\n",
    )


def test_seed_urls_no_run_could_read_are_refused_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    urls = ["http://127.0.0.1/admin", "https://user:secret@docs.example/x", "docs.example/x"]

    code = main(["signal", "research-any", "seed", *urls])

    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "Refused seed URL http://127.0.0.1/admin: it names an IP address, not a host name",
        "Refused seed URL https://docs.example/x: it carries a user name or password",
        "Refused seed URL docs.example/x: it is not an http(s) URL",
    ]


def test_a_seed_url_a_run_may_read_is_sent(capsys: pytest.CaptureFixture[str]) -> None:
    """The other side of the test above: a readable URL makes the command connect."""
    code = main(["signal", "research-any", "seed", "https://docs.example/x"])

    assert code == 1
    assert NO_SERVER in capsys.readouterr().err
