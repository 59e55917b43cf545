"""Upload routes (issue 11 §1-2): a byte-counting upload endpoint and a strict multipart parser.

* ``POST|PUT /uploads/count[?fail=N][&delay=S]`` reads the body in chunks and answers
  ``{"attempt", "bytes", "sha256", "contentLength", "transferEncoding", "contentType"}``. The first
  ``N`` requests of the namespace answer ``503`` (``Retry-After: 0``) *after* reading the whole
  body, so a retried upload's every attempt is counted. ``delay`` sleeps S seconds (≤ 1) after
  each chunk read, so a test can cancel mid-body. ``rate=B`` reads at B bytes per second (64 KiB
  reads paced on the wall clock): a slow uplink whose bytes keep moving. (The client's kernel
  buffers up to ``tcp_wmem``'s maximum, 4 MiB on Linux, before the server reads it: a test's body
  must take long against that.) ``stall=N``
  stops reading after N bytes and holds the request (at most 30 s, until the client goes away),
  so the client's send window fills: a stalled upload. Every attempt lands in ``GET /_stats`` under
  ``uploads``: ``{"attempts": n, "bytes": total, "perAttempt": [bytes...], "completed": n, "multipart": n}``
  (``multipart`` counts the bodies ``/uploads/multipart`` parsed). ``seeOther=URL`` answers a
  stored upload ``303 See Other`` with ``Location: URL`` instead. ``gate=G`` holds the answer,
  once the body is read, until the namespace's gate G opens (``POST /_gates/G/open``, max 30 s):
  the upload cannot end before the test lets it.
* ``POST /uploads/multipart`` parses the body with ``multipart_strict`` and answers
  ``{"parts": [{"name", "nameHex", "filename", "filenameHex", "contentType", "headers",
  "sha256", "length"}], "bytes", "boundary"}`` or ``400 {"error": {"code": "malformed_multipart"}}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import time

from aiohttp import web

import multipart_strict
import routes_gates
import state
from common import error_response, json_response, parse_float, state_of

READ_CHUNK = 256 * 1024
SLOW_CHUNK = 64 * 1024  # reads of ?rate=
STALL_HOLD = 30.0  # longest a ?stall= request is held, seconds


class UploadsState:
    def __init__(self, ns) -> None:
        self.attempts = 0
        self.bytes = 0
        self.per_attempt: list[int] = []
        self.completed = 0
        self.multipart = 0

    def stats(self) -> dict:
        return {"uploads": {"attempts": self.attempts, "bytes": self.bytes,
                            "perAttempt": list(self.per_attempt[-100:]), "completed": self.completed,
                            "multipart": self.multipart}}


state.register_bucket("uploads", UploadsState)


async def count(request: web.Request) -> web.Response:
    bucket = state_of(request).bucket("uploads")
    bucket.attempts += 1
    attempt = bucket.attempts
    index = len(bucket.per_attempt)
    bucket.per_attempt.append(0)
    delay = min(max(parse_float(request.query.get("delay"), 0.0) or 0.0, 0.0), 1.0)
    rate = max(parse_float(request.query.get("rate"), 0.0) or 0.0, 0.0)
    try:
        stall = int(request.query["stall"]) if "stall" in request.query else None
    except ValueError:
        stall = None
    chunk_size = SLOW_CHUNK if rate else READ_CHUNK
    started = time.monotonic()
    digest = hashlib.sha256()
    size = 0
    while True:
        if stall is not None and size >= stall:
            await _hold_until_gone(request)
            return web.Response(status=408)
        want = chunk_size if stall is None else max(1, min(chunk_size, stall - size))
        chunk = await request.content.read(want)
        if not chunk:
            break
        if rate:  # paced on the wall clock: slow reads or short sleeps do not drift the rate
            await asyncio.sleep(max(0.0, started + (size + len(chunk)) / rate - time.monotonic()))
        digest.update(chunk)
        size += len(chunk)
        bucket.bytes += len(chunk)
        bucket.per_attempt[index] = size
        if delay:
            await asyncio.sleep(delay)
    if request.query.get("gate"):
        await routes_gates.pass_gate(request, request.query["gate"])
    try:
        fail = int(request.query.get("fail", "0"))
    except ValueError:
        fail = 0
    if attempt <= fail:
        return error_response(503, "unavailable", f"attempt {attempt} of {fail} failing attempts",
                              headers={"Retry-After": "0"})
    bucket.completed += 1
    if "seeOther" in request.query:  # Post/Redirect/Get: stored, then sent to the result's URL
        return web.Response(status=303, headers={"Location": request.query["seeOther"]})
    return json_response({"attempt": attempt, "bytes": size, "sha256": digest.hexdigest(),
                          "contentLength": request.headers.get("Content-Length"),
                          "transferEncoding": request.headers.get("Transfer-Encoding"),
                          "contentType": request.headers.get("Content-Type")})


async def _hold_until_gone(request: web.Request) -> None:
    """Reads nothing more until the client closes the connection (at most STALL_HOLD seconds)."""
    end = time.monotonic() + STALL_HOLD
    while time.monotonic() < end:
        if request.transport is None or request.transport.is_closing():
            return
        await asyncio.sleep(0.05)


async def multipart(request: web.Request) -> web.Response:
    try:
        boundary = multipart_strict.boundary_of(request.headers.get("Content-Type"))
        report = await multipart_strict.parse(request.content.iter_any().__aiter__(), boundary)
    except multipart_strict.MultipartError as exc:
        # drain what is left so the client reads the answer instead of a reset connection
        while await request.content.read(READ_CHUNK):
            pass
        return error_response(400, "malformed_multipart", str(exc))
    state_of(request).bucket("uploads").multipart += 1
    report["boundary"] = boundary
    report["contentLength"] = request.headers.get("Content-Length")
    report["transferEncoding"] = request.headers.get("Transfer-Encoding")
    return json_response(report)


def setup(routes) -> None:
    routes.add("POST", "/uploads/count", count)
    routes.add("PUT", "/uploads/count", count)
    routes.add("POST", "/uploads/multipart", multipart)
