"""The run's state and its rules (pure): bounds, remaining budget, ID assignment, target checks."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from workflows.cleaning import clean, echo
from workflows.composer import compose, unaccepted
from workflows.contracts import DecideInput, SaveReportInput, StepRecord
from workflows.ending import Outcome
from workflows.gate import open_questions, page_names, source_families
from workflows.hosts import host_allowed, seed_problem, without_credentials
from workflows.models import (
    LIMIT_CEILINGS,
    Brief,
    Budget,
    Counters,
    Evidence,
    ExtendLimitsInput,
    Limits,
    Progress,
    RefusedSeed,
    Report,
    ResultQuote,
    RunResult,
    RunStatus,
    SearchHit,
    SeedsAdded,
    SourceRef,
    StepNote,
    StopReason,
    Submitted,
    Usage,
)
from workflows.scope import RunScope
from workflows.substance import distinctive_words
from workflows.tool_base import InvalidCall
from workflows.tools.spec import ReadTarget
from workflows.transcript import TranscriptEntry
from workflows.verification import Verification

MAX_SEEDS = 20  # seed URLs a run keeps (the brief's and the operator's): each is in every prompt
MAX_GUIDANCE = 10  # operator guidance kept (newest): it counts against the context too
MAX_FINISH_REASON_CHARS = 500  # an operator's finish_now reason, as the report shows it


class RunState(BaseModel):
    brief: Brief
    limits: Limits
    started_at: datetime
    counters: Counters = Field(default_factory=Counters)
    evidence: dict[str, Evidence] = Field(default_factory=dict)
    sources: dict[str, SourceRef] = Field(default_factory=dict)
    url_index: dict[str, str] = Field(default_factory=dict)  # URL asked for -> source id
    discovered: dict[str, SearchHit] = Field(default_factory=dict)  # search results, in order
    seeds: list[str] = Field(default_factory=list)
    # The brief's seed URLs the check at the start could not read, with why (every prompt names
    # them, before the model spends a step on one).
    unreadable_seeds: list[RefusedSeed] = Field(default_factory=list)
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    guidance: list[str] = Field(default_factory=list)
    finish_requested: bool = False
    finish_reason: str = ""  # the operator's words with finish_now, for the report's limitations
    submitted: Submitted | None = None  # the model's last refused report, and why
    # The execution the ledger last said it wrote under (start_run, decide, record_step): replayed
    # from history after a reset, it names the execution the reset branched from.
    writer: str = ""
    lanes: list[str] = Field(default_factory=list)  # the lanes entered, in order
    escalation: str = ""  # why the run left the fixed lane ("": it did not)
    escalation_asked: str = ""  # an operator's escalate, not yet acted on (its reason)
    # The fixed lane is submitting its report, past its last check for an operator's escalate
    # (`workflows.lanes`): one asked now would never be acted on, so it is refused.
    fixed_submitted: bool = Field(default=False, exclude_if=lambda value: not value)

    @classmethod
    def begin(cls, brief: Brief, now: datetime) -> RunState:
        return cls(brief=brief, limits=brief.limits, started_at=now, seeds=list(brief.seed_urls))

    def added_seeds(self) -> list[str]:
        """The seed URLs the operator added while the run ran (the brief lists its own)."""
        return [url for url in self.seeds if url not in self.brief.seed_urls]

    def add_seeds(self, urls: list[str]) -> SeedsAdded:
        """Take the operator's seed URLs that may be read, saying why each other one is refused."""
        added = SeedsAdded()
        allowed = self.brief.allowed_hosts
        for sent in urls:
            url = sent.strip()
            if url in self.seeds:
                added.known.append(url)
                continue
            problem = seed_problem(url, allowed)
            if problem is None and len(self.seeds) >= MAX_SEEDS:
                problem = f"is one too many: a run keeps at most {MAX_SEEDS} seed URLs"
            if problem is None:
                self.seeds.append(url)
                added.accepted.append(url)
            else:
                shown = echo(without_credentials(url), 200)
                added.refused.append(RefusedSeed(url=shown, reason=problem))
        return added

    def add_guidance(self, text: str) -> None:
        """Keep an operator's guidance for the model: only the most recent pieces."""
        self.guidance = [*self.guidance, text][-MAX_GUIDANCE:]

    def request_finish(self, reason: str) -> None:
        """An operator's finish_now: the run ends before its next turn, with a composed report."""
        self.finish_requested = True
        # Operator text, shown in the report as text (escaped there), capped.
        self.finish_reason = clean(reason, MAX_FINISH_REASON_CHARS)

    def enter_lane(self, lane: str, why: str = "") -> None:
        """Record a lane entered (and, for the agent after the fixed lane, why)."""
        if not self.lanes or self.lanes[-1] != lane:
            self.lanes.append(lane)
        if why and not self.escalation:
            self.escalation = clean(why, MAX_FINISH_REASON_CHARS)

    def ask_escalation(self, reason: str) -> None:
        """An operator's escalate: acted on before the fixed lane's next step."""
        self.escalation_asked = clean(reason, MAX_FINISH_REASON_CHARS) or "asked by an operator"

    # ------------------------------------------------------------ bounds

    def deadline(self) -> datetime:
        return self.started_at + timedelta(seconds=self.limits.deadline_seconds)

    def seconds_left(self, now: datetime) -> float:
        return max(0.0, (self.deadline() - now).total_seconds())

    def tripped(self, now: datetime) -> StopReason | None:
        """The bound that ends the run now, checked before every model turn."""
        if self.finish_requested:
            return StopReason.OPERATOR_FINISH
        if self.counters.steps >= self.limits.max_steps:
            return StopReason.STEP_LIMIT
        if self.counters.tokens >= self.limits.max_tokens:
            return StopReason.TOKEN_LIMIT
        if self.seconds_left(now) <= 0:
            return StopReason.DEADLINE
        return None

    def take_step(self) -> int:
        """Spend one step (every tool call, valid or not, and every malformed turn): its number."""
        self.counters.steps += 1
        return self.counters.steps

    def next_model_call(self) -> int:
        """The next turn's number, not yet counted (`count_model_call` once it answered)."""
        return self.counters.model_calls + 1

    def count_model_call(self, turn: int) -> None:
        """Count a turn that completed: counters count model calls that answered."""
        self.counters.model_calls = max(self.counters.model_calls, turn)

    def take_finish_attempt(self) -> int:
        """Spend one finish attempt: how many are left after it."""
        self.counters.finish_attempts += 1
        return self.limits.max_finish_attempts - self.counters.finish_attempts

    def add_usage(self, usage: Usage) -> None:
        """Count a model turn's tokens: a negative or absurd report cannot defeat the bound."""
        self.counters.tokens += usage.counted()
        if usage.estimated and usage.note:  # a provider's report replaced (not a local policy)
            self.counters.estimated_tokens += usage.counted()

    def take_search(self) -> bool:
        """Spend one search of the budget; False (nothing spent) when none is left."""
        if self.counters.searches >= self.limits.max_searches:
            return False
        self.counters.searches += 1
        return True

    def take_fetch(self, target: ReadTarget) -> bool:
        """Spend one page fetch for a new URL (a stored source costs none); False when none is
        left. The URL is bound to its source id from here on, even if the fetch fails."""
        if not target.fetch:
            return True
        if self.counters.page_fetches >= self.limits.max_page_fetches:
            return False
        self.counters.page_fetches += 1
        self.url_index[target.url] = target.source_id
        return True

    def decide_input(
        self, scope: RunScope, records: list[StepRecord], turn_start: int, now: datetime
    ) -> DecideInput:
        """The next model turn's request: decide reads the transcript up to the steps taken (its
        watermark) from the ledger, after it records `records`, the steps no row holds yet."""
        return DecideInput(
            scope=scope,
            brief=self.brief,
            guidance=list(self.guidance),
            seeds=self.added_seeds(),
            unreadable_seeds=list(self.unreadable_seeds),
            budget=self.budget(now),
            watermark=self.counters.steps,
            context_budget=self._context_budget(),
            turn_start=turn_start,
            records=records,
        )

    def _context_budget(self) -> int:
        """The characters a model request's transcript may take: the context limit less what every
        request carries (the brief, the guidance, the seeds the operator added)."""
        fixed = len(self.brief.model_dump_json()) + sum(map(len, self.guidance))
        fixed += sum(len(url) + 2 for url in self.added_seeds())
        fixed += sum(len(seed.url) + len(seed.reason) + 4 for seed in self.unreadable_seeds)
        return self.limits.max_context_chars - fixed

    def budget(self, now: datetime) -> Budget:
        limits, used = self.limits, self.counters
        return Budget(
            steps_left=max(0, limits.max_steps - used.steps),
            searches_left=max(0, limits.max_searches - used.searches),
            pages_left=max(0, limits.max_page_fetches - used.page_fetches),
            tokens_left=max(0, limits.max_tokens - used.tokens),
            seconds_left=int(self.seconds_left(now)),
        )

    def extend_refused(self, request: ExtendLimitsInput) -> str:
        """Why `extend` would refuse the request, in one sentence ("": it would not)."""
        try:
            self.model_copy(deep=True).extend(request)
        except ValueError as refused:
            return str(refused)
        return ""

    def extend(self, request: ExtendLimitsInput) -> Limits:
        """Raise limits on operator request; refuse lowering and anything above the ceilings."""
        changes = request.model_dump(exclude_none=True)
        if not changes:
            raise ValueError("name at least one limit to extend")
        current = self.limits.model_dump()
        for name, value in changes.items():
            if value <= current[name]:
                raise ValueError(f"{name} can only be raised: it is {current[name]}, asked {value}")
            if value > LIMIT_CEILINGS[name]:
                raise ValueError(f"{name} {value} is above its ceiling of {LIMIT_CEILINGS[name]}")
        self.limits = self.limits.model_copy(update=changes)
        return self.limits

    # ------------------------------------------------------------ the result

    def save_input(
        self,
        scope: RunScope,
        outcome: Outcome,
        report: Report,
        verification: Verification,
        records: list[StepRecord],
        now: datetime,
    ) -> SaveReportInput:
        """What `save_report` stores of the ended run (`records`: steps no decide recorded)."""
        return SaveReportInput(
            scope=scope,
            status=outcome.status,
            stop_reason=outcome.stop_reason,
            report=report,
            counters=self.counters,
            finished_at=now.isoformat(),
            verification=verification,
            records=records,
            lanes=self.lanes,
            escalation=self.escalation,
        )

    def final_report(
        self, status: RunStatus, stop: StopReason, report: Report | None, detail: str
    ) -> Report:
        """The report a run ends with: the model's accepted one, or one composed from the recorded
        evidence (`detail`: why it stopped), keeping an unaccepted submission beside it."""
        report = report or compose(self.brief, self.evidence, self.sources, stop, detail)
        if report.composed and status is not RunStatus.COMPLETED:
            report = unaccepted(report, self.evidence, self.submitted)
        return report

    def progress(
        self,
        run_id: str,
        status: RunStatus,
        stop_reason: StopReason | None,
        notes: list[StepNote],
        now: datetime,
    ) -> Progress:
        """The run as the progress query shows it: counters, limits, what is open, the last steps
        (`notes`, oldest first)."""
        return Progress(
            run_id=run_id,
            status=status,
            stop_reason=stop_reason,
            counters=self.counters,
            limits=self.limits,
            evidence_count=len(self.evidence),
            source_count=len(self.sources),
            open_questions=open_questions(self.brief, self.evidence),
            last_action=notes[-1].action if notes else "",
            recent_steps=notes,
            seconds_left=int(self.seconds_left(now)),
            lanes=list(self.lanes),
            escalation=self.escalation,
        )

    def result(
        self, run_id: str, outcome: Outcome, report: Report, verified: bool | None, verifier: str
    ) -> RunResult:
        """The run's result, as its client reads it: the report, the counts, every quote, and for
        a completed run whether a verifier model checked its meaning (`verifier`: which)."""
        cited = {eid for finding in report.findings for eid in finding.evidence_ids}
        cited_sources = sorted({self.evidence[e].source_id for e in cited if e in self.evidence})
        return RunResult(
            run_id=run_id,
            status=outcome.status,
            stop_reason=outcome.stop_reason,
            counters=self.counters,
            evidence_count=len(self.evidence),
            source_count=len(self.sources),
            independent_sources=len(source_families(cited_sources, self.sources)),
            report=report,
            message=outcome.detail,
            verified=verified,
            verifier=verifier,
            lanes=list(self.lanes),
            escalation=self.escalation,
            quotes=[
                ResultQuote(
                    id=item.id,
                    question_id=item.question_id,
                    stance=item.stance,
                    quote=item.quote,
                    url=self.sources[item.source_id].url if item.source_id in self.sources else "",
                )
                for item in self.evidence.values()
            ],
        )

    # ------------------------------------------------------------ IDs, assigned in order

    def next_source_id(self) -> str:
        return f"S{len(self.sources) + 1}"

    def next_evidence_id(self) -> str:
        return f"E{len(self.evidence) + 1:03d}"

    # ------------------------------------------------------------ checks on tool arguments

    def read_target(self, url: str | None, source_id: str | None) -> ReadTarget:
        """What a read of `source_id` (a stored source) or `url` reads, and whether it fetches."""
        if source_id is not None:
            source = self.sources.get(source_id)
            if source is None:
                raise InvalidCall(f"unknown source_id {echo(source_id)}; known: {self._known()}")
            return ReadTarget(url=source.url, source_id=source.id, fetch=False)
        url = (url or "").strip()
        if url in self.url_index:
            return ReadTarget(url=url, source_id=self.url_index[url], fetch=False)
        if not host_allowed(url, self.brief.allowed_hosts):
            raise InvalidCall(
                f"{echo(url, 200)} is not on an allowed host "
                f"({', '.join(self.brief.allowed_hosts)})"
            )
        if url not in self.discovered and url not in self.seeds:
            raise InvalidCall(
                f"{echo(url, 200)} is neither a seed URL nor a search result: search first"
            )
        return ReadTarget(url=url, source_id=self.next_source_id(), fetch=True)

    def check_evidence(self, question_id: str, source_id: str, passage_id: str | None) -> None:
        """Refuse evidence for an unknown question, from a page not read, or whose passage is of
        another page."""
        if question_id not in self.brief.question_ids():
            known = ", ".join(self.brief.question_ids())
            raise InvalidCall(f"unknown question_id {echo(question_id)}; the questions are {known}")
        source = self.sources.get(source_id)
        if source is None or not source.ok:
            raise InvalidCall(
                f"unknown source_id {echo(source_id)}: evidence must come from a page you "
                f"have read (known: {self._known()}); search snippets cannot be evidence"
            )
        if passage_id is not None and not passage_id.startswith(f"{source_id}.P"):
            raise InvalidCall(f"passage {echo(passage_id)} does not belong to {echo(source_id)}")

    def add_source(self, source_id: str, source: SourceRef, texts: list[str]) -> None:
        """Keep a page read (again) under its id, with the dates and versions it names: in
        `texts` (its URL, title and passages) and in earlier reads of it (rule 8)."""
        known = self.sources.get(source_id)
        names = page_names(texts, known.names if known is not None else [])
        self.sources[source_id] = source.model_copy(update={"names": names})

    def add_evidence(self, evidence_id: str, evidence: Evidence) -> None:
        """Keep evidence the ledger proved and stored under the id the workflow assigned."""
        self.evidence[evidence_id] = evidence

    def discover(self, hits: list[SearchHit]) -> None:
        """Keep search results (and the near-duplicates listed under them, after them) as URLs
        the model may read, in the order found; a URL found before keeps its first hit."""
        for hit in hits:
            self.discovered.setdefault(hit.url, hit)
        for hit in hits:
            for url in hit.also:
                self.discovered.setdefault(url, hit.model_copy(update={"url": url, "also": []}))

    def question_terms(self, question_id: str) -> list[str]:
        """The words evidence for this question must touch (`substance.distinctive_words`)."""
        brief = self.brief
        texts = {question.id: question.text for question in brief.questions}
        return distinctive_words(texts[question_id], brief.question, list(texts.values()))

    def question_text(self, question_id: str) -> str:
        return next(q.text for q in self.brief.questions if q.id == question_id)

    def unread_urls(self) -> list[str]:
        candidates = [*self.seeds, *self.discovered]
        return [url for url in dict.fromkeys(candidates) if url not in self.url_index]

    def _known(self) -> str:
        readable = [sid for sid, source in self.sources.items() if source.ok]
        return ", ".join(readable) or "none yet"
