"""Hostile bodies: compression bombs for the client's size limits.

GET|POST /hostile/bomb?coding=gzip|deflate|br&mib=N&type=T
    N MiB of zero bytes (1..4096, default 1024) sent with ``Content-Encoding: coding``, a valid
    stream of that coding (about 1 KiB on the wire per MiB for gzip and deflate, a few hundred
    bytes in all for br), no Content-Length, Connection: close; Content-Type T
    (default application/octet-stream); with corrupt=1 (gzip, deflate) the first MiB is valid,
    then 16 bytes that are no deflate block end the body. Counts in the namespace's stats under "hostile":
    "opened", "finished" (every wire byte written), "disconnected" (the client went away first),
    "wireBytes" (coded bytes handed to the socket).

GET|POST /hostile/gzip?shape=members|padded|garbage
    A 200 with ``Content-Encoding: gzip`` and a Content-Length: "members" is three gzip members
    concatenated (RFC 1952 §2.2) of "first member\n", "second member\n" and "third member\n";
    "padded" the first member then 8 zero bytes; "garbage" the first member then "garbage!".
    Counts each request under "hostile" as "gzips".

GET /hostile/trailers?mib=N
    Written raw: a chunked 200 with the body "ok", then N MiB (1..4096, default 4096) of trailer
    fields ``X-Trailer-i``, written as fast as the client reads them, then the blank line and a
    close. Counts each request under "hostile" as "trailers"; "wireBytes" is the trailer bytes
    handed to the socket.

GET /hostile/interim?status=S
    Written raw: an interim response (S: 100..199, default 103 Early Hints, with a ``Link`` field),
    then a 200 with ``X-Final: yes``, a Content-Length and the body "final body". Counts each
    request under "hostile" as "interims".

GET /hostile/length?shape=fields|list|same|hex|spaced|negative
    Written raw: a 200 with a 100,000-byte body and a Content-Length that does not frame it, then a
    close. "fields": two fields, 100000 then 50000; "list": one field "100000, 50000"; "same": two
    fields of 100000 (allowed, RFC 9110 §8.6); "hex": "0x10"; "spaced": "100000 50000"; "negative":
    "-5" (refused by libcurl itself). Counts each request under "hostile" as
    "lengths".

GET /hostile/excess?delay_ms=D&then=stray|close
    A 200 with the body "answer" and a Content-Length of 6, kept alive; D milliseconds later
    (0..1000, default 50) the server writes a whole second response on the same connection,
    unasked for: ``HTTP/1.1 200 OK`` with ``X-Stray: yes`` and the body "stray" (then=stray, the
    default), or closes the connection (then=close). A client that sends its next request on that
    connection reads the stray response as its answer, or finds the connection gone. Counts each
    request under "hostile" as "excesses", and each stray response written or connection closed
    as "strays".

GET|POST /hostile/excess-next
    The usual next request: a 200 with the body "next". Counts each request under "hostile" as
    "nexts".

POST /hostile/early?after_kib=N
    Reads N KiB of the request body (0..65536, default 1024), then writes a whole final answer
    raw, ``201 Created`` with ``Connection: close`` and the body "created", and closes the
    connection with the rest of the body unread (the kernel answers the client's next bytes with
    a reset). The client's answer is the 201 (RFC 9112 §9.5: a client that sees a response while
    it sends its body stops sending). Counts each request under "hostile" as "earlies".

GET /hostile/cut?coding=gzip|deflate|br&framing=close|length
    Written raw: a 200 ``Content-Encoding: coding`` whose coded body is cut in the middle of its
    stream: the first half of the coded bytes of ``CUT_BODY`` (100,000 bytes, ``i * 7 & 0xFF``), then
    a close. framing=close (the default) sends no Content-Length; framing=length sends a
    Content-Length of the bytes sent, so the framing is whole and only the coding is cut. The
    response carries ``Cache-Control: max-age=600`` and an ETag, so a cache would keep it. Counts
    each request under "hostile" as "cuts".

GET /hostile/cut-feed
    Written raw: an event stream in ``Content-Encoding: gzip``, no Content-Length, whose n-th
    connection sends ``id: n``, the event ``event n`` and half of another (``data: half``, no blank
    line), flushed, then a close with the gzip stream unfinished. The fourth and later
    connections get 204 (no more). Counts each request under "hostile" as "cutFeeds".

GET|POST /hostile/head?kib=N&lines=M
    A 200 whose header section carries N KiB (1..65536, default 1024) of filler in M fields
    (1..100000, default 1: one field of N KiB), then the body "ok". Counts each request under
    "hostile" as "heads".
"""

from __future__ import annotations

import asyncio
import functools
import struct
import zlib

from aiohttp import web

import faults
import state
from common import state_of

MIB = 1 << 20
ZEROS = bytes(MIB)


class HostileState:
    def __init__(self, _ns) -> None:
        self.opened = 0
        self.finished = 0
        self.disconnected = 0
        self.wire_bytes = 0
        self.heads = 0
        self.gzips = 0
        self.interims = 0
        self.lengths = 0
        self.excesses = 0
        self.nexts = 0
        self.strays = 0
        self.earlies = 0
        self.cuts = 0
        self.cut_feeds = 0
        self.trailers = 0

    def stats(self) -> dict:
        return {"hostile": {"opened": self.opened, "finished": self.finished,
                            "disconnected": self.disconnected, "wireBytes": self.wire_bytes,
                            "heads": self.heads, "gzips": self.gzips,
                            "interims": self.interims, "lengths": self.lengths,
                            "excesses": self.excesses, "nexts": self.nexts, "strays": self.strays,
                            "earlies": self.earlies, "cuts": self.cuts,
                            "cutFeeds": self.cut_feeds, "trailers": self.trailers}}


state.register_bucket("hostile", HostileState)


@functools.lru_cache(maxsize=4)
def _deflate_parts(wbits: int) -> tuple[bytes, bytes]:
    """The first MiB (with the coding's header) and every further MiB of zeros, each ending at a
    full flush, so the later blocks repeat byte for byte."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = compressor.compress(ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH)
    later = compressor.compress(ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first, later


@functools.lru_cache(maxsize=8)
def _checksums(mib: int) -> tuple[int, int]:
    crc, adler = 0, 1
    for _ in range(mib):
        crc = zlib.crc32(ZEROS, crc)
        adler = zlib.adler32(ZEROS, adler)
    return crc, adler


@functools.lru_cache(maxsize=4)
def _brotli(mib: int) -> bytes:
    import brotlicffi  # httpbin's dependency

    compressor = brotlicffi.Compressor(quality=5)
    return b"".join(compressor.process(ZEROS) for _ in range(mib)) + compressor.finish()


def _corrupt_pieces(coding: str):
    yield _deflate_parts(31 if coding == "gzip" else 15)[0]
    yield b"\xff" * 16  # BTYPE 11: a reserved block type, "invalid block type" to any inflater


def _pieces(coding: str, mib: int):
    if coding == "br":
        yield _brotli(mib)
        return
    gzip = coding == "gzip"
    first, later = _deflate_parts(31 if gzip else 15)
    yield first
    for _ in range(mib - 1):
        yield later
    crc, adler = _checksums(mib)
    # An empty final block (fixed Huffman), then the trailer of the wrapper.
    trailer = struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF) if gzip else struct.pack(">I", adler)
    yield b"\x03\x00" + trailer


async def bomb(request: web.Request) -> web.StreamResponse:
    coding = request.query.get("coding", "gzip")
    if coding not in ("gzip", "deflate", "br"):
        return web.json_response({"error": "coding must be gzip, deflate or br"}, status=400)
    try:
        mib = min(max(int(request.query.get("mib", "1024")), 1), 4096)
    except ValueError:
        mib = 1024
    content_type = request.query.get("type", "application/octet-stream")
    # Checksums and the br body are computed before the head, off the event loop.
    await asyncio.get_running_loop().run_in_executor(None, _checksums if coding != "br" else _brotli, mib)
    bucket = state_of(request).bucket("hostile")
    bucket.opened += 1
    resp = web.StreamResponse(headers={"Content-Type": content_type, "Content-Encoding": coding, "Connection": "close"})
    try:
        await resp.prepare(request)
        corrupt = request.query.get("corrupt") == "1" and coding != "br"
        for piece in (_corrupt_pieces(coding) if corrupt else _pieces(coding, mib)):
            await resp.write(piece)
            bucket.wire_bytes += len(piece)
        await resp.write_eof()
        bucket.finished += 1
    except (ConnectionError, asyncio.CancelledError):
        bucket.disconnected += 1
        raise
    return resp


def _bounded(request: web.Request, name: str, default: int, upper: int) -> int:
    try:
        return min(max(int(request.query.get(name, str(default))), 1), upper)
    except ValueError:
        return default


async def oversized_head(request: web.Request) -> web.StreamResponse:
    kib = _bounded(request, "kib", 1024, 65536)
    lines = _bounded(request, "lines", 1, 100000)
    state_of(request).bucket("hostile").heads += 1
    size = max(1, (kib << 10) // lines)
    filler = "a" * size
    # Written raw: a framework's header checks are not the point, the client's limits are.
    head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
    head += "".join(f"X-Filler-{index}: {filler}\r\n" for index in range(lines)) + "\r\n"
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    request.transport.write(head.encode("ascii") + b"ok")
    return faults._close(request)


async def interim(request: web.Request) -> web.StreamResponse:
    try:
        status = int(request.query.get("status", "103"))
    except ValueError:
        status = 103
    if not 100 <= status <= 199 or status == 101:
        return web.json_response({"error": "status must be 100..199, not 101"}, status=400)
    state_of(request).bucket("hostile").interims += 1
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    # Written raw: aiohttp sends no interim responses of its own.
    body = b"final body"
    request.transport.write(
        b"HTTP/1.1 %d Interim\r\nLink: </style.css>; rel=preload\r\n\r\n" % status
        + b"HTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body)
    return faults._close(request)


LENGTH_BODY = bytes((index * 31) & 0xFF for index in range(100000))


async def conflicting_length(request: web.Request) -> web.StreamResponse:
    shape = request.query.get("shape", "fields")
    fields = {
        "fields": b"Content-Length: 100000\r\nContent-Length: 50000\r\n",
        "list": b"Content-Length: 100000, 50000\r\n",
        "same": b"Content-Length: 100000\r\nContent-Length: 100000\r\n",
        "hex": b"Content-Length: 0x10\r\n",
        "spaced": b"Content-Length: 100000 50000\r\n",
        "negative": b"Content-Length: -5\r\n",
    }.get(shape)
    if fields is None:
        return web.json_response({"error": "shape must be fields, list, same, hex, spaced or negative"}, status=400)
    state_of(request).bucket("hostile").lengths += 1
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    # Written raw: aiohttp would refuse to send two lengths.
    request.transport.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" + fields + b"\r\n" + LENGTH_BODY)
    return faults._close(request)


CUT_BODY = bytes((index * 7) & 0xFF for index in range(100000))


@functools.lru_cache(maxsize=4)
def _coded_cut_body(coding: str) -> bytes:
    if coding == "br":
        import brotlicffi  # httpbin's dependency

        coded = brotlicffi.compress(CUT_BODY)
    else:
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31 if coding == "gzip" else 15)
        coded = compressor.compress(CUT_BODY) + compressor.flush()
    return coded[: len(coded) // 2]


async def cut_coding(request: web.Request) -> web.StreamResponse:
    coding = request.query.get("coding", "gzip")
    framing = request.query.get("framing", "close")
    if coding not in ("gzip", "deflate", "br") or framing not in ("close", "length"):
        return web.json_response({"error": "coding must be gzip, deflate or br; framing close or length"}, status=400)
    state_of(request).bucket("hostile").cuts += 1
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    body = _coded_cut_body(coding)
    length = b"Content-Length: %d\r\n" % len(body) if framing == "length" else b""
    # Written raw: the coded stream stops in the middle, the framing says nothing is missing.
    request.transport.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Encoding: " + coding.encode()
        + b"\r\nCache-Control: max-age=600\r\nETag: \"cut-1\"\r\nConnection: close\r\n" + length + b"\r\n" + body)
    return faults._close(request)


async def cut_feed(request: web.Request) -> web.StreamResponse:
    bucket = state_of(request).bucket("hostile")
    bucket.cut_feeds += 1
    if bucket.cut_feeds > 3:
        return web.Response(status=204)  # "no more": the feed closes (WHATWG HTML §9.2.3)
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    number = bucket.cut_feeds
    coded = compressor.compress(b"id: %d\ndata: event %d\n\ndata: half" % (number, number))
    coded += compressor.flush(zlib.Z_SYNC_FLUSH)
    request.transport.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
        b"Connection: close\r\n\r\n" + coded)
    return faults._close(request)


async def trailers(request: web.Request) -> web.StreamResponse:
    """A chunked body of two bytes, then `mib` MiB of trailer fields (RFC 9112 §7.1.2; 4096 at
    most: "endless" for a client), written as fast as the client reads them; `wireBytes` counts
    the trailer bytes the client took."""
    mib = _bounded(request, "mib", 4096, 4096)
    bucket = state_of(request).bucket("hostile")
    bucket.trailers += 1
    transport = request.transport
    if transport is None:
        return web.Response(status=500, text="no transport")
    transport.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nTrailer: X-Trailer\r\n"
        b"Connection: close\r\n\r\n2\r\nok\r\n0\r\n")
    block = b"".join(b"X-Trailer-%d: %s\r\n" % (index, b"t" * 90) for index in range(1000))
    target = mib * MIB
    sent = 0
    while sent < target and not transport.is_closing():
        if transport.get_write_buffer_size() > 256 << 10:
            await asyncio.sleep(0.001)
            continue
        transport.write(block)
        sent += len(block)
        bucket.wire_bytes = sent
    if not transport.is_closing():
        transport.write(b"\r\n")
    return faults._close(request)


GZIP_MEMBERS = [b"first member\n", b"second member\n", b"third member\n"]


async def gzip_members(request: web.Request) -> web.Response:
    import gzip

    shape = request.query.get("shape", "members")
    first = gzip.compress(GZIP_MEMBERS[0], mtime=0)
    if shape == "members":
        body = b"".join(gzip.compress(member, mtime=0) for member in GZIP_MEMBERS)
    elif shape == "padded":
        body = first + bytes(8)
    elif shape == "garbage":
        body = first + b"garbage!"
    else:
        return web.json_response({"error": "shape must be members, padded or garbage"}, status=400)
    state_of(request).bucket("hostile").gzips += 1
    return web.Response(body=body, headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"})


STRAY_RESPONSE = b"HTTP/1.1 200 OK\r\nX-Stray: yes\r\nContent-Length: 5\r\n\r\nstray"


async def excess(request: web.Request) -> web.Response:
    try:
        delay = min(1000, max(0, int(request.query.get("delay_ms", "50"))))
    except ValueError:
        return web.json_response({"error": "delay_ms must be a number of milliseconds"}, status=400)
    bucket = state_of(request).bucket("hostile")
    bucket.excesses += 1
    transport = request.transport

    closes = request.query.get("then", "stray") == "close"

    def write_stray() -> None:
        # After aiohttp has written the answer below: bytes nobody asked for, on a connection
        # that stays open for the client's next request (or the end of that connection).
        if transport is not None and not transport.is_closing():
            if closes:
                transport.close()
            else:
                transport.write(STRAY_RESPONSE)
            bucket.strays += 1

    asyncio.get_running_loop().call_later(delay / 1000, write_stray)
    return web.Response(body=b"answer", headers={"Content-Type": "text/plain"})


async def early(request: web.Request) -> web.StreamResponse:
    try:
        kib = min(65536, max(0, int(request.query.get("after_kib", "1024"))))
    except ValueError:
        return web.json_response({"error": "after_kib must be a number of KiB"}, status=400)
    want = kib * 1024
    got = 0
    while got < want:
        chunk = await request.content.read(min(65536, want - got))
        if not chunk:
            break
        got += len(chunk)
    state_of(request).bucket("hostile").earlies += 1
    if request.transport is None:
        return web.Response(status=500, text="no transport")
    # Written raw: aiohttp would read (or discard) the rest of the body before answering.
    request.transport.write(
        b"HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nContent-Length: 7\r\nConnection: close\r\n\r\ncreated")
    return faults._close(request)


async def excess_next(request: web.Request) -> web.Response:
    state_of(request).bucket("hostile").nexts += 1
    if request.method == "POST":
        await request.read()
    return web.Response(body=b"next", headers={"Content-Type": "text/plain"})


def setup(routes) -> None:
    routes.get("/hostile/excess", excess)
    routes.post("/hostile/early", early)
    routes.get("/hostile/excess-next", excess_next)
    routes.post("/hostile/excess-next", excess_next)
    routes.get("/hostile/bomb", bomb)
    routes.post("/hostile/bomb", bomb)
    routes.get("/hostile/interim", interim)
    routes.get("/hostile/cut", cut_coding)
    routes.get("/hostile/cut-feed", cut_feed)
    routes.get("/hostile/length", conflicting_length)
    routes.get("/hostile/head", oversized_head)
    routes.get("/hostile/trailers", trailers)
    routes.post("/hostile/head", oversized_head)
    routes.get("/hostile/gzip", gzip_members)
    routes.post("/hostile/gzip", gzip_members)
