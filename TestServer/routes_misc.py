"""Misc routes: echo, status, error pages, envelopes, slow/drip, empty, dates, lossy, cookies."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http
import json
import re
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, unquote

from aiohttp import web

from common import (error_response, json_response, namespace_of, parse_float, retry_after_value,
                    unprefixed_path)

MAX_SLOW = 120.0
MAX_DRIP_BYTES = 64 * 1024 * 1024


# --------------------------------------------------------------------------- echo

def _multi(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def raw_header_pairs(request: web.Request) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("utf-8", "replace")] for k, v in request.raw_headers]


def header_dict(pairs: list[list[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in pairs:
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


_PARAM_RE = re.compile(r';\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def _header_params(value: str) -> tuple[str, dict[str, str]]:
    main = value.split(";", 1)[0].strip().lower()
    params: dict[str, str] = {}
    for key, val in _PARAM_RE.findall(value):
        val = val.strip()
        if val.startswith('"') and val.endswith('"') and len(val) >= 2:
            val = re.sub(r"\\(.)", r"\1", val[1:-1])
        key = key.lower()
        if key.endswith("*") and "''" in val:  # RFC 8187 ext-value: UTF-8''%e2%82%ac
            charset, _, encoded = val.partition("''")
            val = unquote(encoded, encoding=charset or "utf-8", errors="replace")
            key = key[:-1]
        params[key] = val
    return main, params


def parse_multipart(raw: bytes, boundary: str) -> tuple[dict[str, list[str]], dict[str, list[dict[str, Any]]]]:
    """Minimal exact multipart/form-data parser (no line-ending normalisation)."""
    form: dict[str, list[str]] = {}
    files: dict[str, list[dict[str, Any]]] = {}
    delim = b"\r\n--" + boundary.encode("latin-1")
    chunks = (b"\r\n" + raw).split(delim)
    for chunk in chunks[1:]:
        if chunk.startswith(b"--"):
            break
        eol = chunk.find(b"\r\n")
        if eol < 0:
            continue
        chunk = chunk[eol + 2:]
        head, sep, body = chunk.partition(b"\r\n\r\n")
        if not sep:  # part without headers
            head, body = b"", chunk[2:] if chunk.startswith(b"\r\n") else chunk
        headers: dict[str, str] = {}
        for line in head.split(b"\r\n"):
            if b":" in line:
                k, _, v = line.partition(b":")
                headers[k.decode("latin-1").strip().lower()] = v.decode("utf-8", "replace").strip()
        _, disp = _header_params(headers.get("content-disposition", ""))
        name = disp.get("name", "")
        if "filename" in disp:
            files.setdefault(name, []).append(_file_info(body, disp["filename"], headers.get("content-type")))
        else:
            try:
                form.setdefault(name, []).append(body.decode("utf-8"))
            except UnicodeDecodeError:
                files.setdefault(name, []).append(_file_info(body, None, headers.get("content-type")))
    return form, files


def _file_info(body: bytes, filename: str | None, ctype: str | None) -> dict[str, Any]:
    text = None
    if len(body) <= 65536:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    return {"filename": filename, "contentType": ctype, "size": len(body),
            "sha256": hashlib.sha256(body).hexdigest(), "text": text}


async def echo(request: web.Request) -> web.Response:
    raw = await request.read()
    raw_path, _, raw_query = request.raw_path.partition("?")
    pairs = raw_header_pairs(request)
    text = None
    if raw:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    parsed_json = None
    if text is not None:
        try:
            parsed_json = json.loads(text)
        except ValueError:
            parsed_json = None
    form = None
    files = None
    ctype, params = _header_params(request.headers.get("Content-Type", ""))
    if ctype == "application/x-www-form-urlencoded" and text is not None:
        form = _multi(parse_qsl(text, keep_blank_values=True))
    elif ctype == "multipart/form-data" and params.get("boundary"):
        form, files = parse_multipart(raw, params["boundary"])
    return json_response({
        "method": request.method,
        "path": request.path,
        "rawPath": raw_path,
        "routePath": unprefixed_path(request),
        "namespace": namespace_of(request),
        "rawQuery": raw_query,
        "query": _multi(parse_qsl(raw_query, keep_blank_values=True)),
        "headers": header_dict(pairs),
        "headerList": pairs,
        "httpVersion": f"{request.version.major}.{request.version.minor}",
        "body": text,
        "bodyBase64": base64.b64encode(raw).decode("ascii"),
        "bodySize": len(raw),
        "bodySha256": hashlib.sha256(raw).hexdigest(),
        "json": parsed_json,
        "form": form,
        "files": files,
    })


# --------------------------------------------------------------------------- status & error pages

async def status(request: web.Request) -> web.Response:
    try:
        code = int(request.match_info["code"])
    except ValueError:
        code = 0
    if not 200 <= code <= 599:
        return error_response(400, "bad_request", "status must be an integer in 200...599")
    headers: dict[str, str] = {}
    if request.query.get("retryAfter"):
        headers["Retry-After"] = retry_after_value(request.query["retryAfter"])
    if request.query.get("location"):
        headers["Location"] = request.query["location"]
    if code in (204, 304):
        return web.Response(status=code, headers=headers)
    try:
        reason = http.HTTPStatus(code).phrase
    except ValueError:
        reason = "Unknown"
    return json_response({"status": code, "reason": reason}, status=code, headers=headers)


NGINX_502 = """<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.24.0 (Ubuntu)</center>
</body>
</html>
<!-- a padding to disable MSIE and Chrome friendly error page -->
<!-- a padding to disable MSIE and Chrome friendly error page -->
<!-- a padding to disable MSIE and Chrome friendly error page -->
"""


async def html_502(request: web.Request) -> web.Response:
    return web.Response(status=502, body=NGINX_502.encode("utf-8"),
                        headers={"Content-Type": "text/html; charset=utf-8", "Server": "nginx/1.24.0 (Ubuntu)"})


async def envelope_error(request: web.Request) -> web.Response:
    return json_response({"ok": False, "error": {"code": "insufficient_funds", "message": "Not enough money"}})


async def envelope_ok(request: web.Request) -> web.Response:
    return json_response({"ok": True, "data": {"id": 42, "name": "Envelope", "balance": 100.25}})


# --------------------------------------------------------------------------- timing

async def slow(request: web.Request) -> web.Response:
    seconds = min(max(parse_float(request.query.get("seconds"), 2.0) or 0.0, 0.0), MAX_SLOW)
    await asyncio.sleep(seconds)
    return json_response({"slept": seconds})


async def drip(request: web.Request) -> web.StreamResponse:
    try:
        total = int(request.query.get("bytes", "10"))
    except ValueError:
        return error_response(400, "bad_request", "bytes must be an integer")
    if not 0 <= total <= MAX_DRIP_BYTES:
        return error_response(400, "bad_request", f"bytes must be in 0...{MAX_DRIP_BYTES}")
    seconds = min(max(parse_float(request.query.get("seconds"), 2.0) or 0.0, 0.0), MAX_SLOW)
    try:
        chunks = int(request.query.get("chunks", "0")) or min(max(total, 1), 10)
    except ValueError:
        chunks = min(max(total, 1), 10)
    chunks = max(1, min(chunks, max(total, 1)))
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/octet-stream"})
    if request.query.get("chunked") not in ("1", "true"):
        resp.content_length = total
    await resp.prepare(request)
    sent = 0
    try:
        for i in range(chunks):
            await asyncio.sleep(seconds / chunks)
            size = total * (i + 1) // chunks - sent
            if size:
                await resp.write(b"*" * size)
                sent += size
        await resp.write_eof()
    except ConnectionError:
        pass  # the client went away; nothing to clean up
    return resp


# --------------------------------------------------------------------------- bodies

async def empty(request: web.Request) -> web.Response:
    return web.Response(status=200, body=b"", headers={"Content-Type": "application/json"})


async def no_content(request: web.Request) -> web.Response:
    return web.Response(status=204)


DATES = {
    "fractional": "2026-05-25T22:46:27.580497Z",
    "milliseconds": "2026-05-25T22:46:27.580Z",
    "whole": "2026-05-25T22:46:27Z",
    "offset": "2026-05-25T22:46:27+02:00",
    "dateOnly": "2026-05-25",
    "epochSeconds": 1779749187,
    "epochMillis": 1779749187580,
    "epochFractional": 1779749187.580497,
}


async def dates(request: web.Request) -> web.Response:
    return json_response(DATES)


async def lossy(request: web.Request) -> web.Response:
    return json_response({"items": [{"id": 1, "name": "A"}, {"id": 2}, {"id": 3, "name": "C"}]})


async def unknown_enum(request: web.Request) -> web.Response:
    return json_response({"status": "archived_v2"})


# --------------------------------------------------------------------------- cookies

async def cookies_set(request: web.Request) -> web.Response:
    resp = json_response({"set": {k: v for k, v in request.query.items()}})
    for k, v in request.query.items():
        resp.set_cookie(k, v, path="/")
    return resp


async def cookies_delete(request: web.Request) -> web.Response:
    resp = json_response({"deleted": list(request.query.keys())})
    for k in request.query.keys():
        resp.del_cookie(k, path="/")
    return resp


async def cookies(request: web.Request) -> web.Response:
    header = request.headers.get("Cookie")
    parsed: dict[str, str] = {}
    if header:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header)
            parsed = {k: m.value for k, m in jar.items()}
        except Exception:
            for piece in header.split(";"):
                if "=" in piece:
                    k, _, v = piece.strip().partition("=")
                    parsed[k] = v
    return json_response({"cookie": header, "cookies": parsed})


def setup(routes) -> None:
    routes.any("/echo", echo)
    routes.any("/echo/{tail:.*}", echo)
    routes.any("/status/{code}", status)
    routes.any("/html-502", html_502)
    routes.get("/envelope-error", envelope_error)
    routes.get("/envelope-ok", envelope_ok)
    routes.any("/slow", slow)
    routes.get("/drip", drip)
    routes.get("/empty", empty)
    routes.any("/no-content", no_content)
    routes.get("/dates", dates)
    routes.get("/lossy", lossy)
    routes.get("/unknown-enum", unknown_enum)
    routes.get("/cookies", cookies)
    routes.get("/cookies/set", cookies_set)
    routes.get("/cookies/delete", cookies_delete)
