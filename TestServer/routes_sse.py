"""Server-Sent Events feeds (WHATWG HTML §9.2) with scripted chunk splits, drops, 204, 401-once.

GET  /sse/{feed}                 a text/event-stream of events with ids 1..count (see README)
POST /sse/{feed}                 the same feed asked with POST (a streamed answer to a write); the
                                 body is read and counted (``methods``, ``bodies``)
GET  /_sse/{feed}                the feed's counters: connections, Last-Event-ID values received, ...
POST /_sse/{feed}/restart        drops every open connection of the feed (a simulated server restart)

A connection resumes after the ``Last-Event-ID`` it sends; once the client has every event
(``Last-Event-ID`` >= count) the feed answers 204, which tells an EventSource to stop reconnecting.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

import routes_auth
import state
from common import error_response, json_response, parse_float, state_of

BOM = b"\xef\xbb\xbf"
MAX_COUNT = 100_000
HOLD_LIMIT = 60.0  # seconds an `end=hold` connection is kept open at most
TICK = 0.02  # seconds between checks for a client that went away


class Feed:
    def __init__(self, name: str) -> None:
        self.name = name
        self.connections = 0
        self.last_event_ids: list[str | None] = []  # per connection, None when the header was absent
        self.statuses: list[int] = []  # per connection
        self.events_sent = 0
        self.drops = 0  # connections the server dropped mid-stream (dropAfter, restart)
        self.clean_ends = 0  # connections that ended with the last chunk
        self.disconnects = 0  # connections the client closed while the server was streaming
        self.open = 0
        self.rejected_first = False
        self.restarts = 0
        self.live: dict[int, web.Request] = {}  # open connections by id()
        self.methods: list[str] = []  # per connection
        self.bodies: list[int] = []  # per connection: request body bytes read

    def to_json(self) -> dict[str, Any]:
        return {"feed": self.name, "connections": self.connections, "lastEventIds": self.last_event_ids,
                "statuses": self.statuses, "eventsSent": self.events_sent, "drops": self.drops,
                "cleanEnds": self.clean_ends, "disconnects": self.disconnects, "open": self.open,
                "restarts": self.restarts, "methods": self.methods, "bodies": self.bodies}


class SSEState:
    def __init__(self, ns: state.Namespace) -> None:
        self.feeds: dict[str, Feed] = {}

    def feed(self, name: str) -> Feed:
        feed = self.feeds.get(name)
        if feed is None:
            feed = self.feeds[name] = Feed(name)
        return feed

    def stats(self) -> dict[str, Any]:
        return {"sse": {name: feed.to_json() for name, feed in self.feeds.items()}}


state.register_bucket("sse", SSEState)


def _int(value: str | None, default: int, lo: int, hi: int) -> int:
    try:
        return max(lo, min(hi, int(value))) if value not in (None, "") else default
    except ValueError:
        return default


def event_bytes(seq: int) -> list[bytes]:
    """Event ``seq`` as pieces to write separately (scripted splits): line ends rotate
    LF / CRLF / CR, every CRLF is split between its CR and its LF, every other event is
    preceded by a comment, every fourth has two data lines."""
    end = [b"\n", b"\r\n", b"\r"][seq % 3]
    lines = [b"id: %d" % seq, b"event: tick", b"data: event %d" % seq]
    if seq % 4 == 0:
        lines.append(b"data:  second line")  # one leading space is stripped, the other kept
    text = b"".join(line + end for line in lines) + end
    if seq % 2 == 0:
        text = b": comment before %d" % seq + end + text
    if end != b"\r\n":
        return [text[:5], text[5:]]  # split inside the comment or the id field
    pieces: list[bytes] = []
    start = 0
    for i in range(len(text) - 1):
        if text[i:i + 2] == b"\r\n":
            pieces.append(text[start:i + 1])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def expected_data(seq: int) -> str:
    """The data a client must see for event ``seq`` (documented for tests)."""
    return f"event {seq}\n second line" if seq % 4 == 0 else f"event {seq}"


async def _write(request: web.Request, resp: web.StreamResponse, piece: bytes, split_delay: float) -> bool:
    """Writes one piece; False when the client is gone."""
    transport = request.transport
    if transport is None or transport.is_closing():
        return False
    try:
        await resp.write(piece)
    except (ConnectionError, RuntimeError):
        return False
    if split_delay:
        await asyncio.sleep(split_delay)
    return True


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _wait(request: web.Request, seconds: float) -> bool:
    """Sleeps up to ``seconds``; False as soon as the connection closes (client or restart)."""
    deadline = time.monotonic() + seconds
    while True:
        if _client_gone(request) or request.get("sse_restarted"):
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        await asyncio.sleep(min(TICK, remaining))


def _drop(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.close()


async def feed(request: web.Request) -> web.StreamResponse:
    feed = state_of(request).bucket("sse").feed(request.match_info["feed"])
    q = request.query
    feed.connections += 1
    connection = feed.connections
    last_id = request.headers.get("Last-Event-ID")
    feed.last_event_ids.append(last_id)
    feed.methods.append(request.method)
    feed.bodies.append(len(await request.read()) if request.can_read_body else 0)

    def answer(resp: web.StreamResponse) -> web.StreamResponse:
        feed.statuses.append(resp.status)
        return resp

    if q.get("rejectFirst") in ("1", "true") and not feed.rejected_first:
        feed.rejected_first = True
        return answer(web.json_response(
            {"error": "invalid_token", "error_description": "Rejected once by the SSE feed"}, status=401,
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'}))
    if q.get("auth") in ("1", "true") or q.get("rejectFirst") in ("1", "true"):
        _, err = routes_auth.authenticate(request)
        if err:
            return answer(err)
    status = _int(q.get("status"), 200, 100, 599)
    if status == 204:
        return answer(web.Response(status=204))
    if 200 < status < 300:
        # A 2xx that is not 200, labelled and shaped as an event stream (a 205 has no body):
        # a client must fail the feed for the status alone (WHATWG HTML §9.2.3).
        body = b"" if status == 205 else b"id: 1\ndata: not a feed\n\n"
        return answer(web.Response(status=status, body=body, headers={"Content-Type": "text/event-stream"}))
    if status != 200:
        return answer(error_response(status, "sse_status", f"The feed answered {status} as asked"))

    count = _int(q.get("count"), 5, 0, MAX_COUNT)
    resume = _int(last_id, 0, 0, MAX_COUNT) if last_id else 0
    if count and resume >= count:
        return answer(web.Response(status=204))  # the client has everything: stop reconnecting

    content_type = q.get("contentType")
    if content_type:
        return answer(web.Response(status=200, body=b"<html><body>Sign in to the Wi-Fi</body></html>",
                                   headers={"Content-Type": content_type}))

    interval = min(max(parse_float(q.get("interval"), 0.0) or 0.0, 0.0), 10.0)
    split = q.get("split", "scripted") != "none"
    split_delay = 0.002 if split else 0.0
    drop_after = _int(q.get("dropAfter"), 0, 0, MAX_COUNT)
    drops = _int(q.get("drops"), 1, 0, MAX_COUNT)
    retry = q.get("retry")
    end = q.get("end", "close")
    # After the events: `heartbeats` blank lines (one LF byte, which dispatches nothing), one every
    # `heartbeat` seconds, then the clean end: a stream that is alive, though below 1 byte per second.
    heartbeat = min(max(parse_float(q.get("heartbeat"), 0.0) or 0.0, 0.0), 10.0)
    heartbeats = _int(q.get("heartbeats"), 0, 0, 100)

    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream; charset=utf-8",
                                                  "Cache-Control": "no-store"})
    await resp.prepare(request)
    answer(resp)
    feed.open += 1
    feed.live[id(request)] = request
    outcome = "disconnect"
    try:
        head = [BOM[:1], BOM[1:] + b": courier sse feed " + feed.name.encode() + b"\r", b"\n"]
        if retry and retry.isdigit():
            head.append(b"retry: " + retry.encode() + b"\r\n\r\n")
        for piece in head if split else [b"".join(head)]:
            if not await _write(request, resp, piece, split_delay):
                return resp
        sent = 0
        seq = resume
        while count == 0 or seq < count:
            if interval and not await _wait(request, interval):
                outcome = "restart" if request.get("sse_restarted") else "disconnect"
                return resp
            seq += 1
            pieces = event_bytes(seq)
            for piece in pieces if split else [b"".join(pieces)]:
                if not await _write(request, resp, piece, split_delay):
                    outcome = "restart" if request.get("sse_restarted") else "disconnect"
                    return resp
            sent += 1
            feed.events_sent += 1
            if drop_after and sent >= drop_after and connection <= drops:
                outcome = "drop"
                await asyncio.sleep(0.02)  # let the last event reach the client first
                _drop(request)
                return resp
        for _ in range(heartbeats if heartbeat else 0):
            if not await _wait(request, heartbeat) or not await _write(request, resp, b"\n", 0):
                outcome = "restart" if request.get("sse_restarted") else "disconnect"
                return resp
        if end == "hold":
            waited = 0.0
            while waited < HOLD_LIMIT:
                if not await _write(request, resp, b": keep-alive\n", 0) or not await _wait(request, 0.5):
                    outcome = "restart" if request.get("sse_restarted") else "disconnect"
                    return resp
                waited += 0.5
        await resp.write_eof()
        outcome = "clean"
        return resp
    except ConnectionError:
        return resp
    finally:
        feed.open -= 1
        feed.live.pop(id(request), None)
        if outcome == "clean":
            feed.clean_ends += 1
        elif outcome in ("drop", "restart"):
            feed.drops += 1
        else:
            feed.disconnects += 1


async def show(request: web.Request) -> web.Response:
    return json_response(state_of(request).bucket("sse").feed(request.match_info["feed"]).to_json())


async def restart(request: web.Request) -> web.Response:
    feed = state_of(request).bucket("sse").feed(request.match_info["feed"])
    closed = 0
    for live in list(feed.live.values()):
        live["sse_restarted"] = True
        _drop(live)
        closed += 1
    feed.restarts += 1
    return json_response({"feed": feed.name, "closed": closed})


def setup(routes) -> None:
    routes.get("/sse/{feed}", feed)
    routes.post("/sse/{feed}", feed)
    routes.get("/_sse/{feed}", show)
    routes.post("/_sse/{feed}/restart", restart)
