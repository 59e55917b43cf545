"""HTTP semantics routes (issue 9): raw bytes with any Content-Type, several Set-Cookie fields,
authentication challenges, and path segments as the server received them.

GET|POST /bytes?hex=...&type=...&status=...   the body is the hex-decoded bytes
GET      /set-cookies                         four Set-Cookie fields (one with an Expires date)
GET      /challenge?www=...&status=401        one WWW-Authenticate field per ``www`` parameter
GET      /segments/{tail}                     the raw path's segments, each percent-decoded
"""

from __future__ import annotations

import binascii
from urllib.parse import unquote

from aiohttp import web

from common import error_response, json_response, unprefixed_path

SET_COOKIES = [
    "session=abc123; Path=/; HttpOnly",
    "theme=dark; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/",
    "lang=en-US; Max-Age=3600",
    "tracking=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
]


def _status(request: web.Request, default: int) -> int:
    try:
        code = int(request.query.get("status", default))
    except ValueError:
        return default
    return code if 200 <= code <= 599 else default


async def raw_bytes(request: web.Request) -> web.Response:
    try:
        body = binascii.unhexlify(request.query.get("hex", ""))
    except (binascii.Error, ValueError):
        return error_response(400, "bad_request", "hex must be an even number of hex digits")
    response = web.Response(status=_status(request, 200), body=body)
    if "type" in request.query:
        response.headers["Content-Type"] = request.query["type"]
    return response


async def set_cookies(request: web.Request) -> web.Response:
    response = json_response({"cookies": SET_COOKIES})
    for cookie in SET_COOKIES:
        response.headers.add("Set-Cookie", cookie)
    response.headers.add("X-List", "one")
    response.headers.add("X-List", "two")
    return response


async def challenge(request: web.Request) -> web.Response:
    status = _status(request, 401)
    response = json_response({"error": "challenge", "status": status}, status=status)
    for value in request.query.getall("www", []):
        response.headers.add("WWW-Authenticate", value)
    return response


async def segments(request: web.Request) -> web.Response:
    raw_path = request.raw_path.partition("?")[0]
    marker = "/segments/"
    tail = raw_path[raw_path.index(marker) + len(marker):] if marker in raw_path else ""
    return json_response({"rawPath": raw_path, "route": unprefixed_path(request),
                          "segments": [unquote(part, errors="strict") for part in tail.split("/")]})


def setup(routes) -> None:
    routes.get("/bytes", raw_bytes)
    routes.post("/bytes", raw_bytes)
    routes.get("/set-cookies", set_cookies)
    routes.get("/challenge", challenge)
    routes.get("/segments/{tail:.*}", segments)
