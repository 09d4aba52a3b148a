"""`research eval` as a user runs it: the demo set and a slice of real documentation, through the
fixed pipeline, the offline policy and a model served by a local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runtime.settings import PROJECT_ROOT
from tests import cassettes
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve, tool
from tests.system.conftest import research
from workflows.rules import RULES

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]

DEMO = PROJECT_ROOT / "examples" / "golden" / "demo.json"
SLICE = PROJECT_ROOT / "tests" / "golden" / "python-slice.json"


def searching_then_giving_up(turn: int, messages: list[Message]) -> Reply:
    """A model that searches once and submits nothing: the arm must still be run and scored."""
    if turn == 1:
        return tool("search_web", query="documentation")
    return tool("finish_research", answer="Nothing found.", limitations="It gave up.")


def research_eval(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return research(env, "eval", *args, timeout=220)


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESEARCH_", "OPENAI_"))}
    env.pop("DATABASE_URL", None)
    env["RESEARCH_STATE_DIR"] = str(tmp_path / "state")
    return env


def test_eval_tables_each_arm_on_the_demo_and_real_pages(tmp_path: Path) -> None:
    fake = FakeOpenAI(searching_then_giving_up)
    with serve(fake) as base_url:
        env = clean_env(tmp_path) | {
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-eval-test",
        }
        out, figures = tmp_path / "eval", tmp_path / "results" / "eval.json"
        done = research_eval(
            env, str(DEMO), str(SLICE), "--model", "fake-model", "--out", str(out),
            "--figures", str(figures),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    report: dict[str, Any] = json.loads(out.with_suffix(".json").read_text())
    assert report["arms"] == ["fixed", "offline", "openai:fake-model"]
    assert len(report["runs"]) == 3 * (2 + 4)
    assert {body["model"] for body in fake.requests} == {"fake-model"}
    names = {rule.name for rule in RULES}
    for arm, summary in report["summary"].items():
        runs = [run for run in report["runs"] if run["arm"] == arm]
        short = [run for run in runs if run["refused_by"] == ["independent"]]
        assert summary["short_of_sources"] == sum(not run["completed"] for run in short), arm
        assert all(set(run["refused_by"]) <= names for run in runs), "every gap is a rule's"
        failed = [run for run in runs if run["stop_reason"] == "finish_attempts_exhausted"]
        assert all(run["refused_by"] for run in failed), "a refused report says what it broke"
        keys = ("completed", "recalled", "questions", "cited", "on_label", "phrase_hits")
        for key in (*keys, "phrase_misses"):
            assert summary[key] == sum(int(run[key]) for run in runs), (arm, key)
        assert all(run["recalled"] <= run["questions"] for run in runs)
        assert all(run["on_label"] <= run["cited"] for run in runs)
        assert (
            summary["completed_verified"] + summary["completed_unverified"] == summary["completed"]
        )
        # a verifier model is configured (the fake's): every arm's completions are verified
        assert summary["completed_unverified"] == 0, arm

    demo = [r for r in report["runs"] if r["golden"] == "demo.json" and r["arm"] == "offline"]
    # The optional Q3 of the first brief is left open: only a mirror of its page says it, and
    # the offline policy settles a question on two pages that agree.
    assert [(r["completed"], r["recalled"], r["questions"]) for r in demo] == [
        (True, 2, 3),
        (True, 1, 1),
    ], "the offline policy answers the demo briefs from their labelled pages"
    model = [r for r in report["runs"] if r["arm"] == "openai:fake-model"]
    assert all((r["completed"], r["cited"]) == (False, 0) for r in model)
    fixed = [r for r in report["runs"] if r["arm"] == "fixed"]
    assert all(r["steps"] <= 3 * r["questions"] + 3 for r in fixed), "no loop: 3 steps a question"
    real = [r for r in report["runs"] if r["golden"] == "python-slice.json"]
    assert sum(r["found"] for r in real) > 0, "real pages answer some questions"
    assert all(r["recalled"] <= r["found"] for r in report["runs"]), "what it cites it found"

    table = out.with_suffix(".md").read_text()
    assert table.splitlines()[2] == (
        "| set | arm | briefs | completed verified | completed unverified | correct | wrong "
        "| incomplete | recall | found | escalated | model calls | tokens | steps | seconds |"
    )
    assert "| all | openai:fake-model | 6 | 0 | 0 | 0 | 0 | 6 | 0/" in table
    assert "| demo.json | offline | 2 | 2 | 0 | 2 | 0 | 0 | 3/4 | 3/4 | " in table

    # The figures alone, as data the docs point at: dated, on this machine, and comparable
    # between two evaluations of the same code (no run ids, seconds or quotes per run).
    written: dict[str, Any] = json.loads(figures.read_text())
    assert written["name"] == "eval" and written["machine"]["cores"] == os.cpu_count()
    assert written["command"].startswith(f"research eval {DEMO} {SLICE} --arms fixed,offline")
    assert written["started"] <= written["finished"]
    assert written["figures"]["summary"] == report["summary"]
    assert written["figures"]["by_golden"] == report["by_golden"]
    assert [run["status"] for run in written["figures"]["runs"]] == [
        run["status"] for run in report["runs"]
    ]
    assert not {"run_id", "seconds", "cited_evidence"} & set(written["figures"]["runs"][0])
    assert figures.with_suffix(".md").read_text() == table
    by_set = report["by_golden"]["python-slice.json"]["offline"]
    assert by_set["briefs"] == 4
    assert "demo.json 1: How does Harbor Queue deal with" in table
    assert done.stdout.count("] ") >= 18, "a progress line per run"


def test_eval_refuses_what_it_cannot_run_in_one_sentence(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text('{"briefs": [{"question": "q", "questions": []}]}')
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"host": "docs.python.org", "corpus_dir": "nowhere", "briefs": [
        {"question": "Why?", "questions": [{"id": "Q1", "text": "Why?", "pages": ["a.html"]}]}
    ]}))  # fmt: skip

    cases = [
        ([str(broken)], "error: golden set " + str(broken) + ": briefs.0.questions: "),
        ([str(missing)], f"error: the corpus of {missing} is not at {tmp_path / 'nowhere'}"),
        ([str(DEMO), "--arms", "random"], "error: unknown arm 'random'"),
        ([str(DEMO), "--model", "gpt-x"], "error: --model needs a model provider"),
    ]
    for args, message in cases:
        done = research_eval(env, *args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(message), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def composing_nothing(turn: int, messages: list[Message]) -> Reply:
    """A fixed lane's composing call answered with a report citing nothing (refused: the run
    escalates in `auto`); the agent gives up as `searching_then_giving_up` does."""
    if str(messages[0].get("content", "")).startswith("You write a research report"):
        return tool("compose_report", answer="Nothing found.", findings=[], limitations="None.")
    return searching_then_giving_up(turn, messages)


def test_eval_runs_the_lane_ablation_offline_and_with_a_model(tmp_path: Path) -> None:
    offline = tmp_path / "offline"
    done = research_eval(
        clean_env(tmp_path), str(DEMO), "--arms", "fixed,agent,auto", "--out", str(offline)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(offline.with_suffix(".json").read_text())
    assert report["arms"] == ["fixed", "agent", "auto"]
    assert all(summary["escalated"] == 0 for summary in report["summary"].values())
    # the offline arms decide without a model: no model calls, whatever their steps
    assert all(summary["mean_model_calls"] == 0 for summary in report["summary"].values())
    assert all(summary["mean_steps"] > 0 for summary in report["summary"].values())

    fake = FakeOpenAI(composing_nothing)
    with serve(fake) as base_url:
        env = clean_env(tmp_path) | {
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-eval-test",
        }
        out = tmp_path / "lanes"
        done = research_eval(
            env, str(DEMO), "--arms", "fixed,agent,auto", "--model", "fake-model", "--out", str(out)
        )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["arms"] == ["fixed", "agent", "auto"]
    summary = report["summary"]
    briefs = summary["auto"]["briefs"]
    assert summary["auto"]["escalated"] == briefs  # its composed report was refused: the agent
    assert summary["fixed"]["escalated"] == summary["agent"]["escalated"] == 0
    assert summary["fixed"]["mean_model_calls"] == 1  # the fixed lane alone: one composing call
    assert summary["fixed"]["incomplete"] == briefs
    assert all(r["model_calls"] > 1 for r in report["runs"] if r["arm"] == "auto")
    table = out.with_suffix(".md").read_text()
    assert f"| demo.json | auto | {briefs} | " in table


RECORDED = ["run6-harborq-thorough", "run8-harborq-conflict"]
CELERY = PROJECT_ROOT / "tests" / "transcripts" / "celery" / "b2"
CELERY_PAGES = PROJECT_ROOT / "tests" / "transcripts" / "pages"  # the pages b2 read


def _celery(tmp_path: Path, name: str, *, drop_refused_turn: bool = False) -> Path:
    """Celery run b2 on the two pages it read. With `drop_refused_turn`, a recording made from it
    (not a recorded run): without the finish the gate refused then, its accepted finish comes a
    step earlier, and so do the verdicts the verifier gave it (which the replay then reads)."""
    folder = tmp_path / name
    folder.mkdir()
    turns = json.loads((CELERY / "calls.json").read_text())
    recorded = json.loads((CELERY / "recorded.json").read_text())
    recorded["corpus_dir"] = str(CELERY_PAGES)
    if drop_refused_turn:
        (refused,) = [step for step, _, ok, _ in recorded["steps"] if not ok]
        del turns[refused - 1]
        recorded["steps"] = [
            [step - (step > refused), tool, ok, error]
            for step, tool, ok, error in recorded["steps"]
            if step != refused
        ]
        for verdict in recorded["verdicts"]:
            verdict["step"] -= 1
    (folder / "calls.json").write_text(json.dumps(turns))
    (folder / "recorded.json").write_text(json.dumps(recorded))
    (folder / "judged.json").write_text((CELERY / "judged.json").read_text())
    return folder


def test_eval_replays_recorded_runs_through_the_current_gate(tmp_path: Path) -> None:
    """The recorded arm: each cassette's decisions replayed by the eval as the cassette test plays
    them (its refusals are the cut's), the judged refusals treated as judged, a recording cut
    short ends where its turns run out, as a divergence, not a crash, and a Celery run's judged
    FALSE refusal passes the gate."""
    short = tmp_path / "run1-cut-short"
    short.mkdir()
    run1 = cassettes.HERE / "run1-harborq"
    (short / "calls.json").write_text(json.dumps(cassettes.calls("run1-harborq")[:3]))
    recorded = json.loads((run1 / "recorded.json").read_text())
    recorded["corpus_dir"] = str((run1 / recorded["corpus_dir"]).resolve())
    (short / "recorded.json").write_text(json.dumps(recorded))
    celery = [_celery(tmp_path, "b2"), _celery(tmp_path, "b2-verified", drop_refused_turn=True)]
    folders = [str(cassettes.HERE / name) for name in RECORDED] + [str(short)]
    folders += [str(folder) for folder in celery]
    out = tmp_path / "eval"
    args = [arg for folder in folders for arg in ("--recorded", folder)]
    done = research_eval(
        clean_env(tmp_path), str(DEMO), "--arms", "fixed", "--out", str(out), *args
    )
    assert done.returncode == 0, done.stdout + done.stderr

    rows = json.loads(out.with_suffix(".json").read_text())["recorded"]
    assert [row["recording"] for row in rows] == [*RECORDED, "run1-cut-short", "b2", "b2-verified"]
    for name, row in zip(RECORDED, rows, strict=False):
        cut = cassettes.outcome(name)
        assert (row["end"] == "completed") == (cut["status"] == "completed")
        assert row["refused"] == [[s, tool, error] for s, tool, ok, error in cut["steps"] if not ok]
        assert row["steps"] == len(cut["steps"]) and row["verified"] is False
        assert row["judged"] and all(item["as_judged"] for item in row["judged"]), row["judged"]
    cut_short, b2, verified = rows[-3:]
    assert cut_short["end"] == "out of recorded turns at turn 4"
    assert cut_short["divergence"]["step"] == 4
    assert "recorded no model decision for turn 4" in cut_short["message"]
    # b2's finish refused then for "at most 3 times" (judged FALSE) passes the gate now; the
    # verifier never read it, so the replay stops there and says so
    assert b2["end"] == "gate passed, no recorded verdict", b2
    assert b2["divergence"] == {
        "step": 9, "recorded": b2["divergence"]["recorded"], "replayed": "finish_research accepted"
    }  # fmt: skip
    assert "at most 3 times" in b2["divergence"]["recorded"]
    assert [(j["verdict"], j["now"], j["as_judged"]) for j in b2["judged"]] == [
        ("FALSE", "accepted", True)
    ]
    # the finish the verifier read, at the step it read it: the recorded verdicts on the answer
    # and the findings replay, and the replay stops at a claim the recorded verifier never read
    # (the current one reads the limitations and coverage too); no divergence before it
    assert verified["end"] == "gate passed, no recorded verdict", verified
    assert verified["divergence"] is None, verified
    said = verified["message"].split("recorded no verdict on ")[1]
    assert not said.startswith(("the answer", "finding")), said
    table = out.with_suffix(".md").read_text()
    assert (
        "| run6-harborq-thorough | completed | completed unverified | 15 (15) | 3 | no | 4/4 |"
        in table
    )
