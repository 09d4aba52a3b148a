"""What each `research` command's `--help` page says: a description and examples to copy."""

from __future__ import annotations

RUN = "research-harbor-queue-deal-26011c"

# name -> (description, examples)
USAGE: dict[str, tuple[str, list[str]]] = {
    "demo": (
        "Run the sample brief (or --brief) on an embedded Temporal dev server and PostgreSQL "
        "under .research/, with the offline policy: no API key, no network. Prints each step, "
        "the summary and the report; exits 0 when the run completed. --pace waits before each "
        "step and prints the commands that watch and steer the run from another terminal.",
        [
            "research demo",
            "research demo --brief examples/briefs/harborq-ordering.json",
            "research demo --pace 5",
        ],
    ),
    "dev": (
        "Start the embedded stack (Temporal dev server, PostgreSQL, the demo corpus) and a "
        "worker, print their addresses, and run until Ctrl-C.",
        ["research dev"],
    ),
    "init-db": (
        "Apply the ledger's SQL migrations to DATABASE_URL (or the embedded PostgreSQL); each "
        "migration is applied once. Run it as the ledger's owner: it then creates the worker's "
        "and reader's roles where it may (or prints the SQL for an administrator) and grants "
        "them their privileges.",
        [
            "research init-db",
            "DATABASE_URL=postgresql://user@db.example:5432/research research init-db",
        ],
    ),
    "worker": (
        "Run N worker processes (python worker.py) on the task queue; SIGTERM or Ctrl-C stops "
        "them all.",
        ["research worker", "research worker --processes 2"],
    ),
    "corpus": (
        "The local document corpus the `corpus` search provider searches and read_page reads.",
        ["research corpus index examples/corpus"],
    ),
    "index": (
        "Index a folder of documents (.html, .md, .txt, .pdf): DIR/<host>/<path> is served as "
        "https://<host>/<path>, or --host names the one host DIR holds.",
        [
            "research corpus index examples/corpus",
            "research corpus index /usr/share/doc/python3.11/html --host docs.python.org",
        ],
    ),
    "start": (
        "Validate a brief (JSON) and start a run on the task queue; --wait follows it step by "
        "step and prints the report (exit 0 only when the run completed). --lane sets the "
        "brief's lane: auto (the fixed lane, escalating to the agent), fixed or agent.",
        [
            "research start examples/briefs/harborq-failures.json --wait",
            "research start brief.json --id research-cache-1",
            "research start brief.json --lane agent",
        ],
    ),
    "runs": (
        "List recent runs from the ledger, newest first: status, stop reason, steps, evidence, "
        "reported tokens and age; first the runs Temporal holds on the task queue that no worker "
        "has taken yet (status pending: not in the ledger yet). Without a Temporal server it "
        "lists the ledger's.",
        [
            "research runs",
            "research runs --status incomplete --limit 5",
            "research runs --status pending",
            "research runs --json",
        ],
    ),
    "status": (
        "A run's summary from Temporal (status, stop reason, counters), while it runs and after.",
        [f"research status {RUN}", f"research status {RUN} --json"],
    ),
    "report": (
        "A run's report from the ledger: the Markdown as saved, with --json the report with "
        "every cited quote and the URL it was read from, or with --html one self-contained page "
        "to review it in a browser (each quote highlighted in its passage, verdicts, bounds, "
        "timeline; it loads nothing). Needs no Temporal server.",
        [
            f"research report {RUN}",
            f"research report {RUN} --json | jq -r '.evidence[].url'",
            f"research report {RUN} --html -o {RUN}.html",
        ],
    ),
    "export": (
        "Write one run to a new folder for a reader without database access: the report "
        "(Markdown, JSON and a review page, report.html), evidence with quotes, sources with "
        "their snapshots, the ledger's other rows as JSON, and the workflow history when "
        "Temporal still has it.",
        [f"research export {RUN} exports/{RUN}", f"research export {RUN} out --no-history"],
    ),
    "audit": (
        "Check a run's consistency over its ledger rows, its report and its workflow history: "
        "quotes inside their snapshots, hashes, counters against rows, bounds, where every URL "
        "read came from, the ledger against the history. Prints a table; exits 1 when any check "
        "fails, 2 when there is nothing to audit (no such run or export, a run still running).",
        [
            f"research audit {RUN}",
            f"research audit exports/{RUN}",
            f"research audit {RUN} --history history.json",
        ],
    ),
    "replay": (
        "Replay a run's workflow history against the current workflow code, as a worker would "
        "after a deploy: from Temporal by run id, or from a JSON file (`temporal workflow show "
        "--output json`, or an export's history.json). Exit 0: replays cleanly; 1: diverges "
        "(the first difference is printed); 2: could not replay (no such run or file, not a "
        "history, Temporal unreachable).",
        [
            f"research replay {RUN}",
            "research replay tests/histories/demo-offline.json",
            f"temporal workflow show --workflow-id {RUN} --output json > h.json && "
            "research replay h.json",
        ],
    ),
    "rerun": (
        "Run an ended run again without asking a model: the new run's decide hands back the "
        "decisions recorded for ID turn by turn (on a worker configured for any provider), while "
        "search, reading, evidence, the gate and the report run as the current code and corpus "
        "make them. Then prints both runs side by side (status, stop reason, counters, steps, "
        "evidence, report) and the differences. Exit 0: identical; 1: they differ; 2: nothing "
        "to rerun (no such run, still running, no recorded decisions).",
        [f"research rerun {RUN}", f"research rerun {RUN} --json | jq '.differences'"],
    ),
    "signal": (
        "Steer a running run: guidance for the model, more seed URLs it may read, escalate from "
        "the fixed lane to the agent, or finish now with what is recorded.",
        [
            f'research signal {RUN} escalate --reason "the versions disagree"',
            f'research signal {RUN} guidance "prefer the official docs"',
            f"research signal {RUN} seed https://docs.harborq.example/reference/configuration.html",
            f'research signal {RUN} finish --reason "enough for the review"',
        ],
    ),
    "extend": (
        "Raise a running run's limits to new absolute values (never lower, never above the "
        "configured ceilings).",
        [f"research extend {RUN} --steps 30 --deadline 600"],
    ),
    "cancel": (
        "Cancel a running run: it saves a partial report composed from its recorded evidence "
        "and ends cancelled.",
        [f"research cancel {RUN}"],
    ),
    "search": (
        "The ranked hits the agent's search_web would get for QUERY on the allowed hosts, from "
        "the configured search provider.",
        ["research search dead-letter queue --allow docs.harborq.example"],
    ),
    "eval": (
        "Run labelled golden briefs through each arm (policies, models, lanes) and table "
        "completion, recall, escalations and model calls; writes Markdown and JSON results.",
        [
            "research eval examples/golden/demo.json",
            "research eval examples/golden/python311-docs.json --model gpt-4o-mini",
            "research eval examples/golden/demo.json --arms fixed,agent,auto --model gpt-4o-mini",
        ],
    ),
    "check-url": (
        "Would the fetcher read URL for a brief with these allowed hosts? Runs the fetcher's own "
        "checks (scheme, host, port, DNS answers); exit 0 allowed, 2 refused.",
        ["research check-url https://docs.python.org/3/ --allow docs.python.org"],
    ),
}


def epilog(name: str) -> str:
    return "examples:\n" + "\n".join(f"  {example}" for example in USAGE[name][1])
