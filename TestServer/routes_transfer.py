"""Large bodies: /upload (streams the request body) and /download/{bytes} (with Range support).

Download content is deterministic: byte i of the body is ``i % 251`` so any range can be
checked by the client without the server sending a checksum.
"""

from __future__ import annotations

import asyncio
import hashlib

from aiohttp import web

from common import error_response, http_date, json_response, parse_byte_range, parse_float, parse_http_date

MAX_DOWNLOAD = 4 * 1024 * 1024 * 1024
CHUNK = 251 * 256  # 64256 bytes, a multiple of the pattern period
_BLOCK = bytes(i % 251 for i in range(CHUNK))
LAST_MODIFIED = 1767225600.0  # fixed: 2026-01-01


def pattern(start: int, length: int) -> bytes:
    """Bytes [start, start+length) of the download pattern."""
    offset = start % 251
    out = bytearray()
    while len(out) < length:
        take = min(length - len(out), CHUNK - offset)
        out += _BLOCK[offset:offset + take]
        offset = 0
    return bytes(out)


async def upload(request: web.Request) -> web.Response:
    digest = hashlib.sha256()
    size = 0
    chunks = 0
    async for chunk in request.content.iter_any():
        digest.update(chunk)
        size += len(chunk)
        chunks += 1
    return json_response({"method": request.method, "bytes": size, "sha256": digest.hexdigest(),
                          "contentType": request.headers.get("Content-Type"),
                          "contentLength": request.headers.get("Content-Length"),
                          "transferEncoding": request.headers.get("Transfer-Encoding"),
                          "chunksReceived": chunks})


async def download(request: web.Request) -> web.StreamResponse:
    try:
        total = int(request.match_info["bytes"])
    except ValueError:
        total = -1
    if not 0 <= total <= MAX_DOWNLOAD:
        return error_response(400, "bad_request", f"bytes must be in 0...{MAX_DOWNLOAD}")
    chunk_delay = min(max(parse_float(request.query.get("chunkDelay"), 0.0) or 0.0, 0.0), 10.0)
    etag = f'"dl-{total}"'
    headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes", "ETag": etag,
               "Last-Modified": http_date(LAST_MODIFIED)}
    start, end = 0, total - 1
    status = 200
    range_header = request.headers.get("Range")
    if range_header is not None:
        if_range = request.headers.get("If-Range")
        honour = True
        if if_range is not None:
            if if_range.startswith('"') or if_range.startswith("W/"):
                honour = if_range == etag  # strong comparison
            else:
                since = parse_http_date(if_range)
                honour = since is not None and since >= LAST_MODIFIED
        if honour:
            parsed = parse_byte_range(range_header, total)
            if parsed == "416":
                return web.Response(status=416, headers={"Content-Range": f"bytes */{total}"})
            if isinstance(parsed, tuple):
                start, end = parsed
                status = 206
                headers["Content-Range"] = f"bytes {start}-{end}/{total}"
    length = max(0, end - start + 1)
    resp = web.StreamResponse(status=status, headers=headers)
    resp.content_length = length
    await resp.prepare(request)
    if request.method == "HEAD":
        return resp
    pos = start
    try:
        while pos <= end:
            n = min(CHUNK, end - pos + 1)
            await resp.write(pattern(pos, n))
            pos += n
            if chunk_delay:
                await asyncio.sleep(chunk_delay)
        await resp.write_eof()
    except ConnectionError:
        pass
    return resp


def setup(routes) -> None:
    routes.add("POST", "/upload", upload)
    routes.add("PUT", "/upload", upload)
    routes.get("/download/{bytes}", download)
