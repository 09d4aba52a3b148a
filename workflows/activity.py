"""What an activity is to the workflow (pure): its typed spec, `Activity`, and the error types an
activity raises that the loop reads. Each activity's own input and result models live beside
what calls it: a tool's in the tool's module (`workflows.tools`), the verifier's in
`workflows.verification`, the loop's own (start_run, decide, record_step, save_report) in
`workflows.contracts`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel

# ApplicationError type raised by `decide` when the provider refuses (bad key, bad request):
# the run ends `failed` with stop reason `provider_error` instead of retrying.
PROVIDER_ERROR = "ProviderError"
# ApplicationError type of a provider failure a retry may cure (408/409/429/5xx, network trouble):
# retried by the activity's retry policy after the provider's Retry-After when it gave one.
PROVIDER_RETRYABLE = "ProviderRetryable"

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


# Where an activity runs: as a local activity (in the worker, within the workflow task's life:
# ledger work), never (it may wait on the network: a regular activity, which survives a worker),
# or as a local activity when what it needs is in the worker (`StartRunResult` says: the corpus
# search, a page of a stored source or of a host served from disk, a policy model), else a
# regular one.
Locality = Literal[
    "always", "never", "when_search_is_local", "when_page_is_local", "when_model_is_local"
]


@dataclass(frozen=True)
class Activity(Generic[In, Out]):
    """An activity as the workflow calls it: its registered name, its input and its result, so
    the type checker pairs each call's request and result with the activity, and how it runs
    (`workflows.calling.options` turns these into one call's options)."""

    name: str
    input: type[In]
    result: type[Out]
    local: Locality = "never"
    # A regular activity that waits (model, search, page) heartbeats: a lost worker shows in
    # seconds instead of at the end of its timeout.
    heartbeat: bool = False
    timeout: timedelta = timedelta(seconds=60)  # one attempt's
    # True: its timeouts never reach past the run's deadline (False: start_run and the save of
    # the report, which must run however late).
    capped: bool = True
    grace: timedelta = timedelta(0)  # how far past the deadline a capped timeout may end
    # A model call: its attempt is the worker's model timeout plus the ledger work around it,
    # when start_run recorded one (`timeout`: a worker that recorded none).
    model_call: bool = False
