"""HTTP content decoding for the fetcher (pure): a body fed chunk by chunk, decoded under a cap.

The fetcher reads the raw body (`response.aiter_raw()`) and feeds each chunk to a `CappedDecoder`.
Nothing here ever decompresses without a limit: zlib is asked for at most `PIECE_BYTES` per call
(the rest waits in `unconsumed_tail`) and brotli gets an `output_buffer_limit`, so a decompression
bomb is refused after at most the cap plus one piece has been produced, however far it would expand.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

import brotli  # type: ignore[import-untyped]

ACCEPT_ENCODING = "gzip, deflate, br"
MAX_ENCODINGS = 3  # stacked encodings ("gzip, br") accepted in one Content-Encoding header
PIECE_BYTES = 64 * 1024  # the most one decoding step asks for at a time (brotli may add a block)

_ALIASES = {"x-gzip": "gzip"}
_IDENTITY = frozenset({"", "identity"})
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_WBITS = -zlib.MAX_WBITS


class DecodeRefused(Exception):
    """The body cannot be decoded within the rules: an encoding we do not accept, more output than
    the cap, or corrupt or truncated compressed data. The message is one plain sentence."""


class CappedDecoder:
    """Decodes one response body fed chunk by chunk; refuses as soon as output would pass the cap.

    Stacked encodings are undone in reverse order, and every layer's output counts against
    `max_bytes`, so an inner layer cannot expand without bound either. After a refusal the
    decoder is spent: every later call raises the same refusal.
    """

    def __init__(self, content_encoding: str | None, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
        names = _encodings(content_encoding)
        self._max_bytes = max_bytes
        self._layers: list[_Layer] = [_layer(name) for name in reversed(names)] or [_Identity()]
        self._produced = [0] * len(self._layers)
        self._refusal: DecodeRefused | None = None

    def feed(self, chunk: bytes) -> bytes:
        """The decoded output for this raw chunk (possibly empty while a decoder buffers)."""
        self._raise_if_refused()
        try:
            return b"".join(self._through(0, chunk))
        except DecodeRefused as refusal:
            self._refusal = refusal
            raise

    def finish(self) -> bytes:
        """End of the body: refuses a stream that stopped before its end, where that shows."""
        self._raise_if_refused()
        try:
            for layer in self._layers:
                layer.finish()
        except DecodeRefused as refusal:
            self._refusal = refusal
            raise
        return b""  # every layer hands on all its output in feed(); nothing is held back

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        """`data` decoded by layers index.. in turn, one bounded piece at a time."""
        layer = self._layers[index]
        for piece in layer.decode(data):
            self._produced[index] += len(piece)
            if self._produced[index] > self._max_bytes:
                raise DecodeRefused(layer.too_large(self._max_bytes))
            if index + 1 == len(self._layers):
                yield piece
            else:
                yield from self._through(index + 1, piece)

    def _raise_if_refused(self) -> None:
        if self._refusal is not None:
            raise DecodeRefused(str(self._refusal))


def _encodings(content_encoding: str | None) -> list[str]:
    """The header's encodings in the order they were applied, identity dropped, or DecodeRefused."""
    tokens = [token.strip().lower() for token in (content_encoding or "").split(",")]
    names = [_ALIASES.get(token, token) for token in tokens if token not in _IDENTITY]
    for name in names:
        if name not in _LAYERS:
            raise DecodeRefused(f"the page uses content encoding {name!r}, which is not accepted")
    if len(names) > MAX_ENCODINGS:
        stacked = f"the page stacks {len(names)} content encodings"
        raise DecodeRefused(f"{stacked}, more than the {MAX_ENCODINGS} accepted")
    return names


# ---------------------------------------------------------------- layers


class _Layer(Protocol):
    def decode(self, data: bytes) -> Iterator[bytes]:
        """All output `data` yields now, in pieces of about PIECE_BYTES at most."""
        ...

    def finish(self) -> None:
        """DecodeRefused when the stream began but did not reach its end."""
        ...

    def too_large(self, max_bytes: int) -> str: ...


class _Identity:
    def decode(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data

    def finish(self) -> None:
        pass

    def too_large(self, max_bytes: int) -> str:
        return f"the page is larger than {max_bytes} bytes"


class _Compressed:
    name = ""

    def too_large(self, max_bytes: int) -> str:
        return f"the page decompresses to more than {max_bytes} bytes"

    def corrupt(self) -> DecodeRefused:
        return DecodeRefused(f"the page's {self.name} data is corrupt")

    def truncated(self) -> DecodeRefused:
        return DecodeRefused(f"the page's {self.name} data ends before the end of its stream")


def _inflate(inflater: zlib._Decompress, data: bytes) -> Iterator[bytes]:
    """Everything `data` inflates to now, PIECE_BYTES at a time; stops at the end of the stream.

    zlib keeps input it could not yet turn into output in `unconsumed_tail`, and a full piece may
    leave output pending inside zlib, so ask again until a piece comes back short with no tail.
    """
    pending = data
    while not inflater.eof:
        piece = inflater.decompress(pending, PIECE_BYTES)
        pending = inflater.unconsumed_tail
        if piece:
            yield piece
        if not pending and len(piece) < PIECE_BYTES:
            return


class _Gzip(_Compressed):
    """gzip, including several members back to back; bytes after a member that do not start
    another member are ignored, as browsers do with servers that pad their responses."""

    name = "gzip"

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(_GZIP_WBITS)
        self._started = False
        self._member_output = 0  # output of the current member, to tell trailing junk from damage
        self._later_member = False
        self._ignoring_rest = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        pending = data
        while pending and not self._ignoring_rest:
            if self._inflater.eof:
                self._inflater = zlib.decompressobj(_GZIP_WBITS)
                self._member_output, self._later_member = 0, True
            self._started = True
            try:
                for piece in _inflate(self._inflater, pending):
                    self._member_output += len(piece)
                    yield piece
            except zlib.error:
                if not self._only_trailing_bytes():
                    raise self.corrupt() from None
                self._ignoring_rest = True
            pending = self._inflater.unused_data if self._inflater.eof else b""

    def finish(self) -> None:
        if self._started and not self._inflater.eof and not self._only_trailing_bytes():
            raise self.truncated()

    def _only_trailing_bytes(self) -> bool:
        """After a complete member, bytes that never produced output are padding, not content."""
        return self._later_member and self._member_output == 0


class _Deflate(_Compressed):
    """deflate as the RFC says (zlib-wrapped) or as many servers send it (raw), told apart by the
    zlib header in the first two bytes, the way browsers do. Bytes after the stream are ignored."""

    name = "deflate"

    def __init__(self) -> None:
        self._head = b""
        self._inflater: zlib._Decompress | None = None

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self._inflater is None:
            self._head += data
            if len(self._head) < 2:
                return
            wbits = _ZLIB_WBITS if _is_zlib_header(self._head) else _RAW_WBITS
            self._inflater = zlib.decompressobj(wbits)
            data, self._head = self._head, b""
        if self._inflater.eof:
            return
        try:
            yield from _inflate(self._inflater, data)
        except zlib.error:
            raise self.corrupt() from None

    def finish(self) -> None:
        if self._head or (self._inflater is not None and not self._inflater.eof):
            raise self.truncated()


def _is_zlib_header(head: bytes) -> bool:
    """RFC 1950: compression method 8, window at most 32 KiB, and a header checksum of 31."""
    method, flags = head[0], head[1]
    return method & 0x0F == 8 and method >> 4 <= 7 and (method << 8 | flags) % 31 == 0


class _Brotli(_Compressed):
    """br. `output_buffer_limit` is best-effort (it may overshoot by one decoder block), and a call
    that stops at the limit leaves output inside the decoder, so drain with empty input until a
    call returns less than the limit and no input is left waiting."""

    name = "br"

    def __init__(self) -> None:
        self._decompressor = brotli.Decompressor()
        self._started = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        self._started = self._started or bool(data)
        pending = data
        while True:
            try:
                piece: bytes = self._decompressor.process(pending, output_buffer_limit=PIECE_BYTES)
            except brotli.error:
                raise self.corrupt() from None
            pending = b""
            if piece:
                yield piece
            if len(piece) < PIECE_BYTES and self._decompressor.can_accept_more_data():
                return

    def finish(self) -> None:
        if self._started and not self._decompressor.is_finished():
            raise self.truncated()


_LAYERS: dict[str, type[_Gzip | _Deflate | _Brotli]] = {
    "gzip": _Gzip,
    "deflate": _Deflate,
    "br": _Brotli,
}


def _layer(name: str) -> _Layer:
    return _LAYERS[name]()
