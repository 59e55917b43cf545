"""Fleet-safety routes: a host that keeps failing, for retry-budget and circuit-breaker tests.

GET /fleet/failing    always 503 (no Retry-After): a backend in an outage. The per-namespace
                      request counter (/_stats, key "GET /fleet/failing") counts every attempt,
                      so a test proves how many retries a burst of calls really sent.
"""

from __future__ import annotations

from aiohttp import web

from common import error_response


async def failing(request: web.Request) -> web.Response:
    return error_response(503, "unavailable", "the backend is down")


def setup(routes) -> None:
    routes.get("/fleet/failing", failing)
