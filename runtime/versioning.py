"""Worker Versioning: which worker deployment version this worker is, and making it current.

Workflow changes ship as new worker deployment versions. A run is pinned to the version it started
on (`VersioningBehavior.PINNED` on the workflow), so a run keeps its build's decisions to the end
while new runs go to the deployment's current version. The build id defaults to a hash of the
workflow code (`runtime.settings.code_build_id`, or RESEARCH_BUILD_ID): a change there is a new
version, a change to activities alone is not (their results are in history).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentResponse,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client
from temporalio.common import WorkerDeploymentVersion
from temporalio.service import RPCError, RPCStatusCode

from runtime.settings import Settings
from runtime.startup import GaveUp, wait_for

T = TypeVar("T")
REGISTER_SECONDS = 15.0  # a new version appears at the server once its worker has polled
POLL_SECONDS = 0.2
# Answers that say "not now", not "no": the server rate-limits the deployment's workflow (workers
# started together all describe and route it: "too many requests issued to Worker Deployment"), or
# is restarting. Waited out like Temporal being down at start-up (RESEARCH_STARTUP_WAIT_SECONDS).
PASSING = frozenset(
    {RPCStatusCode.RESOURCE_EXHAUSTED, RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED}
)


class VersioningError(RuntimeError):
    """The worker's version could not be made current; the message says why."""


def deployment_version(settings: Settings) -> WorkerDeploymentVersion:
    return WorkerDeploymentVersion(settings.deployment_name, settings.build_id)


async def make_current(client: Client, settings: Settings, *, take_over: bool) -> bool:
    """Route new runs to this worker's version. `take_over`: always (the embedded stack, whose one
    worker is the only build); otherwise only when the deployment has no current version yet (a
    first deployment): a later build waits for an operator to promote it. True when it routed, or
    when another worker of the same build did first (workers started together)."""
    version = deployment_version(settings)
    described = await _registered(client, settings)
    current = described.worker_deployment_info.routing_config.current_deployment_version
    if current.build_id == version.build_id:
        return True
    if current.build_id and not take_over:
        return False
    request = SetWorkerDeploymentCurrentVersionRequest(
        namespace=client.namespace,
        deployment_name=version.deployment_name,
        build_id=version.build_id,
        conflict_token=described.conflict_token,
        identity=client.identity,
        ignore_missing_task_queues=take_over,
    )
    what = f"making {version.to_canonical_string()} current"
    try:
        await _waiting(
            what,
            settings,
            lambda: client.workflow_service.set_worker_deployment_current_version(request),
        )
    except RPCError as error:
        if error.status in (RPCStatusCode.ABORTED, RPCStatusCode.FAILED_PRECONDITION):
            # another worker changed the routing first: its word stands (it may be this build's)
            routed = await _registered(client, settings)
            current = routed.worker_deployment_info.routing_config.current_deployment_version
            return current.build_id == version.build_id
        raise VersioningError(
            f"could not make {version.to_canonical_string()} current: {error.message}"
        ) from error
    return True


async def _registered(client: Client, settings: Settings) -> DescribeWorkerDeploymentResponse:
    """The deployment as the server describes it, once it lists this worker's build."""
    request = DescribeWorkerDeploymentRequest(
        namespace=client.namespace, deployment_name=settings.deployment_name
    )
    what = f"worker deployment {settings.deployment_name}"
    loop = asyncio.get_running_loop()
    give_up = loop.time() + REGISTER_SECONDS
    while True:
        try:
            described = await _waiting(
                what, settings, lambda: client.workflow_service.describe_worker_deployment(request)
            )
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise VersioningError(f"could not describe {what}: {error.message}") from error
        else:
            builds = {
                summary.deployment_version.build_id
                for summary in described.worker_deployment_info.version_summaries
            }
            if settings.build_id in builds:
                return described
        if loop.time() > give_up:
            raise VersioningError(
                f"worker deployment version {settings.deployment_name}.{settings.build_id} did "
                f"not appear at the server within {REGISTER_SECONDS:.0f} s (does the server "
                "support Worker Versioning?)"
            )
        await asyncio.sleep(POLL_SECONDS)


async def _waiting(what: str, settings: Settings, attempt: Callable[[], Awaitable[T]]) -> T:
    """`attempt()`, its passing failures (PASSING) waited out with the start-up's back-off."""
    try:
        return await wait_for(
            what, attempt, seconds=settings.startup_wait_seconds, reason_to_wait=_passing
        )
    except GaveUp as error:
        waited = f"waited {settings.startup_wait_seconds:g} s"
        raise VersioningError(f"{error.what}: {error.reason} ({waited})") from error


def _passing(error: Exception) -> str | None:
    if isinstance(error, RPCError) and error.status in PASSING:
        return error.message[:300] or error.status.name
    return None
