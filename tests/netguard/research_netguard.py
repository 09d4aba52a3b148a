"""The test network guard: no Python socket leaves loopback.

The pytest process installs it before any test module is imported (tests/conftest.py), and every
Python child a test starts (worker processes, `research demo`) gets it too: their environment puts
this folder first on PYTHONPATH, and `sitecustomize` here installs it at interpreter start.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def is_local(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not is_local(host if isinstance(host, str) else host.decode()):
        raise socket.gaierror(socket.EAI_NONAME, f"test network guard: {host!r} is not loopback")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family == socket.AF_UNIX:
        return
    if not (isinstance(address, tuple) and is_local(address[0])):
        raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _real_connect_ex(self, address)


def install() -> None:
    socket.getaddrinfo = _guarded_getaddrinfo
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
