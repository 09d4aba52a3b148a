"""The local corpus as an httpx transport: `https://<host>/<path>` from `<dir>/<host>/<path>`.

The fetcher mounts it for the corpus hosts, so their pages are read from disk and never from the
network; `activities.search.index_corpus` indexes the same files under the same URLs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

import httpx

from workflows.hosts import normalise_host

REDIRECTS_FILE = "_redirects.json"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".pdf": "application/pdf",
}
_TEXT = {"Content-Type": "text/plain; charset=utf-8"}


class CorpusTransport(httpx.AsyncBaseTransport):
    """Serves https://<host>/<path> from <corpus_dir>/<host>/<path> (GET/HEAD only), or for the
    hosts in `folders` from <folder>/<path> (where `research corpus index` found them).

    `/` and directories serve their `index.html` when present. A `_redirects.json` in a host folder
    maps paths to other URLs (`{"/old": "https://other.example/new"}`), answered with a 301.
    """

    def __init__(self, corpus_dir: Path, folders: Mapping[str, Path] | None = None) -> None:
        root = corpus_dir.resolve()
        found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        self._folders = {name: root / name for name in found if _is_host_name(name)}
        self._folders.update({host: Path(folder) for host, folder in (folders or {}).items()})

    def hosts(self) -> list[str]:
        """The host names this transport serves."""
        return sorted(self._folders)

    def offline_hosts(self) -> list[str]:
        """The hosts whose every read stays on disk: no `_redirects.json` that may answer a 301
        sending the fetcher to another host (the network, perhaps)."""
        return [
            host
            for host, folder in sorted(self._folders.items())
            if not (folder / REDIRECTS_FILE).is_file()
        ]

    def folder(self, host: str) -> Path | None:
        return self._folders.get(host)

    def lacks(self, url: str) -> bool:
        """True when `url` is on a host this transport serves and its folder holds no page there
        (nor a redirect for it): a read of it would be answered 404 (`research start` refuses
        such a seed URL before any run spends a step on it)."""
        parsed = httpx.URL(url)
        host = parsed.host
        if host not in self._folders:
            return False
        return self._lookup(parsed)[0] == 404

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method not in ("GET", "HEAD"):
            return httpx.Response(405, headers={"Allow": "GET, HEAD"}, request=request)
        status, headers, body = await asyncio.to_thread(self._lookup, request.url)
        content = b"" if request.method == "HEAD" else body
        # A stream, not `content=`: the fetcher reads raw bytes, as from the network.
        stream = httpx.ByteStream(content)
        return httpx.Response(status, headers=headers, stream=stream, request=request)

    def _lookup(self, url: httpx.URL) -> tuple[int, dict[str, str], bytes]:
        host = url.raw_host.decode("ascii")
        host_dir = self._folders.get(host)
        parts = PurePosixPath(url.path).parts[1:]
        if any(part in ("..", ".") or "\\" in part or "\x00" in part for part in parts):
            return 400, _TEXT, b"bad path"
        if host_dir is None or not host_dir.is_dir():
            return 404, _TEXT, b"not found"
        try:
            location = _redirect_for(host_dir, url.path)
        except ValueError:
            return 500, _TEXT, b"malformed redirects file"
        if location is not None:
            return 301, {"Location": location}, b""
        path = _resolve(host_dir, parts)
        if path is None:
            return 404, _TEXT, b"not found"
        content_type = CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream")
        return 200, {"Content-Type": content_type}, path.read_bytes()


def _resolve(host_dir: Path, parts: tuple[str, ...]) -> Path | None:
    """The file a path names inside one host folder; None when missing or outside it."""
    if parts and parts[-1] == REDIRECTS_FILE:
        return None
    path = host_dir.joinpath(*parts).resolve()
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_relative_to(host_dir.resolve()) and path.is_file() else None


def _redirect_for(host_dir: Path, path: str) -> str | None:
    """The Location for `path` from the host's _redirects.json; ValueError when it is malformed."""
    redirects_file = host_dir / REDIRECTS_FILE
    if not redirects_file.is_file():
        return None
    redirects = json.loads(redirects_file.read_text(encoding="utf-8"))
    if not isinstance(redirects, dict):
        raise ValueError(f"{redirects_file} must hold one JSON object")
    target = redirects.get(path)
    return target if isinstance(target, str) else None


def _is_host_name(name: str) -> bool:
    try:
        return normalise_host(name) == name
    except ValueError:
        return False
