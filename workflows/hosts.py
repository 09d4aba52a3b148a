"""Host allowlist rules (pure): normalising host names and matching URLs against `allowed_hosts`."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import idna

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
MAX_HOST_CHARS = 253  # a DNS name's limit, dots included
MAX_URL_CHARS = 2_048  # a URL a model or an operator sends; longer ones are refused


def normalise_host(host: str, *, allow_wildcard: bool = False) -> str:
    """Lower-case, IDNA-encode and strip one trailing dot; raise ValueError with one sentence."""
    raw = host.strip()
    if not raw:
        raise ValueError("an allowed host is empty")
    wildcard = allow_wildcard and raw.startswith("*.")
    name = raw[2:] if wildcard else raw
    if any(char in name for char in "/:@\\ ?#*") or any(ord(c) < 32 for c in name):
        raise ValueError(f"allowed host {host!r} is not a bare host name (no scheme, port or path)")
    name = name.rstrip(".") if name.endswith(".") and not name.endswith("..") else name
    try:
        # IDNA 2008 exactly as httpx applies it to URLs, so a rule and a URL meet on one spelling
        # (Python's own codec maps `faß` to `fass`, another domain).
        name = name.lower() if name.isascii() else idna.encode(name.lower()).decode("ascii")
    except (UnicodeError, idna.IDNAError) as error:
        raise ValueError(f"allowed host {host!r} is not a valid host name") from error
    labels = name.split(".")
    if len(name) > MAX_HOST_CHARS or len(labels) < 2 or not all(map(_LABEL.match, labels)):
        raise ValueError(f"allowed host {host!r} is not a valid host name")
    return f"*.{name}" if wildcard else name


def allowed_host(host: str) -> str:
    """A brief's (or `--allow`'s) allowed host, normalised (`*.` wildcards too); ValueError with
    one sentence for a host the fetcher could never read: an IP address (it reads host names
    only, so a run allowed nothing else would spend its budget on refusals)."""
    name = normalise_host(host, allow_wildcard=True)
    if looks_like_address(name.removeprefix("*.")):
        raise ValueError(
            f"allowed host {host.strip()!r} is an IP address, which the fetcher never reads: name "
            "the host (a local server by name: RESEARCH_LOCAL_HOSTS=name=IP on the worker)"
        )
    return name


def url_host(url: str) -> str | None:
    """The normalised host of an http(s) URL, or None when the URL has none."""
    try:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        return normalise_host(parts.hostname)
    except ValueError:
        return None


def host_matches(host: str, allowed_hosts: list[str]) -> bool:
    for rule in allowed_hosts:
        if rule.startswith("*."):
            if host.endswith("." + rule[2:]):
                return True
        elif host == rule:
            return True
    return False


def host_allowed(url: str, allowed_hosts: list[str]) -> bool:
    host = url_host(url)
    return host is not None and host_matches(host, allowed_hosts)


def looks_like_address(host: str) -> bool:
    """IP literals, and names a resolver would read as IPv4 (`2130706433`, `0x7f.1`, `127.1`)."""
    bare = host.strip("[]").rstrip(".")
    try:
        ipaddress.ip_address(bare.partition("%")[0])
        return True
    except ValueError:
        pass
    last = bare.rsplit(".", 1)[-1].lower()
    return ":" in bare or last.isdigit() or (last.startswith("0x") and len(last) > 2)


def seed_problem(url: str, allowed_hosts: list[str]) -> str | None:
    """Why an operator's seed URL cannot be read, as a clause after the URL (`is not an http(s)
    URL`), or None when it may be: the checks the fetcher makes that need no network."""
    if len(url) > MAX_URL_CHARS:
        return f"is longer than {MAX_URL_CHARS:,} characters"
    try:
        parts = urlsplit(url.strip())
        hostname, _ = parts.hostname, parts.port
    except ValueError:
        return "is not a URL (check its host and port)"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "is not an http(s) URL"
    if has_credentials(url):
        return "carries a user name or password"
    if not hostname:
        return "has no host"
    if looks_like_address(hostname):
        return "names an IP address, not a host name"
    host = url_host(url)
    if host is None:
        return "has no valid host name"
    if not host_matches(host, allowed_hosts):
        return f"is on {host}, not an allowed host ({', '.join(allowed_hosts)})"
    return None


def _authority(url: str) -> tuple[str, str, str]:
    """`url` as (what precedes the authority, the authority, the rest), read as text so that a
    URL no parser accepts is split too; without `://` the authority is the text before the first
    `/`, `?`, `#` or backslash."""
    scheme, separator, after = url.partition("://")
    head, after = (scheme + separator, after) if separator else ("", url)
    end = re.search(r"[/?#\\]", after)
    cut = end.start() if end else len(after)
    return head, after[:cut], after[cut:]


def has_credentials(url: str) -> bool:
    """True when the URL carries a user name or password (`https://user:secret@host/`)."""
    return "@" in _authority(url.strip())[1]


def without_credentials(url: str) -> str:
    """The URL as it may be shown: any user name or password removed, parseable or not."""
    head, authority, rest = _authority(url)
    return head + authority.rpartition("@")[2] + rest


def local_host_entry(entry: str) -> tuple[str, str | None]:
    """A RESEARCH_LOCAL_HOSTS entry, `host` or `host=IP address`: the normalised host and the
    address it is pinned to (None); ValueError with one sentence when it is malformed."""
    name, _, address = entry.strip().partition("=")
    try:
        host = normalise_host(name)
        pinned = str(ipaddress.ip_address(address.strip().strip("[]"))) if address else None
    except ValueError:
        raise ValueError(f"local host entry {entry!r} is not `host` or `host=IP address`") from None
    return host, pinned
