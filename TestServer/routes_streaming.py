"""Streamed responses for Courier's streaming tests (issue 10).

* ``GET /stream/bytes?size=N&chunk=K&delay=S`` — N pattern bytes (byte i = i % 251) in chunks of K,
  S seconds apart; ``length=0`` omits Content-Length (chunked).
* ``GET /stream/ndjson?count=N&delay=S&every=K&crlf=1&blank=1&bad=L&tricky=1`` — N records
  ``{"id": i, "name": "item-i"}`` generated on the fly (never held in memory); ``crlf`` ends lines
  with CRLF; ``blank`` adds an empty line after each record; ``bad=L`` makes line L unparseable;
  ``tricky`` puts U+2028, U+0085 and an escaped CR inside the name; ``delay`` sleeps every
  ``every`` records.
* ``GET /stream/drop?after=N`` — sends N bytes of a larger declared body, then drops the connection.
* ``GET /stream/fail`` — 500 with a JSON error body (never a stream).
* ``GET /stream/protected?size=N`` — bearer token required (401 otherwise, like /me), then bytes.
* ``GET /stream/endless?chunk=K&delay=S`` — an endless feed; the server counts opened, finished and
  disconnected streams and bytes written in ``_stats`` → ``streaming``.
* ``GET /stream/silence?beats=N&every=S&silence=T`` — N keep-alive lines S seconds apart, then T
  seconds of silence on the open connection; when the client closes it during the silence, the
  seconds from the last byte written to the close go to ``_stats`` → ``streaming.silences``, and the
  longest gap between the server's 10 ms polls meanwhile (its own lateness) to ``silenceLags``.
  ``&gate=G``: beat i waits for the namespace's gate ``G-i`` (``POST /_gates/G-i/open``) instead.
"""

from __future__ import annotations

import asyncio
import json
import time

from aiohttp import web

import routes_gates
import state
from common import error_response, parse_float, state_of
from routes_auth import authenticate
from routes_transfer import pattern

MAX_SIZE = 4 * 1024 * 1024 * 1024


class StreamingState:
    def __init__(self, _ns) -> None:
        self.opened = 0
        self.finished = 0
        self.disconnected = 0
        self.bytes_written = 0
        self.silences: list[float] = []
        self.silence_lags: list[float] = []

    def stats(self) -> dict:
        return {"streaming": {"opened": self.opened, "finished": self.finished,
                              "disconnected": self.disconnected, "bytesWritten": self.bytes_written,
                              "silences": self.silences, "silenceLags": self.silence_lags}}


state.register_bucket("streaming", StreamingState)


def _int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(request.query.get(name, default))
    except ValueError:
        value = default
    return min(max(value, low), high)


async def _run(request: web.Request, resp: web.StreamResponse, chunks) -> web.StreamResponse:
    """Writes ``chunks`` (an async iterator of bytes), counting what happens in the bucket."""
    bucket = state_of(request).bucket("streaming")
    bucket.opened += 1
    try:
        await resp.prepare(request)
        async for chunk in chunks:
            await resp.write(chunk)
            bucket.bytes_written += len(chunk)
        await resp.write_eof()
        bucket.finished += 1
    except (ConnectionError, asyncio.CancelledError):
        bucket.disconnected += 1
        raise
    return resp


async def stream_bytes(request: web.Request) -> web.StreamResponse:
    size = _int(request, "size", 1024, 0, MAX_SIZE)
    chunk = _int(request, "chunk", 64 * 1024, 1, 1024 * 1024)
    delay = min(max(parse_float(request.query.get("delay"), 0.0) or 0.0, 0.0), 5.0)
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    if request.query.get("length", "1") != "0":
        resp.content_length = size
    else:
        resp.enable_chunked_encoding()

    async def chunks():
        pos = 0
        while pos < size:
            n = min(chunk, size - pos)
            yield pattern(pos, n)
            pos += n
            if delay:
                await asyncio.sleep(delay)

    return await _run(request, resp, chunks())


async def stream_ndjson(request: web.Request) -> web.StreamResponse:
    count = _int(request, "count", 10, 0, 50_000_000)
    every = _int(request, "every", 1, 1, 1_000_000)
    delay = min(max(parse_float(request.query.get("delay"), 0.0) or 0.0, 0.0), 5.0)
    end = b"\r\n" if request.query.get("crlf") == "1" else b"\n"
    blank = request.query.get("blank") == "1"
    bad = _int(request, "bad", 0, 0, 50_000_000)
    tricky = request.query.get("tricky") == "1"
    resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    resp.enable_chunked_encoding()

    async def chunks():
        line_no = 0
        batch = bytearray()
        for i in range(count):
            line_no += 1
            if line_no == bad:
                batch += b'{"id": ' + str(i).encode() + b', "name": }' + end
            else:
                name = f"item-{i}"
                if tricky:
                    name += "\u2028sep\u0085nel\rcr"
                batch += json.dumps({"id": i, "name": name}, ensure_ascii=False).encode() + end
            if blank:
                line_no += 1
                batch += end
            if len(batch) >= 32 * 1024 or (delay and (i + 1) % every == 0):
                yield bytes(batch)
                batch.clear()
                if delay and (i + 1) % every == 0:
                    await asyncio.sleep(delay)
        if batch:
            yield bytes(batch)

    return await _run(request, resp, chunks())


async def stream_drop(request: web.Request) -> web.StreamResponse:
    after = _int(request, "after", 1000, 0, 64 * 1024 * 1024)
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    resp.content_length = after * 2 + 1
    await resp.prepare(request)
    if after:
        await resp.write(pattern(0, after))
    await asyncio.sleep(0.05)
    if request.transport is not None:
        request.transport.abort()
    return resp


async def stream_fail(request: web.Request) -> web.Response:
    return error_response(500, "stream_unavailable", "The export is not available right now")


async def stream_protected(request: web.Request) -> web.StreamResponse:
    _claims, failure = authenticate(request)
    if failure is not None:
        return failure
    return await stream_bytes(request)


async def stream_endless(request: web.Request) -> web.StreamResponse:
    chunk = _int(request, "chunk", 1024, 1, 1024 * 1024)
    delay = min(max(parse_float(request.query.get("delay"), 0.01) or 0.0, 0.0), 5.0)
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    resp.enable_chunked_encoding()

    async def chunks():
        pos = 0
        while True:
            yield pattern(pos, chunk)
            pos += chunk
            if delay:
                await asyncio.sleep(delay)

    return await _run(request, resp, chunks())


async def stream_silence(request: web.Request) -> web.StreamResponse:
    """``beats`` small chunks ``every`` seconds apart (a feed's keep-alives), then ``silence``
    seconds without a byte on an open connection, then the end: for clients' idle timeouts.
    With ``gate=G``, beat i is sent once the namespace's gate ``G-i`` opens (max 30 s each,
    ``POST /_gates/G-i/open``) instead of ``every`` seconds after the one before: a test paces
    the beats, one arrival at a time, whatever the machine's load."""
    beats = _int(request, "beats", 3, 0, 1000)
    every = min(max(parse_float(request.query.get("every"), 0.2) or 0.0, 0.0), 5.0)
    silence = min(max(parse_float(request.query.get("silence"), 20.0) or 0.0, 0.0), 60.0)
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    resp.enable_chunked_encoding()

    bucket = state_of(request).bucket("streaming")
    gate = request.query.get("gate")

    async def chunks():
        for beat in range(beats):
            if gate:
                await routes_gates.pass_gate(request, f"{gate}-{beat}")
            elif beat:
                await asyncio.sleep(every)
            yield b": keep-alive\n"
        await asyncio.sleep(0)  # let the last write go out before the silence is timed
        last = time.monotonic()
        polled = last
        lag = 0.0  # the longest gap between two polls: how late this server could notice a close
        while time.monotonic() - last < silence:
            transport = request.transport
            now = time.monotonic()
            lag = max(lag, now - polled)
            polled = now
            if transport is None or transport.is_closing():
                bucket.silences.append(round(now - last, 3))
                bucket.silence_lags.append(round(lag, 3))
                return
            await asyncio.sleep(0.01)

    return await _run(request, resp, chunks())


def setup(routes) -> None:
    routes.get("/stream/bytes", stream_bytes)
    routes.get("/stream/ndjson", stream_ndjson)
    routes.get("/stream/drop", stream_drop)
    routes.get("/stream/fail", stream_fail)
    routes.get("/stream/protected", stream_protected)
    routes.get("/stream/endless", stream_endless)
    routes.get("/stream/silence", stream_silence)
