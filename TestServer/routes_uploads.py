"""Upload routes (issue 11 §1-2): a byte-counting upload endpoint and a strict multipart parser.

* ``POST|PUT /uploads/count[?fail=N][&delay=S]`` reads the body in chunks and answers
  ``{"attempt", "bytes", "sha256", "contentLength", "transferEncoding", "contentType"}``. The first
  ``N`` requests of the namespace answer ``503`` (``Retry-After: 0``) *after* reading the whole
  body, so a retried upload's every attempt is counted. ``delay`` sleeps S seconds (≤ 1) after
  each chunk read, so a test can cancel mid-body. Every attempt lands in ``GET /_stats`` under
  ``uploads``: ``{"attempts": n, "bytes": total, "perAttempt": [bytes...], "completed": n, "multipart": n}``
  (``multipart`` counts the bodies ``/uploads/multipart`` parsed).
* ``POST /uploads/multipart`` parses the body with ``multipart_strict`` and answers
  ``{"parts": [{"name", "nameHex", "filename", "filenameHex", "contentType", "headers",
  "sha256", "length"}], "bytes", "boundary"}`` or ``400 {"error": {"code": "malformed_multipart"}}``.
"""

from __future__ import annotations

import asyncio
import hashlib

from aiohttp import web

import multipart_strict
import state
from common import error_response, json_response, parse_float, state_of

READ_CHUNK = 256 * 1024


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
    digest = hashlib.sha256()
    size = 0
    while True:
        chunk = await request.content.read(READ_CHUNK)
        if not chunk:
            break
        digest.update(chunk)
        size += len(chunk)
        bucket.bytes += len(chunk)
        bucket.per_attempt[index] = size
        if delay:
            await asyncio.sleep(delay)
    try:
        fail = int(request.query.get("fail", "0"))
    except ValueError:
        fail = 0
    if attempt <= fail:
        return error_response(503, "unavailable", f"attempt {attempt} of {fail} failing attempts",
                              headers={"Retry-After": "0"})
    bucket.completed += 1
    return json_response({"attempt": attempt, "bytes": size, "sha256": digest.hexdigest(),
                          "contentLength": request.headers.get("Content-Length"),
                          "transferEncoding": request.headers.get("Transfer-Encoding"),
                          "contentType": request.headers.get("Content-Type")})


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
