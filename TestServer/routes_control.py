"""Control routes: /_health, /_stats, /_reset, /_requests (never counted, never faulted)."""

from __future__ import annotations

from aiohttp import web

from common import json_response, namespace_of, state_of


async def health(request: web.Request) -> web.Response:
    return json_response({"ok": True, "server": "courier-test-server"})


async def stats(request: web.Request) -> web.Response:
    return json_response(state_of(request).stats())


async def reset(request: web.Request) -> web.Response:
    store = request.app["store"]
    if request.query.get("all") in ("1", "true"):
        store.reset_all()
        return json_response({"reset": "all"})
    ns = store.reset(namespace_of(request))
    return json_response({"reset": ns.name})


async def request_log(request: web.Request) -> web.Response:
    ns = state_of(request)
    entries = list(ns.request_log)
    path = request.query.get("path")
    if path:
        entries = [e for e in entries if e["path"] == path or e["route"] == path]
    method = request.query.get("method")
    if method:
        entries = [e for e in entries if e["method"] == method.upper()]
    return json_response({"requests": entries})


def setup(routes) -> None:
    routes.get("/_health", health)
    routes.get("/_stats", stats)
    routes.post("/_reset", reset)
    routes.get("/_requests", request_log)
