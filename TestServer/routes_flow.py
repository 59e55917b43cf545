"""Flow control observed from the server side (CourierCurl's back-pressure and cancellation tests).

GET /flow/bytes/{n}   n bytes (byte i = i % 251) written as fast as the client takes them, in
                      64 KiB writes; each write waits for the socket to drain, so "bytesWritten"
                      is what the client's TCP window (and the kernel buffers) let through.
GET /flow/hold        the head and 1 byte, then holds the response open until the client goes
                      away (at most 60 s); the disconnect is counted.

stats: "flow": {"started", "completed", "disconnects", "bytesWritten"} — bytesWritten is the
latest /flow/bytes response's count, updated after every write.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

import state
from common import error_response, state_of

CHUNK = 251 * 256
_BLOCK = bytes(i % 251 for i in range(CHUNK))
MAX_BYTES = 8 * 1024 * 1024 * 1024


class FlowState:
    def __init__(self, ns) -> None:
        self.started = 0
        self.completed = 0
        self.disconnects = 0
        self.bytes_written = 0

    def stats(self) -> dict:
        return {"flow": {"started": self.started, "completed": self.completed, "disconnects": self.disconnects,
                         "bytesWritten": self.bytes_written}}


state.register_bucket("flow", FlowState)


async def flow_bytes(request: web.Request) -> web.StreamResponse:
    try:
        total = int(request.match_info["n"])
    except ValueError:
        total = -1
    if not 0 <= total <= MAX_BYTES:
        return error_response(400, "bad_request", f"n must be in 0...{MAX_BYTES}")
    flow: FlowState = state_of(request).bucket("flow")
    flow.started += 1
    flow.bytes_written = 0
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    resp.content_length = total
    await resp.prepare(request)
    sent = 0
    try:
        while sent < total:
            n = min(CHUNK, total - sent)
            await resp.write(_BLOCK[:n])  # waits while the transport's buffer is above its high-water mark
            sent += n
            flow.bytes_written = sent
        await resp.write_eof()
        flow.completed += 1
    except (ConnectionError, asyncio.CancelledError):
        flow.disconnects += 1
        raise
    return resp


async def flow_hold(request: web.Request) -> web.StreamResponse:
    flow: FlowState = state_of(request).bucket("flow")
    flow.started += 1
    resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    await resp.prepare(request)
    await resp.write(b"x")
    transport = request.transport
    try:
        for _ in range(6000):  # 60 s at most
            if transport is None or transport.is_closing():
                flow.disconnects += 1
                return resp
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        flow.disconnects += 1
        raise
    await resp.write_eof()
    flow.completed += 1
    return resp


def setup(routes) -> None:
    routes.get("/flow/bytes/{n}", flow_bytes)
    routes.get("/flow/hold", flow_hold)
