"""Resumable downloads: ``GET /media/{bytes}`` with variants for Courier's download tests.

The body is deterministic and generated on the fly (never held in memory): byte ``i`` of
version ``v`` is ``(i + v) % 251``. Version 0 is the stable file; ``etag=changing`` bumps the
version on every request, so a client that glued two versions together gets the wrong bytes.

Query parameters (all optional, combinable):

* ``ranges=0``       no ``Accept-Ranges``; ``Range`` and ``If-Range`` are ignored (always 200)
* ``etag=strong``    (default) ``ETag: "m{bytes}-v{v}"``; ``weak`` -> ``W/"..."``; ``none`` -> no
                     ETag; ``changing`` -> a new version (and ETag) on every request to this path
                     in the namespace; ``weakened`` -> a new version on every request like
                     ``changing``, whose ETag is strong for version 0 and weak (``W/``) after it (a
                     file replaced behind a server or CDN that weakens its tags)
* ``lastModified=now`` ``Last-Modified`` equal to ``Date`` (a weak validator, RFC 9110 §8.8.2.2);
                     by default it is 2026-01-01, more than 60 s before ``Date`` (strong)
* ``ifRange=ignore`` serve the Range even when ``If-Range`` does not match (a broken server)
* ``rangeStart=zero`` answer a Range with ``206`` from byte 0 (a Content-Range that does not
                     start where the client asked)
* ``rangeCap=N``     answer a Range with at most N bytes (a server that caps range answers)
* ``length=unknown`` ``206`` answers say ``Content-Range: bytes a-b/*`` (complete length
                     unknown, RFC 9110 §14.4); a Range from the end still gets ``416 bytes */N``
* ``dropAfter=N``    the first ``drops`` (default 1) requests to this path in the namespace
                     send N body bytes, then close the connection
* ``digest=repr``    ``Repr-Digest: sha-256=:b64:`` of the whole representation (RFC 9530);
                     ``content`` -> ``Content-Digest`` of the bytes of this response;
                     ``legacy`` -> ``Digest: SHA-256=b64`` (RFC 3230); ``bad`` -> a wrong
                     ``Repr-Digest``. Only for sizes up to 256 MiB.
* ``chunked=1``      no ``Content-Length`` (chunked transfer coding)
* ``gzip=always``    ``Content-Encoding: gzip`` whatever the client accepts (ranges ignored)
* ``chunkDelay=S``   sleep S seconds (max 1) between writes (demo progress bars)
* ``stallAfter=N``   the first request to this path in the namespace waits 10 s after N body
                     bytes before sending the rest (a client that cancels meanwhile is mid-body
                     for sure, whatever the machine's load); with ``stallGate=G`` it waits at
                     the namespace's gate G instead (``POST /_gates/G/open``, max 30 s): a test
                     acts mid-body and then lets the rest go, in that order on any machine

``POST /media/{bytes}`` serves the same file (an export asked with a write); its body is ignored.

Every request is logged in the namespace's ``downloads`` bucket (``GET /_stats`` ->
``downloads.log``): ``range``, ``ifRange``, ``acceptEncoding`` as received, the status, the
first byte sent, ``bytesSent``, the ETag, the ``method`` and whether the connection was dropped.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import zlib
from typing import Any

from aiohttp import web

import routes_gates
import state
from common import error_response, http_date, parse_byte_range, parse_float, state_of, unprefixed_path

MAX_BYTES = 4 * 1024 * 1024 * 1024
MAX_DIGEST_BYTES = 256 * 1024 * 1024
PERIOD = 251
WRITE = PERIOD * 1024  # 257,024 bytes per write
_BLOCK = bytes(i % PERIOD for i in range(WRITE + PERIOD))
LAST_MODIFIED = 1767225600.0  # 2026-01-01
LOG_LIMIT = 200


def pattern(start: int, length: int) -> bytes:
    """Bytes [start, start+length) of version-0 content (length <= WRITE)."""
    offset = start % PERIOD
    return _BLOCK[offset:offset + length]


class DownloadsState:
    def __init__(self, ns: state.Namespace) -> None:
        self.versions: collections.Counter[str] = collections.Counter()
        self.served: collections.Counter[str] = collections.Counter()
        self.log: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_LIMIT)

    def stats(self) -> dict[str, Any]:
        return {"downloads": {"requests": sum(self.served.values()), "log": list(self.log)}}


state.register_bucket("downloads", DownloadsState)

_digest_cache: dict[tuple[int, int, int, int], bytes] = {}


def _sha256(start: int, end: int, version: int) -> bytes:
    """SHA-256 of bytes [start, end] of ``version`` (cached; a few sizes per test run)."""
    key = (start, end, version, 0)
    cached = _digest_cache.get(key)
    if cached is None:
        h = hashlib.sha256()
        pos = start
        while pos <= end:
            n = min(WRITE, end - pos + 1)
            h.update(pattern(pos + version, n))
            pos += n
        cached = _digest_cache[key] = h.digest()
        if len(_digest_cache) > 64:
            _digest_cache.pop(next(iter(_digest_cache)))
    return cached


async def media(request: web.Request) -> web.StreamResponse:
    try:
        total = int(request.match_info["bytes"])
    except ValueError:
        total = -1
    if not 0 <= total <= MAX_BYTES:
        return error_response(400, "bad_request", f"bytes must be in 0...{MAX_BYTES}")
    q = request.query
    digest_kind = q.get("digest")
    if digest_kind and total > MAX_DIGEST_BYTES:
        return error_response(400, "bad_request", f"digest only up to {MAX_DIGEST_BYTES} bytes")
    bucket: DownloadsState = state_of(request).bucket("downloads")
    path = unprefixed_path(request)
    served_before = bucket.served[path]
    bucket.served[path] += 1

    etag_kind = q.get("etag", "strong")
    version = 0
    if etag_kind in ("changing", "weakened"):
        version = bucket.versions[path]
        bucket.versions[path] += 1
    tag = f'"m{total}-v{version}"'
    modified = http_date() if q.get("lastModified") == "now" else http_date(LAST_MODIFIED)
    headers = {"Content-Type": "application/octet-stream", "Last-Modified": modified}
    if q.get("lastModified") == "now":
        headers["Date"] = modified
    if etag_kind in ("strong", "changing"):
        headers["ETag"] = tag
    elif etag_kind == "weak" or (etag_kind == "weakened" and version > 0):
        headers["ETag"] = "W/" + tag
    elif etag_kind == "weakened":
        headers["ETag"] = tag
    ranges = q.get("ranges") != "0"
    gzip = q.get("gzip") == "always"
    if ranges and not gzip:
        headers["Accept-Ranges"] = "bytes"

    entry: dict[str, Any] = {
        "path": path, "method": request.method, "range": request.headers.get("Range"), "ifRange": request.headers.get("If-Range"),
        "acceptEncoding": request.headers.get("Accept-Encoding"), "status": 200, "start": 0,
        "bytesSent": 0, "etag": headers.get("ETag"), "version": version, "dropped": False,
    }
    bucket.log.append(entry)

    first, last = 0, total - 1
    status = 200
    range_header = request.headers.get("Range")
    if range_header is not None and ranges and not gzip:
        if_range = request.headers.get("If-Range")
        honour = True
        if if_range is not None and q.get("ifRange") != "ignore":
            if if_range.startswith('"') or if_range.startswith("W/"):
                honour = "ETag" in headers and if_range == headers["ETag"] and not if_range.startswith("W/")
            else:
                honour = if_range.strip() == headers["Last-Modified"]  # exact match, RFC 9110 §13.1.5
        if honour:
            parsed = parse_byte_range(range_header, total)
            if parsed == "416":
                entry["status"] = 416
                return web.Response(status=416, headers={"Content-Range": f"bytes */{total}",
                                                         **({"ETag": headers["ETag"]} if "ETag" in headers else {})})
            if isinstance(parsed, tuple):
                first, last = parsed
                if q.get("rangeStart") == "zero":
                    first = 0
                cap = q.get("rangeCap")
                if cap is not None and cap.isdigit() and int(cap) > 0:
                    last = min(last, first + int(cap) - 1)
                status = 206
                complete = "*" if q.get("length") == "unknown" else str(total)
                headers["Content-Range"] = f"bytes {first}-{last}/{complete}"
    entry["status"] = status
    entry["start"] = first

    if digest_kind in ("repr", "bad", "legacy") and total > 0:
        whole = _sha256(0, total - 1, version)
        if digest_kind == "bad":
            whole = hashlib.sha256(whole).digest()
        b64 = base64.b64encode(whole).decode("ascii")
        if digest_kind == "legacy":
            headers["Digest"] = f"SHA-256={b64}"
        else:
            headers["Repr-Digest"] = f"sha-256=:{b64}:"
    elif digest_kind == "content" and total > 0 and not gzip:
        part = _sha256(first, last, version)
        headers["Content-Digest"] = f"sha-256=:{base64.b64encode(part).decode('ascii')}:"

    resp = web.StreamResponse(status=status, headers=headers)
    length = max(0, last - first + 1)
    if gzip:
        resp.headers["Content-Encoding"] = "gzip"
        resp.enable_chunked_encoding()
    elif q.get("chunked") == "1":
        resp.enable_chunked_encoding()
    else:
        resp.content_length = length
    await resp.prepare(request)
    if request.method == "HEAD":
        return resp

    drop_after: int | None = None
    if q.get("dropAfter") is not None:
        try:
            drops = int(q.get("drops", "1"))
            if served_before < drops:
                drop_after = max(0, int(q["dropAfter"]))
        except ValueError:
            pass
    delay = min(max(parse_float(q.get("chunkDelay"), 0.0) or 0.0, 0.0), 1.0)
    stall_after: int | None = None
    try:
        stall_after = int(q["stallAfter"]) if "stallAfter" in q and served_before == 0 else None
    except ValueError:
        pass
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31) if gzip else None
    pos = first
    try:
        while pos <= last:
            n = min(WRITE, last - pos + 1)
            if stall_after is not None:
                if entry["bytesSent"] >= stall_after:
                    stall_after = None
                    if q.get("stallGate"):
                        await routes_gates.pass_gate(request, q["stallGate"])
                    else:
                        await asyncio.sleep(10)
                else:
                    n = min(n, stall_after - entry["bytesSent"])
            if drop_after is not None:
                n = min(n, drop_after - entry["bytesSent"])
                if n <= 0:
                    break
            chunk = pattern(pos + version, n)
            if compressor is not None:
                chunk = compressor.compress(chunk)
            if chunk:
                await resp.write(chunk)
            pos += n
            entry["bytesSent"] += n
            if delay:
                await asyncio.sleep(delay)
        if drop_after is not None and pos <= last:
            entry["dropped"] = True
            request["fault_dropped"] = True
            if request.transport is not None:
                request.transport.close()  # flushes what was written, then closes: a truncated body
            return resp
        if compressor is not None:
            await resp.write(compressor.flush())
        await resp.write_eof()
    except (ConnectionError, RuntimeError):
        pass
    return resp


def setup(routes) -> None:
    routes.get("/media/{bytes}", media)
    routes.post("/media/{bytes}", media)  # the same file as the answer to a POST (an export)
