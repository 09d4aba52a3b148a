"""How long a finish waits on its verifier: the claims of a submission asked at once.

    .venv/bin/python -m bench.verifier [--delay 2] [--repeats 3] [--claims 5]   (make bench)

The real `verify` activity (`activities.model.verify`) judges a submission of --claims findings,
through the real `openai` client, against the local OpenAI-compatible server playing a verifier
that answers each claim after --delay seconds, and saves each verdict to a real ledger (the
embedded PostgreSQL, in a scratch state folder). A finish is timed at each verifier concurrency
(RESEARCH_VERIFIER_CONCURRENCY): 1 (one claim after another), the default, and one per claim;
each --repeats times after one finish to warm up, each a run of its own. The goal (issue 47): a
five-claim finish takes about one answer's time, not five; "about" is read as at most 1.5
answers. Figures only: the table is printed and written, dated, to bench/results/verifier.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.model import VerifierActivities
from activities.model.decide import ModelClient
from composition.ledger import open_database, open_ledger
from runtime.database import apply_migrations
from runtime.options import ChatOptions, VerifierSettings
from runtime.settings import Settings
from starter.figures import AtMost, Measurement, Row, print_table
from tests.fakes.openai_server import FakeOpenAI, Reply, VerifierRequest, serve, supporting
from workflows.models import Brief
from workflows.scope import RunScope
from workflows.verification import Claim, ClaimQuote, VerifyInput

DEFAULT = VerifierSettings().concurrency
KEY = "sk-bench-not-a-real-key"
STEP = 3  # the step of the finish the verdicts are recorded under
BRIEF = Brief(question="How does Harbor Queue handle failing messages?", allowed_hosts=["docs.ex"])


async def bench(
    delay: float,
    repeats: int,
    claims: int,
    database_url: str | None = None,
    out: Path | None = None,
) -> Path:
    """Measure, print the table, write the figures (to `out`, else bench/results/verifier.json);
    the file written is returned. `database_url`: a migrated ledger, else an embedded one."""
    command = f"python -m bench.verifier --delay {delay:g} --repeats {repeats} --claims {claims}"
    measurement = Measurement.begin("verifier", command)
    async with _ledger(database_url) as ledger:
        seconds = await measure(ledger, delay, repeats, claims)
    rows = [
        Row(
            f"{claims}-claim finish, verifier concurrency {level}{_named(level, claims)}",
            f"{statistics.median(took):.2f} s",
            f"one answer {delay:g} s; {claims} in turn {claims * delay:g} s; "
            f"runs {', '.join(f'{t:.2f}' for t in took)}",
            goal=AtMost(1.5 * delay, "s") if level != 1 else None,
            value=statistics.median(took),
        )
        for level, took in seconds.items()
    ]
    print_table(rows, measurement)
    figures: dict[str, Any] = {
        "answer_seconds": delay,
        "claims": claims,
        "repeats": repeats,
        "seconds_per_finish": {
            str(level): [round(t, 3) for t in took] for level, took in seconds.items()
        },
        "rows": [row.as_dict() for row in rows],
    }
    written = measurement.write(figures, out)
    print(f"wrote {written}")
    return written


def _named(level: int, claims: int) -> str:
    if level == DEFAULT:
        return " (the default)"
    return " (one per claim)" if level == claims else ""


async def measure(
    ledger: Ledger, delay: float, repeats: int, claims: int
) -> dict[int, list[float]]:
    """Seconds per finish at each concurrency, one figure per repetition."""
    fake = FakeOpenAI(lambda turn, messages: {"content": "unused"}, verifier=_slow(delay))
    seconds: dict[int, list[float]] = {}
    with serve(fake) as url:
        async with AsyncOpenAI(base_url=url, api_key=KEY, max_retries=0) as openai:
            client = ModelClient(openai=openai)
            for level in dict.fromkeys((1, DEFAULT, claims)):
                settings = VerifierSettings(
                    provider="openai", base_url=url, api_key=KEY, concurrency=level
                )
                activities = VerifierActivities(
                    settings, ChatOptions(provider="openai"), ledger, client
                )
                await _finish(activities, ledger, claims)  # warm: connections, first imports
                seconds[level] = [await _finish(activities, ledger, claims) for _ in range(repeats)]
    return seconds


async def _finish(activities: VerifierActivities, ledger: Ledger, claims: int) -> float:
    """One submission's verification, timed; its verdicts checked to be the verifier's answers,
    each saved in the ledger (else this measured something else)."""
    run_id = f"bench-verifier-{uuid.uuid4().hex[:12]}"
    await ledger.start_run(run_id, BRIEF, "2026-01-02T03:04:05+00:00")
    request = VerifyInput(scope=RunScope.tool_of(run_id, "", STEP, 0, ""), claims=_claims(claims))
    started = time.perf_counter()
    result = await ActivityEnvironment().run(activities.verify, request)
    took = time.perf_counter() - started
    saved = await ledger.verdicts(run_id, STEP)
    if [v.verdict for v in result.verdicts] != ["supported"] * claims or len(saved) != claims:
        raise RuntimeError(f"run {run_id}: not every claim was judged supported and saved")
    return took


def _claims(count: int) -> list[Claim]:
    """`count` findings, each citing a quote of its own that states it."""
    return [
        Claim(
            number=number,
            text=f"Harbor Queue retries a failing message {number} times on queue q{number}.",
            questions=[BRIEF.question],
            quotes=[
                ClaimQuote(
                    evidence_id=f"E{number:03}",
                    question_id="Q1",
                    text=f"On queue q{number}, Harbor Queue retries a failing message {number} "
                    "times.",
                )
            ],
        )
        for number in range(1, count + 1)
    ]


def _slow(delay: float) -> Any:
    """The fake's default verifier (every claim supported by its quote), after `delay` seconds."""

    def verifier(request: VerifierRequest) -> Reply:
        return {**supporting(request), "delay": delay}

    return verifier


@asynccontextmanager
async def _ledger(database_url: str | None) -> AsyncIterator[Ledger]:
    if database_url is not None:
        async with open_ledger(database_url) as ledger:
            yield ledger
        return
    with tempfile.TemporaryDirectory(prefix="bench-verifier-") as scratch:
        async with open_database(Settings(state_dir=Path(scratch))) as url:
            await asyncio.to_thread(apply_migrations, url)
            async with open_ledger(url) as ledger:
                yield ledger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the verifier thinks")
    parser.add_argument("--repeats", type=int, default=3, help="finishes timed per concurrency")
    parser.add_argument("--claims", type=int, default=5, help="claims per submission")
    args = parser.parse_args()
    asyncio.run(bench(args.delay, args.repeats, args.claims))


if __name__ == "__main__":
    main()
