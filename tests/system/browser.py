"""Headless Chromium driven over the DevTools protocol (aiohttp's websocket client): open a local
file, record every request the page makes and every console or log message, read the DOM with
an expression, take a screenshot.

The distribution's `chromium` package (`make browser` installs it where apt-get runs as root);
`chromium_path` is None where there is none, and the tests that need it skip saying so.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
START_SECONDS = 30


def chromium_path() -> str | None:
    return next((found for name in NAMES if (found := shutil.which(name))), None)


@dataclass
class Visit:
    """What a page did while it loaded: the requests it made, the messages it logged."""

    requests: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


class Page:
    """One tab, spoken to over its DevTools websocket."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._socket = socket
        self._next_id = 0
        self.visit = Visit()

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        ask = self._next_id
        await self._socket.send_json({"id": ask, "method": method, "params": params})
        while True:
            message = await self._receive()
            if message.get("id") == ask:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    async def open(self, url: str) -> Visit:
        """Navigate to `url` and wait for its load event; the requests and messages so far."""
        for domain in ("Network", "Runtime", "Log", "Page"):
            await self.call(f"{domain}.enable")
        await self.call("Page.navigate", url=url)
        while (await self._receive()).get("method") != "Page.loadEventFired":
            pass
        await self.evaluate("0")  # events sent before the load event's are read by now
        return self.visit

    async def evaluate(self, expression: str) -> Any:
        done = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in done:
            raise RuntimeError(f"{expression}: {done['exceptionDetails']}")
        return done["result"].get("value")

    async def screenshot(self, path: Path, width: int, height: int) -> None:
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width, height=height, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        shot = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))

    async def _receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self._socket.receive_str())
        self._note(message.get("method", ""), message.get("params", {}))
        return message

    def _note(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            self.visit.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            args = " ".join(
                str(arg.get("value", arg.get("description", ""))) for arg in params["args"]
            )
            self.visit.messages.append(f"console.{params['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            self.visit.messages.append(f"exception: {params['exceptionDetails']}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.visit.messages.append(f"{entry['level']} ({entry['source']}): {entry['text']}")


@asynccontextmanager
async def chromium(executable: str) -> AsyncIterator[Page]:
    """Headless Chromium with a profile of its own and no background traffic; its first tab."""
    # Chromium's helper processes may still write to the profile for a moment after the browser
    # exits (seen once: "Directory not empty: 'Default'"): a leftover folder is no test failure.
    with tempfile.TemporaryDirectory(prefix="chromium-", ignore_cleanup_errors=True) as profile:
        process = await asyncio.create_subprocess_exec(
            *[
                executable, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                "--remote-debugging-port=0", "--remote-allow-origins=*", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps", "--disable-extensions",
                "--metrics-recording-only", "--no-default-browser-check", "about:blank",
            ],
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            port = await _devtools_port(Path(profile), process)
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{port}/json/list") as listing:
                    targets = await listing.json()
                tab = next(target for target in targets if target["type"] == "page")
                async with session.ws_connect(tab["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                    yield Page(ws)
        finally:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _devtools_port(profile: Path, process: asyncio.subprocess.Process) -> int:
    """The port Chromium chose (`--remote-debugging-port=0` writes it to DevToolsActivePort)."""
    marker = profile / "DevToolsActivePort"
    for _ in range(START_SECONDS * 10):
        if process.returncode is not None:
            raise RuntimeError(f"chromium exited with {process.returncode} before it listened")
        if marker.is_file() and (lines := marker.read_text().split()):
            return int(lines[0])
        await asyncio.sleep(0.1)
    raise RuntimeError(f"chromium did not listen within {START_SECONDS} s")
