"""`research start` rejects a bad brief in one sentence, exit 2, before contacting Temporal."""

from __future__ import annotations

import json
import re
import socket
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from runtime.database import DatabaseError
from starter.cli import main
from starter.runs import new_run_id, static_details
from workflows.models import Brief

GOOD_BRIEF: dict[str, Any] = {
    "question": "How does Harbor Queue handle poison messages?",
    "questions": [
        {"id": "Q1", "text": "How many delivery attempts before dead-lettering?"},
        {"id": "Q2", "text": "What is the default visibility timeout?", "required": False},
    ],
    "allowed_hosts": ["docs.harborq.example"],
    "seed_urls": ["https://docs.harborq.example/guides/dead-letter-queues.html"],
}


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: any Temporal connection attempt there fails."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture(autouse=True)
def unreachable_temporal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, closed_port: int) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", f"127.0.0.1:{closed_port}")
    monkeypatch.setenv("RESEARCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("RESEARCH_MODEL_PROVIDER", raising=False)


def brief_with(tmp_path: Path, **changes: Any) -> Path:
    brief = {**GOOD_BRIEF, **changes}
    path = tmp_path / "brief.json"
    path.write_text(json.dumps(brief), encoding="utf-8")
    return path


def run_start(path: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["start", str(path)])
    return code, capsys.readouterr().err.splitlines()


def assert_brief_rejected(code: int, lines: list[str], path: Path | str, expected: str) -> None:
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: brief {path}: ")
    assert expected in lines[0]
    assert "Temporal" not in lines[0]  # rejected before any connection was attempted
    assert "Value error" not in lines[0]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"question": "   "}, "the brief's question is empty"),
        ({"questions": [{"id": "Q1", "text": ""}]}, "a sub-question has empty text"),
        ({"allowed_hosts": []}, "allowed_hosts is empty: name at least one host"),
        ({"allowed_hosts": ["https://x.com/"]}, "allowed host 'https://x.com/' is not a bare host"),
        (
            {"questions": [{"id": "Q1", "text": "a"}, {"id": "Q1", "text": "b"}]},
            "duplicate question id 'Q1': question ids must be unique",
        ),
        (
            {"seed_urls": ["https://evil.example/page"]},
            "seed URL 'https://evil.example/page' is not on an allowed host",
        ),
        (
            {"allowed_hosts": ["docs.harborq.example", "127.0.0.1"]},
            "allowed host '127.0.0.1' is an IP address, which the fetcher never reads: name the "
            "host (a local server by name: RESEARCH_LOCAL_HOSTS=name=IP on the worker)",
        ),
        (
            {"seed_urls": ["https://ops:hunter2@docs.harborq.example/x"]},
            "seed URL https://docs.harborq.example/x carries a user name or password",
        ),
        (
            {"seed_urls": ["https://docs.harborq.example/faq.html"]},
            "seed URL https://docs.harborq.example/faq.html is not in the local corpus",
        ),
        ({"limits": {"max_steps": 0}}, "limit max_steps must be at least 1, got 0"),
        ({"limits": {"max_searches": -3}}, "limit max_searches must be at least 1, got -3"),
        ({"limits": {"max_steps": 1_000_000}}, "limit max_steps is 1000000, above its ceiling"),
        ({"limits": {"max_steps": "many"}}, "field limits.max_steps: Input should be a valid"),
        ({"questoin": "typo"}, "field questoin is not a brief field"),
    ],
)
def test_an_invalid_brief_is_one_sentence_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], expected: str
) -> None:
    path = brief_with(tmp_path, **changes)

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, expected)


def test_a_missing_required_field_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "brief.json"
    path.write_text(json.dumps({"question": "Why?"}), encoding="utf-8")

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, "field allowed_hosts is required")


def test_invalid_json_names_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "brief.json"
    path.write_text('{\n  "question": "Why?",\n  "allowed_hosts": [,]\n}\n', encoding="utf-8")

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, "invalid JSON at line 3, column")


def test_a_json_value_that_is_not_an_object_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "brief.json"
    path.write_text("[1, 2]", encoding="utf-8")

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, "the brief must be a JSON object")


def test_a_missing_file_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nowhere.json"

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, "no such file")


def test_a_valid_brief_goes_on_to_connect_and_fails_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    """The control for the tests above: a good brief does reach the connection step."""
    code, lines = run_start(brief_with(tmp_path), capsys)

    assert code == 1
    assert lines == [
        f"error: cannot reach Temporal at 127.0.0.1:{closed_port}: start it with `research dev` "
        "or set TEMPORAL_ADDRESS"
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "research-1234"],
        ["cancel", "research-1234"],
        ["signal", "research-1234", "finish"],
        ["extend", "research-1234", "--steps", "40"],
    ],
)
def test_run_commands_without_temporal_fail_in_one_sentence(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main(argv)

    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith("error: cannot reach Temporal at 127.0.0.1:")


def test_a_settings_error_is_one_sentence_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESEARCH_MODEL_PROVIDER", "anthropic")

    code = main(["status", "research-1234"])

    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert len(lines) == 1
    assert "RESEARCH_MODEL_PROVIDER" in lines[0]


def test_extend_without_a_limit_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["extend", "research-1234"])

    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert lines == [
        "error: extend needs at least one of --steps --searches --pages --tokens --deadline"
    ]


def test_a_huge_brief_file_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 50 MB file used to be read whole (280 MB of memory) before being refused."""
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(50_000_000)

    tracemalloc.start()
    try:
        code, lines = run_start(path, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert_brief_rejected(code, lines, path, "is larger than 1,000,000 bytes: a brief holds")
    assert peak < 5_000_000


def test_a_brief_too_long_for_any_context_is_told_to_shrink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The advice was to raise max_context_chars past its own ceiling."""
    path = brief_with(tmp_path, question="Why " * 150_000 + "?")

    code, lines = run_start(path, capsys)

    assert_brief_rejected(code, lines, path, "too long for any context")
    assert "(max_context_chars is at most 500,000): shorten its questions" in lines[0]
    assert "raise limits.max_context_chars" not in lines[0]


def test_a_database_that_cannot_be_used_is_one_sentence_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`research demo`/`dev` when the embedded PostgreSQL will not start: the sentence that says
    how to fix it, not a traceback."""
    sentence = f"could not start the embedded PostgreSQL in {tmp_path} (initdb failed)"

    def refuse(data_dir: Path) -> None:
        raise DatabaseError(sentence)

    monkeypatch.setattr("runtime.database.start_embedded_postgres", refuse)
    monkeypatch.setenv("RESEARCH_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)

    code = main(["init-db"])

    assert (code, capsys.readouterr().err) == (1, f"error: {sentence}\n")


def test_a_ledger_older_than_the_code_says_to_apply_its_migrations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code pulled while an older `research dev` ran: its queries name a column the ledger has
    not got yet. The sentence says how to migrate, not to check DATABASE_URL."""
    import psycopg

    async def older(*args: object) -> int:
        raise psycopg.errors.UndefinedColumn('column "lanes" does not exist')

    monkeypatch.setattr("starter.review.runs", older)

    code = main(["runs"])

    assert (code, capsys.readouterr().err) == (
        1,
        'error: the ledger is older than this code (column "lanes" does not exist): `research '
        "init-db` applies its migrations (`research dev` and the worker do when they start)\n",
    )


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Can HybridCache replace Redis as the distributed cache?", "hybridcache-replace-redis"),
        ("How does Harbor Queue deal with a poison message?", "harbor-queue-deal"),
        ("Wie lange dauert ein Über-Update?", "wie-lange-dauert"),
    ],
)
def test_a_run_id_says_what_the_run_asks(question: str, named: str) -> None:
    """The Web UI's list and `research runs` show run ids: each starts with its question's first
    content words, and random hex keeps two runs of one question apart."""
    first, second = new_run_id(question), new_run_id(question)

    assert first.startswith(f"research-{named}-") and len(first) == len(f"research-{named}-") + 6
    assert first != second


def test_a_run_id_without_words_is_research_and_hex() -> None:
    assert re.fullmatch(r"research-[0-9a-f]{8}", new_run_id("¿? !"))


def test_the_static_details_say_their_limits_are_the_start_limits() -> None:
    details = static_details(Brief.model_validate(GOOD_BRIEF), "research-x")

    assert "Limits at the start: 20 steps, 4 searches, 6 pages, 100000 tokens, 300 s" in details
    assert "`research status research-x` show the limits now" in details
