"""A cache resource behind a gate, for in-flight de-duplication tests.

GET /cache/held/{gate}/{name}?cc=&etag=...   waits until gate {gate} is open (the gates of
                                             routes_gates: GET /_gates/{gate} shows "waiting",
                                             POST /_gates/{gate}/open releases), then answers
                                             exactly like GET /cache/resource/{name} (same
                                             query parameters, same per-resource stats)

The request is counted in the resource's stats only once it passes the gate; the route itself is
counted on arrival (`GET /cache/held/{gate}/{name}` in `requests`).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

import routes_cache
import routes_gates
from common import error_response, state_of


async def held_resource(request: web.Request) -> web.Response:
    gate = state_of(request).bucket("gates").gate(request.match_info["gate"])
    gate.waiting += 1
    try:
        await asyncio.wait_for(gate.event.wait(), timeout=routes_gates.MAX_WAIT)
    except asyncio.TimeoutError:
        return error_response(504, "gate_timeout", f"Gate {gate.name!r} was not opened within {routes_gates.MAX_WAIT} s")
    finally:
        gate.waiting -= 1
    gate.passed += 1
    return await routes_cache.get_resource(request)


def setup(routes) -> None:
    routes.get("/cache/held/{gate}/{name}", held_resource)
