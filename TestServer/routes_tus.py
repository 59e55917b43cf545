"""tus 1.0.0 resumable uploads, core protocol + the creation extension (https://tus.io/protocols/resumable-upload).

* ``OPTIONS /tus/files`` → 204 ``Tus-Version: 1.0.0``, ``Tus-Extension: creation``, ``Tus-Max-Size``.
* ``POST /tus/files`` (``Tus-Resumable: 1.0.0``, ``Upload-Length: n``, optional ``Upload-Metadata``)
  → 201 ``Location: <prefix>/tus/files/{id}``. No ``Upload-Defer-Length``.
* ``HEAD /tus/files/{id}`` → 200 ``Upload-Offset``, ``Upload-Length``, ``Cache-Control: no-store``.
* ``PATCH /tus/files/{id}`` (``Content-Type: application/offset+octet-stream``, ``Upload-Offset``)
  → 204 with the new ``Upload-Offset``; 409 when ``Upload-Offset`` differs from the server's;
  415 for another content type; 400 beyond ``Upload-Length``. Bytes that arrived before a
  connection broke are kept (the offset moves with every chunk read).
* Every request but OPTIONS without ``Tus-Resumable: 1.0.0`` → 412 with ``Tus-Version``.
* Unknown upload → 404; an expired one → 410 (or 404 when expired with ``status: 404``).

Test controls (never counted): ``GET /_tus/{id}`` → ``{"offset", "length", "sha256", "complete",
"patches", "metadata"}``; ``POST /_tus/{id}/expire`` ``{"status": 410|404}``; ``POST
/_tus/{id}/offset`` ``{"offset": n}`` moves the server's offset back to ``n`` (drops the bytes
after it), so the client's next PATCH meets a 409; ``POST /_tus/control`` ``{"failPatches": [k...], "conflictPatches": [k...], "conflictOffset": n}``
makes the k-th PATCH of the namespace (1-based) answer 503 without reading its body
(``failPatches``), or first cut the upload back to ``n`` bytes so that PATCH meets a 409
(``conflictPatches``). ``"holdPatches": [k], "holdAfter": n`` makes the k-th PATCH stop reading
once it stored at least n body bytes and wait (at most 30 s) for ``POST /_tus/release``, then
close the connection without an answer (the bytes stored so far are kept); ``held`` in the
namespace's stats counts the PATCHes waiting; ``POST /_tus/held`` answers once one is waiting (at
most 20 s), with ``{"held": n}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools

from aiohttp import web

import state
from common import error_response, json_response, prefix_of, read_json, state_of

VERSION = "1.0.0"
MAX_SIZE = 1024 * 1024 * 1024
_ids = itertools.count(1)


class TusUpload:
    def __init__(self, length: int, metadata: str | None) -> None:
        self.length = length
        self.metadata = metadata
        self.data = bytearray()
        self.expired: int | None = None
        self.patches = 0


class TusState:
    def __init__(self, ns) -> None:
        self.uploads: dict[str, TusUpload] = {}
        self.patches = 0
        self.fail_patches: set[int] = set()
        self.conflict_patches: set[int] = set()
        self.conflict_offset = 0
        self.created = 0
        self.conflicts = 0
        self.hold_patches: set[int] = set()
        self.hold_after = 0
        self.held = 0
        self.release = asyncio.Event()
        self.holding = asyncio.Event()

    def stats(self) -> dict:
        return {"tus": {"created": self.created, "patches": self.patches, "conflicts": self.conflicts,
                        "held": self.held}}


state.register_bucket("tus", TusState)


def _headers(extra: dict[str, str] | None = None) -> dict[str, str]:
    out = {"Tus-Resumable": VERSION, "Cache-Control": "no-store"}
    if extra:
        out.update(extra)
    return out


def _version_error(request: web.Request) -> web.Response | None:
    if request.headers.get("Tus-Resumable") != VERSION:
        return web.Response(status=412, headers={"Tus-Version": VERSION})
    return None


def _upload(request: web.Request) -> tuple[TusUpload | None, web.Response | None]:
    bucket = state_of(request).bucket("tus")
    upload = bucket.uploads.get(request.match_info["id"])
    if upload is None:
        return None, web.Response(status=404, headers=_headers())
    if upload.expired is not None:
        return None, web.Response(status=upload.expired, headers=_headers())
    return upload, None


async def options(request: web.Request) -> web.Response:
    return web.Response(status=204, headers={"Tus-Resumable": VERSION, "Tus-Version": VERSION,
                                             "Tus-Extension": "creation", "Tus-Max-Size": str(MAX_SIZE)})


async def create(request: web.Request) -> web.Response:
    if (error := _version_error(request)) is not None:
        return error
    raw = request.headers.get("Upload-Length")
    if raw is None or not raw.isdigit():
        return web.Response(status=400, headers=_headers(), text="Upload-Length must be a non-negative integer")
    length = int(raw)
    if length > MAX_SIZE:
        return web.Response(status=413, headers=_headers())
    bucket = state_of(request).bucket("tus")
    upload_id = f"u{next(_ids)}"
    bucket.uploads[upload_id] = TusUpload(length, request.headers.get("Upload-Metadata"))
    bucket.created += 1
    location = f"{prefix_of(request)}/tus/files/{upload_id}"
    return web.Response(status=201, headers=_headers({"Location": location}))


async def head(request: web.Request) -> web.Response:
    if (error := _version_error(request)) is not None:
        return error
    upload, error = _upload(request)
    if error is not None:
        return error
    return web.Response(status=200, headers=_headers({"Upload-Offset": str(len(upload.data)),
                                                      "Upload-Length": str(upload.length)}))


async def patch(request: web.Request) -> web.Response:
    if (error := _version_error(request)) is not None:
        return error
    bucket = state_of(request).bucket("tus")
    bucket.patches += 1
    if bucket.patches in bucket.fail_patches:
        return web.Response(status=503, headers=_headers({"Retry-After": "0"}))
    upload, error = _upload(request)
    if error is not None:
        return error
    if bucket.patches in bucket.conflict_patches:
        # the server "lost" the bytes after conflictOffset: this PATCH's offset no longer matches
        del upload.data[min(bucket.conflict_offset, len(upload.data)):]
    if request.headers.get("Content-Type") != "application/offset+octet-stream":
        return web.Response(status=415, headers=_headers())
    raw = request.headers.get("Upload-Offset")
    if raw is None or not raw.isdigit():
        return web.Response(status=400, headers=_headers(), text="Upload-Offset must be a non-negative integer")
    if int(raw) != len(upload.data):
        bucket.conflicts += 1
        return web.Response(status=409, headers=_headers({"Upload-Offset": str(len(upload.data))}))
    upload.patches += 1
    number = bucket.patches
    while True:
        if number in bucket.hold_patches and len(upload.data) - int(raw) >= bucket.hold_after:
            bucket.held += 1
            bucket.holding.set()
            try:
                await asyncio.wait_for(bucket.release.wait(), timeout=30)
            except asyncio.TimeoutError:
                pass
            bucket.held -= 1
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=599)
        want = 256 * 1024
        if number in bucket.hold_patches:
            want = max(1, min(want, int(raw) + bucket.hold_after - len(upload.data)))
        chunk = await request.content.read(want)
        if not chunk:
            break
        if len(upload.data) + len(chunk) > upload.length:
            return web.Response(status=400, headers=_headers(), text="body goes past Upload-Length")
        upload.data.extend(chunk)
    return web.Response(status=204, headers=_headers({"Upload-Offset": str(len(upload.data))}))


# --------------------------------------------------------------------------- test controls

async def info(request: web.Request) -> web.Response:
    upload = state_of(request).bucket("tus").uploads.get(request.match_info["id"])
    if upload is None:
        return error_response(404, "not_found", "no such upload")
    return json_response({"offset": len(upload.data), "length": upload.length,
                          "sha256": hashlib.sha256(upload.data).hexdigest(),
                          "complete": len(upload.data) == upload.length, "patches": upload.patches,
                          "metadata": upload.metadata, "expired": upload.expired})


async def expire(request: web.Request) -> web.Response:
    upload = state_of(request).bucket("tus").uploads.get(request.match_info["id"])
    if upload is None:
        return error_response(404, "not_found", "no such upload")
    body, _ = await read_json(request)
    status = (body or {}).get("status", 410) if isinstance(body, dict) else 410
    upload.expired = 404 if status == 404 else 410
    return json_response({"expired": upload.expired})


async def move_offset(request: web.Request) -> web.Response:
    upload = state_of(request).bucket("tus").uploads.get(request.match_info["id"])
    if upload is None:
        return error_response(404, "not_found", "no such upload")
    body, error = await read_json(request)
    if error is not None:
        return error
    offset = body.get("offset") if isinstance(body, dict) else None
    if not isinstance(offset, int) or not 0 <= offset <= len(upload.data):
        return error_response(400, "bad_request", "offset must be an integer in 0...current offset")
    del upload.data[offset:]
    return json_response({"offset": offset})


async def control(request: web.Request) -> web.Response:
    body, error = await read_json(request)
    if error is not None:
        return error
    bucket = state_of(request).bucket("tus")
    body = body if isinstance(body, dict) else {}
    bucket.fail_patches = {int(k) for k in body.get("failPatches", [])}
    bucket.conflict_patches = {int(k) for k in body.get("conflictPatches", [])}
    bucket.conflict_offset = int(body.get("conflictOffset", 0))
    bucket.hold_patches = {int(k) for k in body.get("holdPatches", [])}
    bucket.hold_after = int(body.get("holdAfter", 0))
    bucket.release = asyncio.Event()
    bucket.holding = asyncio.Event()
    return json_response({"failPatches": sorted(bucket.fail_patches),
                          "conflictPatches": sorted(bucket.conflict_patches)})


async def release(request: web.Request) -> web.Response:
    bucket = state_of(request).bucket("tus")
    bucket.release.set()
    return json_response({"released": bucket.held})


async def held(request: web.Request) -> web.Response:
    bucket = state_of(request).bucket("tus")
    try:
        await asyncio.wait_for(bucket.holding.wait(), timeout=20)
    except asyncio.TimeoutError:
        pass
    return json_response({"held": bucket.held})


def setup(routes) -> None:
    routes.add("OPTIONS", "/tus/files", options)
    routes.add("POST", "/tus/files", create)
    routes.add("HEAD", "/tus/files/{id}", head)
    routes.add("PATCH", "/tus/files/{id}", patch)
    routes.get("/_tus/{id}", info)
    routes.post("/_tus/control", control)
    routes.post("/_tus/release", release)
    routes.post("/_tus/held", held)
    routes.post("/_tus/{id}/expire", expire)
    routes.post("/_tus/{id}/offset", move_offset)
