"""Capped content decoding: what each encoding decodes to, and that a bomb is refused at the cap."""

from __future__ import annotations

import gzip
import random
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import brotli  # type: ignore[import-untyped]
import pytest

from activities.pages.decode import ACCEPT_ENCODING, CappedDecoder, DecodeRefused

MiB = 1024 * 1024
CAP = 1 * MiB
# What refusing a bomb may allocate: the cap, plus one piece, the compressed chunk and zlib's
# window within the spare MiB (measured: about 1.1 to 1.4 MiB). A plain decompress of the bombs
# below allocates 64 MiB or more.
MEMORY_BOUND = CAP + 1 * MiB


def _payload() -> bytes:
    """About 200 KB of text: more than several decoder pieces, and compressible like a page."""
    rng = random.Random(7)
    words = "cache hybrid invalidation write through evict stale entry reader store ttl".split()
    return " ".join(rng.choice(words) for _ in range(30_000)).encode()


PAYLOAD = _payload()


def _deflate(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


def _gzip_stream(pieces: Iterator[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join(compressor.compress(piece) for piece in pieces) + compressor.flush()


def _brotli_stream(pieces: Iterator[bytes]) -> bytes:
    compressor = brotli.Compressor(quality=1)
    out: bytes = b"".join(compressor.process(piece) for piece in pieces) + compressor.finish()
    return out


def _zeros(total: int) -> Iterator[bytes]:
    block = bytes(MiB)
    for _ in range(total // MiB):
        yield block


def _decode(encoding: str | None, body: bytes, chunk_size: int, max_bytes: int = CAP) -> bytes:
    decoder = CappedDecoder(encoding, max_bytes)
    chunks = (body[start : start + chunk_size] for start in range(0, len(body), chunk_size))
    return b"".join(decoder.feed(chunk) for chunk in chunks) + decoder.finish()


ENCODED = {
    "identity": (None, PAYLOAD),
    "gzip": ("gzip", gzip.compress(PAYLOAD)),
    "x-gzip": ("x-gzip", gzip.compress(PAYLOAD)),
    "deflate (zlib-wrapped)": ("deflate", _deflate(PAYLOAD, zlib.MAX_WBITS)),
    "deflate (raw)": ("deflate", _deflate(PAYLOAD, -zlib.MAX_WBITS)),
    "br": ("br", brotli.compress(PAYLOAD)),
    "gzip, br": ("gzip, br", brotli.compress(gzip.compress(PAYLOAD))),
    "br, deflate": ("Br , DEFLATE", _deflate(brotli.compress(PAYLOAD), zlib.MAX_WBITS)),
}


@pytest.mark.parametrize("chunk_size", [1, 7, 64 * 1024])
@pytest.mark.parametrize("name", list(ENCODED))
def test_every_encoding_round_trips_at_any_chunk_size(name: str, chunk_size: int) -> None:
    encoding, body = ENCODED[name]

    assert _decode(encoding, body, chunk_size) == PAYLOAD


def test_accept_encoding_names_only_what_is_decoded() -> None:
    for encoding in ACCEPT_ENCODING.split(","):
        CappedDecoder(encoding.strip(), CAP)  # does not raise


@pytest.mark.parametrize("encoding", ["identity", "", " , identity", None])
def test_identity_passes_bytes_through(encoding: str | None) -> None:
    assert _decode(encoding, b"plain page", 3) == b"plain page"


def test_gzip_members_back_to_back_and_trailing_padding() -> None:
    body = gzip.compress(PAYLOAD[:1000]) + gzip.compress(PAYLOAD[1000:]) + b"\0\0\0\0"

    for chunk_size in (1, 7, 64 * 1024):
        assert _decode("gzip", body, chunk_size) == PAYLOAD


def test_an_empty_body_decodes_to_nothing_whatever_its_encoding() -> None:
    for encoding in ("gzip", "deflate", "br", "gzip, br"):
        decoder = CappedDecoder(encoding, CAP)
        assert decoder.feed(b"") + decoder.finish() == b""


# ---------------------------------------------------------------- the cap


@pytest.mark.parametrize("name", list(ENCODED))
def test_output_of_exactly_the_cap_passes_and_one_byte_more_is_refused(name: str) -> None:
    encoding, body = ENCODED[name]

    assert _decode(encoding, body, 4096, max_bytes=len(PAYLOAD)) == PAYLOAD
    with pytest.raises(DecodeRefused, match=rf" than {len(PAYLOAD) - 1} bytes$"):
        _decode(encoding, body, 4096, max_bytes=len(PAYLOAD) - 1)


def test_an_identity_body_over_the_cap_is_called_large_not_decompressed() -> None:
    with pytest.raises(DecodeRefused, match=r"^the page is larger than 10 bytes$"):
        _decode(None, b"x" * 11, 4, max_bytes=10)


@pytest.fixture(scope="module")
def bombs() -> dict[str, tuple[str, bytes]]:
    """Bodies that expand to 64 MiB (zlib) or 1 GiB (brotli) of zeros: far beyond CAP."""
    gzip_bomb = _gzip_stream(_zeros(64 * MiB))
    deflate_compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw_bomb = b"".join(deflate_compressor.compress(block) for block in _zeros(64 * MiB))
    return {
        "gzip": ("gzip", gzip_bomb),
        "deflate": ("deflate", raw_bomb + deflate_compressor.flush()),
        "br": ("br", _brotli_stream(_zeros(1024 * MiB))),
        "gzip inside br": ("gzip, br", brotli.compress(gzip_bomb)),
    }


def _peak_memory(action: Callable[[], object]) -> int:
    """Peak bytes allocated through Python's allocators while `action` runs."""
    tracemalloc.start()
    try:
        action()
    except DecodeRefused:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def _feed_until_refused(encoding: str, body: bytes, chunk_size: int, returned: list[int]) -> None:
    decoder = CappedDecoder(encoding, CAP)
    for start in range(0, len(body), chunk_size):
        returned.append(len(decoder.feed(body[start : start + chunk_size])))
    decoder.finish()


@pytest.mark.parametrize("chunk_size", [64 * 1024, 10**9])  # the fetcher's chunks, or all at once
@pytest.mark.parametrize("name", ["gzip", "deflate", "br", "gzip inside br"])
def test_a_bomb_is_refused_within_the_cap_and_bounded_memory(
    bombs: dict[str, tuple[str, bytes]], name: str, chunk_size: int
) -> None:
    encoding, body = bombs[name]
    returned: list[int] = []

    with pytest.raises(DecodeRefused, match=rf"^the page decompresses to more than {CAP} bytes$"):
        _feed_until_refused(encoding, body, chunk_size, returned)
    peak = _peak_memory(lambda: _feed_until_refused(encoding, body, chunk_size, []))

    assert sum(returned) <= CAP
    assert peak < MEMORY_BOUND, f"peak {peak} bytes"


def test_the_memory_measure_would_catch_an_unbounded_decompress(
    bombs: dict[str, tuple[str, bytes]],
) -> None:
    _, body = bombs["gzip"]

    assert _peak_memory(lambda: zlib.decompress(body, 16 + zlib.MAX_WBITS)) > 16 * MEMORY_BOUND


def test_a_refused_decoder_stays_refused(bombs: dict[str, tuple[str, bytes]]) -> None:
    decoder = CappedDecoder("gzip", CAP)
    with pytest.raises(DecodeRefused):
        decoder.feed(bombs["gzip"][1])

    with pytest.raises(DecodeRefused, match="decompresses to more than"):
        decoder.feed(b"")
    with pytest.raises(DecodeRefused, match="decompresses to more than"):
        decoder.finish()


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("encoding", ["zstd", "compress", "gzip, zstd", "GZIP, Snappy"])
def test_an_encoding_we_do_not_decode_is_refused_by_name(encoding: str) -> None:
    name = encoding.split(",")[-1].strip().lower()

    with pytest.raises(DecodeRefused) as refusal:
        CappedDecoder(encoding, CAP)

    assert str(refusal.value) == f"the page uses content encoding '{name}', which is not accepted"


def test_more_stacked_encodings_than_accepted_are_refused() -> None:
    with pytest.raises(DecodeRefused, match="stacks 4 content encodings"):
        CappedDecoder("gzip, gzip, gzip, gzip", CAP)


def _damaged_checksum(body: bytes, position: int) -> bytes:
    return body[:position] + bytes([body[position] ^ 0xFF]) + body[position + 1 :]


@pytest.mark.parametrize(
    ("encoding", "body", "name"),
    [
        ("gzip", b"this is not gzip data at all", "gzip"),
        ("gzip", _damaged_checksum(gzip.compress(PAYLOAD), -6), "gzip"),  # CRC-32 mismatch
        ("deflate", _damaged_checksum(_deflate(PAYLOAD, zlib.MAX_WBITS), -2), "deflate"),
        ("deflate", b"\xff\xff\xff\xff", "deflate"),
        ("br", b"this is not brotli data at all", "br"),
        ("br", brotli.compress(PAYLOAD) + b"trailing", "br"),
        ("gzip, br", brotli.compress(b"not gzip inside"), "gzip"),
    ],
)
def test_corrupt_data_is_refused(encoding: str, body: bytes, name: str) -> None:
    with pytest.raises(DecodeRefused, match=rf"^the page's {name} data is corrupt$"):
        _decode(encoding, body, 1024)


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(PAYLOAD)[:-10]),
        ("deflate", _deflate(PAYLOAD, zlib.MAX_WBITS)[:-10]),
        ("deflate", _deflate(PAYLOAD, -zlib.MAX_WBITS)[:-10]),
        ("deflate", b"\x78"),
        ("br", brotli.compress(PAYLOAD)[:-10]),
    ],
)
def test_a_truncated_stream_is_refused_at_finish(encoding: str, body: bytes) -> None:
    decoder = CappedDecoder(encoding, CAP)
    decoder.feed(body)  # every byte that arrived decodes; only the end is missing

    with pytest.raises(DecodeRefused, match=r"ends before the end of its stream$"):
        decoder.finish()
