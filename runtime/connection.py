"""Where the Temporal server is and how to sign in to it: the variables and their defaults,
read with nothing else (`Settings` takes its three fields from here, and `research status` of a
run that has ended reads only these before it asks the Temporal CLI; starter.described)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

ADDRESS_VARIABLE = "TEMPORAL_ADDRESS"
NAMESPACE_VARIABLE = "TEMPORAL_NAMESPACE"
API_KEY_VARIABLE = "TEMPORAL_API_KEY"  # a secret (runtime.settings.SECRET_VARIABLES)
DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"


class TemporalConnection(NamedTuple):
    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    api_key: str | None = None  # given: sign in with it, over TLS

    def __repr__(self) -> str:  # never the key
        return f"TemporalConnection(address={self.address!r}, namespace={self.namespace!r})"


def temporal_connection(env: Mapping[str, str]) -> TemporalConnection:
    """The connection the environment names; an empty variable is its default."""
    return TemporalConnection(
        address=env.get(ADDRESS_VARIABLE) or DEFAULT_ADDRESS,
        namespace=env.get(NAMESPACE_VARIABLE) or DEFAULT_NAMESPACE,
        api_key=env.get(API_KEY_VARIABLE) or None,
    )
