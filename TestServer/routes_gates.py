"""Gates: hold a request inside the server until the test opens the gate.

Lets a test order events across client and server without sleeping: a request is known to be
"in flight" (counted and waiting at the gate, its Authorization already sent) while the test does
something else, and it is only processed once the test says so.

GET  /protected/held/{gate}   waits until {gate} is open (max 30 s, then 504 gate_timeout), then
                              behaves like GET /me (bearer token checked *after* the wait)
POST /held/{gate}             waits until {gate} is open (max 30 s, then 504), then answers 200
                              {"gate"} (no auth: a request with a body held in flight)
GET  /_gates/{gate}           {"name", "open", "waiting", "passed"}
POST /_gates/{gate}/open      opens the gate: every waiting and later request passes
POST /_gates/{gate}/close     closes it again
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

import routes_auth
import state
from common import error_response, json_response, state_of

MAX_WAIT = 30.0


class Gate:
    def __init__(self, name: str) -> None:
        self.name = name
        self.event = asyncio.Event()
        self.waiting = 0
        self.passed = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "open": self.event.is_set(), "waiting": self.waiting, "passed": self.passed}


class GatesState:
    def __init__(self, ns: state.Namespace) -> None:
        self.gates: dict[str, Gate] = {}

    def gate(self, name: str) -> Gate:
        gate = self.gates.get(name)
        if gate is None:
            gate = self.gates[name] = Gate(name)
        return gate


state.register_bucket("gates", GatesState)


async def pass_gate(request: web.Request, name: str | None = None) -> tuple[Gate, web.Response | None]:
    """Waits at gate `name` (default: the route's {gate}) until it opens; the 504 to answer when
    it did not in time."""
    gate = state_of(request).bucket("gates").gate(name if name is not None else request.match_info["gate"])
    gate.waiting += 1
    try:
        await asyncio.wait_for(gate.event.wait(), timeout=MAX_WAIT)
    except asyncio.TimeoutError:
        return gate, error_response(504, "gate_timeout", f"Gate {gate.name!r} was not opened within {MAX_WAIT} s")
    finally:
        gate.waiting -= 1
    gate.passed += 1
    return gate, None


async def held_me(request: web.Request) -> web.Response:
    gate, timed_out = await pass_gate(request)
    if timed_out:
        return timed_out
    claims, err = routes_auth.authenticate(request)
    if err:
        return err
    return json_response({"username": claims.get("sub"), **routes_auth._auth_info(claims), "gate": gate.name},
                         headers=routes_auth._auth_headers(claims))


async def held_post(request: web.Request) -> web.Response:
    await request.read()
    gate, timed_out = await pass_gate(request)
    return timed_out or json_response({"gate": gate.name})


async def show_gate(request: web.Request) -> web.Response:
    return json_response(state_of(request).bucket("gates").gate(request.match_info["gate"]).to_json())


async def open_gate(request: web.Request) -> web.Response:
    gate = state_of(request).bucket("gates").gate(request.match_info["gate"])
    gate.event.set()
    return json_response(gate.to_json())


async def close_gate(request: web.Request) -> web.Response:
    gate = state_of(request).bucket("gates").gate(request.match_info["gate"])
    gate.event.clear()
    return json_response(gate.to_json())


def setup(routes) -> None:
    routes.get("/protected/held/{gate}", held_me)
    routes.post("/held/{gate}", held_post)
    routes.get("/_gates/{gate}", show_gate)
    routes.post("/_gates/{gate}/open", open_gate)
    routes.post("/_gates/{gate}/close", close_gate)
