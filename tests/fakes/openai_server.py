"""A real local HTTP server speaking the OpenAI chat-completions wire format, scripted per turn.

The real `openai` client talks to it over loopback. A script is a function from the request's
messages to one assistant reply (tool calls or text); the turn is 1 + the assistant messages
already in the conversation, so a retried turn is seen as the same turn again.

The same server plays the verifier (`activities.model.verify`): a request that offers no tools
and asks for a JSON `response_format` is a verifier's, parsed into a `VerifierRequest` (the
claim, its sub-questions, its quotes) and answered by the verifier script's JSON (by default
`supporting`: "supported", copying the first sentence of the first quote). Those requests are
kept apart (`verifier_requests`) and never count as a model turn.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from tests.fakes import QuietHandler, serving
from workflows import context

Message = dict[str, Any]
# {"tool_calls": [(name, arguments)]} or {"content": "..."}; optional "no_usage": True,
# "trickle": seconds (the body one byte at a time), "delay": seconds (before answering),
# "reasoning_tokens": n, "usage": {...} (sent as it is); or an error
# {"status": 429, "headers": {...}, "error": "..."}
Reply = dict[str, Any]
Script = Callable[[int, list[Message]], Reply]
# A shown quote of a verifier request (its page lines, "quote: ...", "whole sentence: ..."), its
# claim block, and the concerns listed after "raised these concerns".
QUOTE_BLOCK = re.compile(r'<untrusted_quote id="([^"]*)">\n(.*?)\n</untrusted_quote>', re.DOTALL)
QUOTE_TEXT = re.compile(r"^quote: (.*?)(?:\nwhole sentence: (.*))?\Z", re.MULTILINE | re.DOTALL)
CLAIM_BLOCK = re.compile(r"^(.*)\n<untrusted_claim>\n(.*?)\n</untrusted_claim>", re.MULTILINE)
QUESTION_LINE = re.compile(r"^- (.*)$", re.MULTILINE)
CONCERN_LINE = re.compile(r"^\d+\. (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class VerifierRequest:
    """What a verifier request showed: the claim, the sub-questions, the quotes by evidence id."""

    claim: str
    questions: list[str]
    quotes: dict[str, str]
    system: str = ""
    asked: str = ""  # what the claim is: "Claim (a finding):", "Required question, ..."
    sentences: dict[str, str] | None = None  # the whole sentence a quote was cut from, by id
    pages: dict[str, str] | None = None  # each quote's page lines (title, url, section, dates)
    concerns: tuple[str, ...] = ()

    @classmethod
    def parse(cls, messages: list[Message]) -> VerifierRequest:
        system = str(messages[0].get("content") or "")
        user = str(messages[-1].get("content") or "")
        claim = CLAIM_BLOCK.search(user)
        head = user[: claim.start()] if claim else user
        quotes, sentences, pages = {}, {}, {}
        for evidence_id, block in QUOTE_BLOCK.findall(user):
            page, _, rest = block.partition("quote: ")
            shown = QUOTE_TEXT.match("quote: " + rest)
            quotes[evidence_id] = shown.group(1) if shown else rest
            if shown and shown.group(2):
                sentences[evidence_id] = shown.group(2)
            pages[evidence_id] = page.strip()
        _, _, listed = user.partition("raised these concerns")
        return cls(
            claim=claim.group(2) if claim else "",
            questions=QUESTION_LINE.findall(head),
            quotes=quotes,
            system=system,
            asked=claim.group(1) if claim else "",
            sentences=sentences,
            pages=pages,
            concerns=tuple(CONCERN_LINE.findall(listed)),
        )

    @property
    def coverage(self) -> bool:
        """Whether it asks if the evidence answers a required question (not about a claim)."""
        return self.asked.startswith("Required question")

    def answered(self, holds: bool = False) -> list[dict[str, Any]]:
        """An answer to every concern listed: each `holds` or not."""
        return [{"holds": holds, "why": "checked against the quotes"} for _ in self.concerns]

    def sentence(self, containing: str = "") -> tuple[str, str]:
        """(evidence id, the first sentence of a quote containing `containing`), or ("", "")."""
        for evidence_id, text in self.quotes.items():
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
                if containing.lower() in sentence.lower():
                    return evidence_id, sentence
        return "", ""


# {"verdict": ..., "sentence": ..., "reason": ...} (sent as the reply's JSON content), a reply
# {"content": "..."} sent as it is, or an error {"status": 503, ...} as a model Reply's; any of
# them with "delay": seconds, waited before answering.
VerifierScript = Callable[[VerifierRequest], Reply]


def supporting(request: VerifierRequest) -> Reply:
    """A verifier that finds every claim supported by the first sentence of its first quote."""
    _, sentence = request.sentence()
    return {
        "verdict": "supported",
        "sentence": sentence,
        "reason": "the quote states it",
        "concerns": request.answered(),
    }


# A shown passage: from its "[S1.P2 offset=0] " line to the next passage or the window's end.
PASSAGE_LINE = re.compile(
    r"^\[(S\d+\.P\d+) offset=\d+\] (.*?)(?=^\[S\d+\.P\d+ offset=|</untrusted_page>|\Z)",
    re.MULTILINE | re.DOTALL,
)


# The digest of folded steps (`workflows.context.shown`): "Steps 1 to 40 are folded ...".
FOLDED_STEPS = re.compile(re.escape(context.FOLDED.split("{first}")[0]) + r"(\d+) to (\d+) ")


def turn_of(messages: list[Message]) -> int:
    """1 + the steps the conversation shows: one assistant message each, and the folded ones."""
    shown = sum(1 for message in messages if message.get("role") == "assistant")
    for message in messages:
        folded = message.get("role") == "user" and FOLDED_STEPS.match(str(message["content"]))
        if folded:
            shown += int(folded.group(2)) - int(folded.group(1)) + 1
    return 1 + shown


def passage_containing(messages: list[Message], needle: str) -> str:
    """The id of the first passage shown in the conversation whose text contains `needle`."""
    for message in messages:
        for passage_id, text in PASSAGE_LINE.findall(str(message.get("content") or "")):
            if needle.lower() in text.lower():
                return str(passage_id)
    raise AssertionError(f"no passage containing {needle!r} was shown to the model")


class FakeOpenAI:
    def __init__(self, script: Script, verifier: VerifierScript = supporting) -> None:
        self.script = script
        self.verifier = verifier
        self.verifier_requests: list[dict[str, Any]] = []
        self.verified: list[VerifierRequest] = []
        self.turns: Counter[int] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []  # the HTTP path of each request, in order
        self.headers: list[dict[str, str]] = []  # its headers, names lower-cased
        self.hold_turn: int | None = None  # block this turn's first request until released
        self.held = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()
        # A trickling answer (reply {"trickle": seconds}: one byte of the body every `seconds`):
        # how long each one lasted until the client hung up (or it was all sent).
        self.trickled: list[float] = []
        # Requests whose client had hung up before their answer was written (a worker killed
        # while the model thought): the answer never reached anyone.
        self.hung_up: list[dict[str, Any]] = []

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body and "tools" not in body:
            return self.verify(body)
        messages = body["messages"]
        turn = turn_of(messages)
        with self.lock:
            self.turns[turn] += 1
            self.requests.append(body)
            first = self.turns[turn] == 1
        if first and turn == self.hold_turn:
            self.held.set()
            self.release.wait(timeout=60)
        reply = self.script(turn, messages)
        if "delay" in reply:  # a slow model: it thinks this many seconds before it answers
            time.sleep(float(reply["delay"]))
        if "raw" in reply:  # a body as it is: {"raw": "<html>...", "content_type": "text/html"}
            return {"_raw": reply["raw"], "_content_type": reply.get("content_type", "text/html")}
        if "status" in reply:  # an error answer: {"status": 429, "headers": {...}, "error": "..."}
            error = {"error": {"message": reply.get("error", "error"), "type": "fake"}}
            return {
                "_status": reply["status"],
                "_headers": reply.get("headers", {}),
                "_body": error,
            }
        answer = completion(body, reply, turn)
        if "trickle" in reply:
            answer["_trickle"] = reply["trickle"]
        if "reasoning_tokens" in reply:
            details = {"reasoning_tokens": reply["reasoning_tokens"]}
            answer["usage"]["completion_tokens_details"] = details
        if reply.get("no_usage"):
            answer["_no_usage"] = True
        if "usage" in reply:  # whatever the provider claims, sane or not
            answer["usage"] = reply["usage"]
        return answer

    def verify(self, body: dict[str, Any]) -> dict[str, Any]:
        """A verifier's request, answered by the verifier script."""
        request = VerifierRequest.parse(body["messages"])
        with self.lock:
            self.verifier_requests.append(body)
            self.verified.append(request)
        reply = dict(self.verifier(request))
        if "delay" in reply:  # a slow verifier: it thinks this many seconds before it answers
            time.sleep(float(reply.pop("delay")))
        if "status" in reply:
            error = {"error": {"message": reply.get("error", "error"), "type": "fake"}}
            return {
                "_status": reply["status"],
                "_headers": reply.get("headers", {}),
                "_body": error,
            }
        content = reply["content"] if "content" in reply else json.dumps(reply)
        return completion(body, {"content": content}, len(self.verifier_requests))


def reported_tokens(fake: FakeOpenAI) -> int:
    """What the fake server reported as usage over all its answers, the verifier's included."""
    bodies = [*fake.requests, *fake.verifier_requests]
    return sum(prompt_tokens(body) + 20 for body in bodies)


def prompt_tokens(body: dict[str, Any]) -> int:
    """4 characters a token, as a real tokenizer roughly counts, the tool schemas included."""
    tools = body.get("tools")
    return (len(json.dumps(body["messages"])) + (len(json.dumps(tools)) if tools else 0)) // 4


def completion(body: dict[str, Any], reply: Reply, turn: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{turn}_{index}",
            "type": "function",
            # a str is sent as it is (malformed JSON, for instance); anything else as JSON
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        for index, (name, arguments) in enumerate(reply.get("tool_calls", []))
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    prompt = prompt_tokens(body)
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "fake"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": 20,
            "total_tokens": prompt + 20,
        },
    }


def _client_gone(connection: socket.socket) -> bool:
    """True when the client has closed its end: it sends nothing while it awaits an answer, so a
    readable socket with no bytes to read is a closed one."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:  # reset by the peer
        return True


@contextmanager
def serve(fake: FakeOpenAI) -> Iterator[str]:
    """Run the server on 127.0.0.1 in a thread; yields the base URL (…/v1)."""

    connections: set[socket.socket] = set()  # open now: closed when the server stops

    class Handler(QuietHandler):
        # HTTP/1.1, every answer with its Content-Length: the client keeps the connection for its
        # next request, as a real provider lets it (HTTP/1.0 closed each one: a new TCP
        # connection per model call, which a bench of a real model's path should not count).
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with fake.lock:
                connections.add(self.connection)

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:
                pass  # the client hung up between two requests: nothing to answer
            finally:
                with fake.lock:
                    connections.discard(self.connection)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length))
            with fake.lock:
                fake.paths.append(self.path)
                fake.headers.append({name.lower(): value for name, value in self.headers.items()})
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            response = fake.respond(body)
            if _client_gone(self.connection):
                with fake.lock:
                    fake.hung_up.append(body)
            status = int(response.pop("_status", 200))
            headers = response.pop("_headers", {})
            if response.pop("_no_usage", False):
                response.pop("usage", None)
            content_type = response.pop("_content_type", "application/json")
            trickle = response.pop("_trickle", None)
            if "_raw" in response:
                payload = str(response["_raw"]).encode()
            else:
                payload = json.dumps(response.get("_body", response)).encode()
            if trickle is not None:
                self._trickle(payload, float(trickle))
                return
            self.reply(status, payload, {**headers, "content-type": content_type})

        def _trickle(self, payload: bytes, seconds: float) -> None:
            """A 200 whose body arrives one byte every `seconds`: every read is quick, the whole
            answer never is."""
            started = time.monotonic()
            try:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                for byte in payload:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(seconds)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up: what the test measures
            finally:
                with fake.lock:
                    fake.trickled.append(time.monotonic() - started)

    with serving(Handler) as port:
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            fake.release.set()  # a held turn must not keep the server from stopping
            with fake.lock:
                kept = list(connections)
            for connection in kept:  # a kept-alive connection must not outlive the server
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


DOCS = "https://docs.harborq.example"


def harborq_script_at(docs: str) -> Script:
    """A competent model on the sample brief, reading the HarborQ docs at `docs` (scheme, host
    and port): two searches, two pages, two quotes, a report."""
    dead_letter = f"{docs}/guides/dead-letter-queues.html"
    visibility = f"{docs}/concepts/visibility-timeout.html"

    def script(turn: int, messages: list[Message]) -> Reply:
        steps: dict[int, Callable[[], Reply]] = {
            1: lambda: tool("search_web", query="dead-letter queue delivery attempts"),
            2: lambda: tool("read_page", url=dead_letter),
            3: lambda: tool(
                "record_evidence",
                question_id="Q1",
                source_id="S1",
                passage_id=passage_containing(messages, "max_deliveries"),
                claim="After 5 delivery attempts (max_deliveries) the message moves "
                "to the dead-letter queue.",
                stance="supports",
            ),
            4: lambda: tool("search_web", query="default visibility timeout"),
            5: lambda: tool("read_page", url=visibility),
            6: lambda: tool(
                "record_evidence",
                question_id="Q2",
                source_id="S2",
                passage_id=passage_containing(messages, "default visibility timeout is"),
                claim="The default visibility timeout is 30 seconds.",
                stance="supports",
            ),
        }
        if turn in steps:
            return steps[turn]()
        return harborq_finish()

    return script


def harborq_finish() -> Reply:
    """The sample brief's report on its two quotes (E001, E002), Q3 left to the limitations."""
    return tool(
        "finish_research",
        answer="After 5 failed deliveries a message moves to the dead-letter queue; "
        "a received message stays hidden for 30 seconds by default.",
        findings=[
            {
                "text": "Messages move to the DLQ after 5 delivery attempts.",
                "evidence_ids": ["E001"],
            },
            {"text": "The default visibility timeout is 30 seconds.", "evidence_ids": ["E002"]},
        ],
        limitations="Q3 (replaying dead letters) was not investigated.",
    )


harborq_script = harborq_script_at(DOCS)  # the demo corpus, served from disk


def composing(messages: list[Message]) -> bool:
    """Whether a request is the fixed lane's composing call (its system prompt says so)."""
    return str(messages[0].get("content", "")).startswith("You write a research report")


def harborq_compose(messages: list[Message], *, stray: bool = False) -> Reply:
    """The report from the passages shown: Q1 from the max_deliveries passage, Q2 from the
    visibility timeout's; `stray` adds a finding citing a passage of no page read."""
    findings = [
        {
            "text": "Messages move to the DLQ after 5 delivery attempts.",
            "citations": [
                {
                    "passage_id": passage_containing(messages, "max_deliveries"),
                    "question_id": "Q1",
                    "claim": "After 5 delivery attempts the message moves to the dead-letter "
                    "queue.",
                }
            ],
        },
        {
            "text": "The default visibility timeout is 30 seconds.",
            "citations": [
                {
                    "passage_id": passage_containing(messages, "default visibility timeout is"),
                    "question_id": "Q2",
                    "claim": "The default visibility timeout is 30 seconds.",
                }
            ],
        },
    ]
    if stray:
        findings.append(
            {
                "text": "Dead letters can be replayed.",
                "citations": [{"passage_id": "S9.P1", "question_id": "Q3", "claim": "Replay."}],
            }
        )
    return tool(
        "compose_report",
        answer="After 5 failed deliveries a message moves to the dead-letter queue; a received "
        "message stays hidden for 30 seconds by default.",
        findings=findings,
        limitations="Q3 (replaying dead letters) was not investigated.",
    )


def tool(name: str, **arguments: Any) -> Reply:
    """A reply holding one call of `name` with these arguments."""
    return {"tool_calls": [(name, arguments)]}
