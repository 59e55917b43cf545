"""A raw HTTP/1.1 listener that loses requests on reused connections (resend faults).

Started next to the aiohttp app (same process, its own port on 127.0.0.1):

GET  /_resend              {"port": N}: the listener's port
GET  /_resend/arrivals?id=X   {"arrivals": [{"method", "bodyBytes", "sha256", "complete", "reused"}, ...],
                               "heads": N}: N counts the /drop requests whose head was read (the body
                               may still be arriving: a test can act while a body is in flight)

On the listener, per connection, requests are read one after the other (Content-Length or chunked
bodies, read whole). A request whose path starts with ``/drop`` is recorded, and then:
  - on the connection's first request: answered ``200`` (``{"ok": true}``), keep-alive;
  - on a later (reused, kept-alive) request: the connection is closed without any answer.
Any other path (``/warm``) is answered ``200`` and kept alive, so the next request reuses it.
The ``id`` query parameter groups arrivals; a request whose body is cut (the client went away
mid-body) is recorded with ``complete: false``.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import urllib.parse
from typing import Any

from aiohttp import web

from common import json_response

_arrivals: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
_heads: collections.Counter[str] = collections.Counter()


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> tuple[bytes, bool]:
    """The request body and whether it arrived whole."""
    body = bytearray()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            line = await reader.readline()
            if not line.endswith(b"\n"):
                return bytes(body), False
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers up to the empty line
                    trailer = await reader.readline()
                    if not trailer.endswith(b"\n"):
                        return bytes(body), False
                    if trailer in (b"\r\n", b"\n"):
                        return bytes(body), True
            try:
                body += await reader.readexactly(size)
                await reader.readexactly(2)
            except asyncio.IncompleteReadError as exc:
                body += exc.partial
                return bytes(body), False
    length = int(headers.get("content-length", "0") or "0")
    try:
        body += await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        body += exc.partial
        return bytes(body), False
    return bytes(body), True


def _answer(writer: asyncio.StreamWriter, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                 + str(len(data)).encode() + b"\r\n\r\n" + data)


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    served = 0
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            if urllib.parse.urlsplit(target).path.startswith("/drop"):
                _heads[urllib.parse.parse_qs(urllib.parse.urlsplit(target).query).get("id", [""])[0]] += 1
            body, complete = await _read_body(reader, headers)
            url = urllib.parse.urlsplit(target)
            query = urllib.parse.parse_qs(url.query)
            reused = served > 0
            if url.path.startswith("/drop"):
                request_id = query.get("id", [""])[0]
                _arrivals[request_id].append({
                    "method": method, "bodyBytes": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                    "complete": complete, "reused": reused,
                    "contentLength": headers.get("content-length"),
                    "chunked": "chunked" in headers.get("transfer-encoding", "").lower(),
                })
                if not complete:
                    break
                if reused:
                    break  # read the whole request, then close without answering
                _answer(writer, {"ok": True, "bodyBytes": len(body)})
            else:
                if not complete:
                    break
                _answer(writer, {"ok": True})
            await writer.drain()
            served += 1
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def _start(app: web.Application) -> None:
    server = await asyncio.start_server(_connection, "127.0.0.1", 0)
    app["resend_server"] = server
    app["resend_port"] = server.sockets[0].getsockname()[1]


async def _stop(app: web.Application) -> None:
    server = app.get("resend_server")
    if server is not None:
        server.close()


async def port(request: web.Request) -> web.Response:
    return json_response({"port": request.app["resend_port"]})


async def arrivals(request: web.Request) -> web.Response:
    request_id = request.query.get("id", "")
    return json_response({"arrivals": _arrivals.get(request_id, []), "heads": _heads.get(request_id, 0)})


def setup(routes) -> None:
    routes.app.on_startup.append(_start)
    routes.app.on_cleanup.append(_stop)
    routes.get("/_resend", port)
    routes.get("/_resend/arrivals", arrivals)
