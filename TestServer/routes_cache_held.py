"""A cache resource behind a gate, for in-flight de-duplication tests.

GET /cache/held/{gate}/{name}?cc=&etag=...   waits until gate {gate} is open (the gates of
                                             routes_gates: GET /_gates/{gate} shows "waiting",
                                             POST /_gates/{gate}/open releases), then answers
                                             exactly like GET /cache/resource/{name} (same
                                             query parameters, same per-resource stats)

GET /cache/late/{gate}/{name}?cc=&etag=...   answers like GET /cache/resource/{name} at once (counted
                                             then), but sends that answer only once gate {gate} is
                                             open: a response generated before a write, delivered after
POST /cache/late/{gate}/{name}               bumps the resource {name} (a write to the URL the GET reads)

The request is counted in the resource's stats only once it passes the gate; the route itself is
counted on arrival (`GET /cache/held/{gate}/{name}` in `requests`).
"""

from __future__ import annotations

from aiohttp import web

import routes_cache
import routes_gates


async def held_resource(request: web.Request) -> web.Response:
    _, timed_out = await routes_gates.pass_gate(request)
    if timed_out is not None:
        return timed_out
    return await routes_cache.get_resource(request)


async def late_resource(request: web.Request) -> web.Response:
    response = await routes_cache.get_resource(request)
    _, timed_out = await routes_gates.pass_gate(request)
    return timed_out if timed_out is not None else response


async def write_late_resource(request: web.Request) -> web.Response:
    return await routes_cache.bump_resource(request)


def setup(routes) -> None:
    routes.get("/cache/held/{gate}/{name}", held_resource)
    routes.get("/cache/late/{gate}/{name}", late_resource)
    routes.post("/cache/late/{gate}/{name}", write_late_resource)
