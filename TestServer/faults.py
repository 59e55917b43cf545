"""Fault injection: per-namespace queues of faults consumed by matching requests.

POST   /_faults   {"path": "/orders", "method": "POST", "faults": [ ... ]}   append to the plan
GET    /_faults   the remaining plan and what was served
DELETE /_faults   clear the plan

Fault objects (consumed one per matching request, in order):
  {"status": 503, "retryAfter": "2", "headers": {...}, "body": ...}  answer with that status
  {"action": "delay", "seconds": 1}          wait, then handle normally
  {"action": "drop"}                         read the request, close the connection, no processing
  {"action": "drop_after_store"}             handle normally (state is changed), then close the
                                             connection before writing any response byte
  {"action": "reset"}                        like drop, but with a TCP RST (SO_LINGER 0)
  {"action": "truncate", "bytes": 10}        handle normally, send status + headers + only the
                                             first N body bytes (Content-Length stays the full size), close
See README.md for the details.
"""

from __future__ import annotations

import asyncio
import collections
import json
import socket
import struct
import time
from typing import Any

from aiohttp import web

import state
from common import (error_response, json_response, read_json, retry_after_value, route_template,
                    state_of, unprefixed_path)

ACTIONS = {"delay", "drop", "drop_after_store", "reset", "truncate"}
# While one of these is pending in a namespace, every response of that namespace carries
# "Connection: close". libcurl (and so URLSession on Linux) silently re-sends a request when a
# *reused* connection dies before any response byte - and for POSTs it re-sends without the
# body, then hangs until its timeout. A fresh connection per request makes the drop visible.
CLOSING_ACTIONS = {"drop", "drop_after_store", "reset"}


class FaultPlan:
    def __init__(self, method: str, path: str) -> None:
        self.method = method
        self.path = path
        self.queue: collections.deque[dict[str, Any]] = collections.deque()

    def matches(self, method: str, path: str, template: str | None) -> bool:
        if self.method not in ("*", method):
            return False
        if self.path.endswith("*"):
            return path.startswith(self.path[:-1])
        return self.path == path or (template is not None and self.path == template)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "faults": list(self.queue)}


class FaultsState:
    def __init__(self, ns: state.Namespace) -> None:
        self.plans: list[FaultPlan] = []
        self.served: list[dict[str, Any]] = []

    def add(self, method: str, path: str, faults: list[dict[str, Any]]) -> None:
        for plan in self.plans:
            if plan.method == method and plan.path == path:
                break
        else:
            plan = FaultPlan(method, path)
            self.plans.append(plan)
        plan.queue.extend(faults)

    def take(self, method: str, path: str, template: str | None) -> dict[str, Any] | None:
        for plan in self.plans:
            if plan.queue and plan.matches(method, path, template):
                fault = plan.queue.popleft()
                self.served.append({"method": method, "path": path, "fault": fault, "at": time.time()})
                return fault
        return None

    def has_pending_drops(self) -> bool:
        return any(f.get("action") in CLOSING_ACTIONS for p in self.plans for f in p.queue)

    def remaining(self) -> int:
        return sum(len(p.queue) for p in self.plans)

    def stats(self) -> dict[str, Any]:
        return {"faults": {"served": len(self.served), "remaining": self.remaining(),
                           "log": [{"method": s["method"], "path": s["path"], "fault": s["fault"]}
                                   for s in self.served]}}


state.register_bucket("faults", FaultsState)


def _validate(fault: Any) -> str | None:
    if not isinstance(fault, dict):
        return "each fault must be an object"
    if "action" in fault:
        if fault["action"] not in ACTIONS:
            return f"unknown action {fault['action']!r}; expected one of {sorted(ACTIONS)}"
        return None
    status = fault.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status <= 599:
        return "a fault needs \"action\" or an integer \"status\" in 200...599"
    return None


async def post_faults(request: web.Request) -> web.Response:
    body, err = await read_json(request)
    if err:
        return err
    specs = body if isinstance(body, list) else [body]
    fb = state_of(request).bucket("faults")
    for spec in specs:
        if not isinstance(spec, dict) or not isinstance(spec.get("path"), str) \
                or not isinstance(spec.get("faults"), list):
            return error_response(400, "bad_request",
                                  'expected {"path": "/x", "method": "GET", "faults": [...]}')
        for fault in spec["faults"]:
            problem = _validate(fault)
            if problem:
                return error_response(400, "bad_request", problem)
    for spec in specs:
        path = spec["path"].split("?", 1)[0]
        fb.add(str(spec.get("method") or "*").upper(), path, spec["faults"])
    return json_response({"plans": [p.to_json() for p in fb.plans], "remaining": fb.remaining()})


async def get_faults(request: web.Request) -> web.Response:
    fb = state_of(request).bucket("faults")
    return json_response({"plans": [p.to_json() for p in fb.plans], "remaining": fb.remaining(),
                          "served": fb.stats()["faults"]["log"]})


async def delete_faults(request: web.Request) -> web.Response:
    fb = state_of(request).bucket("faults")
    fb.plans.clear()
    return json_response({"plans": [], "remaining": 0})


def setup(routes) -> None:
    routes.post("/_faults", post_faults)
    routes.get("/_faults", get_faults)
    routes.delete("/_faults", delete_faults)


# --------------------------------------------------------------------------- middleware

class _Dropped(web.Response):
    """Placeholder returned after the transport was closed: aiohttp fails to write it
    (the transport is closing) and treats that as a client disconnect, quietly."""


def _close(request: web.Request, rst: bool = False) -> web.Response:
    transport = request.transport
    if transport is not None:
        if rst:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
        transport.close()
    request["fault_dropped"] = True
    return _Dropped(status=599)


async def _truncate(request: web.Request, resp: web.StreamResponse, keep: int) -> web.StreamResponse:
    body = getattr(resp, "body", None)
    if not isinstance(body, (bytes, bytearray)):
        body = b""
    keep = max(0, min(keep, max(len(body) - 1, 0)))
    out = web.StreamResponse(status=resp.status, headers=resp.headers)
    out.content_length = max(len(body), keep + 1)
    await out.prepare(request)
    if keep:
        await out.write(bytes(body[:keep]))
    await asyncio.sleep(0.05)
    return _close(request)


def _status_response(fault: dict[str, Any]) -> web.Response:
    status = fault["status"]
    headers = {str(k): str(v) for k, v in (fault.get("headers") or {}).items()}
    if fault.get("retryAfter") is not None:
        headers["Retry-After"] = retry_after_value(fault["retryAfter"])
    if status in (204, 304):
        return web.Response(status=status, headers=headers)
    if "body" in fault:
        body = fault["body"]
        if isinstance(body, str):
            ctype = fault.get("contentType", "text/plain; charset=utf-8")
            return web.Response(status=status, body=body.encode("utf-8"), headers={**headers, "Content-Type": ctype})
        return web.Response(status=status, body=json.dumps(body).encode("utf-8"),
                            headers={**headers, "Content-Type": fault.get("contentType", "application/json; charset=utf-8")})
    return error_response(status, "injected_fault", f"Injected fault: HTTP {status}", headers=headers)


@web.middleware
async def fault_middleware(request: web.Request, handler):
    resp = await _apply_faults(request, handler)
    if not request.get("fault_dropped") and state_of(request).bucket("faults").has_pending_drops():
        resp.force_close()
    return resp


async def _apply_faults(request: web.Request, handler):
    path = unprefixed_path(request)
    if path.startswith("/_"):
        return await handler(request)
    fb = state_of(request).bucket("faults")
    fault = fb.take(request.method, path, route_template(request))
    if fault is None:
        return await handler(request)
    request["fault"] = fault
    action = fault.get("action")
    if action is None:
        await request.read()
        return _status_response(fault)
    if action == "delay":
        await asyncio.sleep(float(fault.get("seconds", 1)))
        return await handler(request)
    if action in ("drop", "reset"):
        await request.read()
        return _close(request, rst=(action == "reset"))
    if action == "drop_after_store":
        try:
            await handler(request)
        except web.HTTPException:
            pass
        return _close(request)
    if action == "truncate":
        resp = await handler(request)
        return await _truncate(request, resp, int(fault.get("bytes", 10)))
    return await handler(request)
