"""HTTP cache conformance surface (issue 17): responses whose header fields the test chooses,
a byte-range resource, and responses whose coding the client cannot undo.

GET /cache/scripted/{name}?h=Name:Value&h=...&status=200&body=text&tagFromLanguage=1
    answers with exactly the listed fields, in order (repeats allowed), plus Date unless listed.
    tagFromLanguage=1: ETag is the first two letters of Accept-Language, quoted; a request whose
    If-None-Match lists that tag gets 304 with the same fields.
GET /cache/ranged/{name}        36 bytes "0-9a-z", strong ETag, max-age=3600; one byte range per
                                request honoured with 206 + Content-Range (416 when unsatisfiable)
GET /cache/coding/{kind}        kind = unknown-content-coding | corrupt-gzip | bad-chunked
stats: "cacheConformance": {name: {"requests", "notModified", "lastIfNoneMatch", "lastRange",
       "lastAcceptLanguage"}}
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

import faults
import state
from common import http_date, state_of

RANGED_BODY = b"0123456789abcdefghijklmnopqrstuvwxyz"


class Counter:
    def __init__(self) -> None:
        self.requests = 0
        self.not_modified = 0
        self.last_inm: str | None = None
        self.last_range: str | None = None
        self.last_accept_language: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "notModified": self.not_modified, "lastIfNoneMatch": self.last_inm,
                "lastRange": self.last_range, "lastAcceptLanguage": self.last_accept_language}


class ConformanceState:
    def __init__(self, ns: state.Namespace) -> None:
        self.counters: dict[str, Counter] = {}

    def count(self, request: web.Request, name: str) -> Counter:
        counter = self.counters.setdefault(name, Counter())
        counter.requests += 1
        counter.last_inm = request.headers.get("If-None-Match")
        counter.last_range = request.headers.get("Range")
        counter.last_accept_language = request.headers.get("Accept-Language")
        return counter

    def stats(self) -> dict[str, Any]:
        return {"cacheConformance": {name: c.to_json() for name, c in self.counters.items()}}


state.register_bucket("cacheConformance", ConformanceState)


async def get_scripted(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    counter = state_of(request).bucket("cacheConformance").count(request, name)
    headers: CIMultiDict[str] = CIMultiDict()
    for spec in request.query.getall("h", []):
        field, sep, value = spec.partition(":")
        if sep and field.strip():
            headers.add(field.strip(), value.strip())
    if "Date" not in headers:
        headers.add("Date", http_date())
    if request.query.get("tagFromLanguage") == "1":
        tag = '"' + (request.headers.get("Accept-Language") or "none")[:2].lower() + '"'
        headers["ETag"] = tag
        inm = request.headers.get("If-None-Match") or ""
        if tag in [t.strip() for t in inm.split(",")]:
            counter.not_modified += 1
            return web.Response(status=304, headers=headers)
    try:
        status = int(request.query.get("status", "200"))
    except ValueError:
        status = 200
    return web.Response(status=status, headers=headers, body=request.query.get("body", name).encode())


_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


async def get_ranged(request: web.Request) -> web.Response:
    state_of(request).bucket("cacheConformance").count(request, request.match_info["name"])
    headers = {"Date": http_date(), "ETag": '"r1"', "Cache-Control": "max-age=3600", "Accept-Ranges": "bytes",
               "Content-Type": "application/octet-stream"}
    spec = request.headers.get("Range")
    match = _RANGE_RE.match(spec.strip()) if spec else None
    if not match or (match.group(1) == "" and match.group(2) == ""):
        return web.Response(headers=headers, body=RANGED_BODY)
    size = len(RANGED_BODY)
    first, last = match.group(1), match.group(2)
    if first == "":
        start, end = max(0, size - int(last)), size - 1
    else:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        return web.Response(status=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return web.Response(status=206, headers=headers, body=RANGED_BODY[start:end + 1])


async def get_coding(request: web.Request) -> web.StreamResponse:
    kind = request.match_info["kind"]
    state_of(request).bucket("cacheConformance").count(request, f"coding-{kind}")
    if kind == "unknown-content-coding":
        return web.Response(body=b"hello", headers={"Content-Encoding": "x-unknown", "Date": http_date()})
    if kind == "corrupt-gzip":
        return web.Response(body=b"hello", headers={"Content-Encoding": "gzip", "Date": http_date()})
    if kind == "unknown-transfer-coding" and request.transport is not None:
        request.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                b"Transfer-Encoding: x-unknown, chunked\r\nConnection: close\r\n\r\n"
                                b"5\r\nhello\r\n0\r\n\r\n")
        return faults._close(request)
    if kind == "bad-chunked" and request.transport is not None:
        request.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
                                b"Connection: close\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        return faults._close(request)
    return web.Response(status=404, text="unknown coding kind")


def setup(routes) -> None:
    routes.get("/cache/scripted/{name}", get_scripted)
    routes.get("/cache/ranged/{name}", get_ranged)
    routes.get("/cache/coding/{kind}", get_coding)
