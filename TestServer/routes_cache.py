"""HTTP caching test surface (RFC 9111 / RFC 9110 conditional requests).

GET  /cache/resource/{name}?cc=&etag=&lastModified=&vary=&expires=&age=&cc304=
POST /cache/resource/{name}/bump
POST /cache/resource/{name}/fail?status=503&count=N
GET  /cache/collection            (Cache-Control: max-age=60)
POST /cache/collection            (201 + Location; ?seeOther=1: 303 + Location of the list, Post/Redirect/Get)
GET  /cache/collection/{id}
"""

from __future__ import annotations

import re
import time
from typing import Any

from aiohttp import web

import state
from common import error_response, http_date, iso_ms, json_response, parse_http_date, prefix_of, read_json, state_of


class Resource:
    def __init__(self, name: str) -> None:
        self.name = name
        self.version = 1
        # whole seconds, a minute in the past, so If-Modified-Since comparisons are exact
        self.last_modified = float(int(time.time()) - 60)
        self.serial = 0
        self.requests = 0
        self.conditional = 0
        self.not_modified = 0
        self.full = 0
        self.failed = 0
        self.last_inm: str | None = None
        self.last_ims: str | None = None
        self.fail_status = 0
        self.fail_count = 0

    def bump(self) -> None:
        self.version += 1
        self.last_modified = float(max(int(time.time()), int(self.last_modified) + 1))

    def stats(self) -> dict[str, Any]:
        return {"version": self.version, "requests": self.requests, "conditionalRequests": self.conditional,
                "notModified": self.not_modified, "fullResponses": self.full, "failures": self.failed,
                "lastIfNoneMatch": self.last_inm, "lastIfModifiedSince": self.last_ims}


class CacheState:
    def __init__(self, ns: state.Namespace) -> None:
        self.resources: dict[str, Resource] = {}
        self.collection: list[dict[str, Any]] = []
        self.collection_gets = 0
        self.collection_posts = 0
        self.collection_version = 1

    def resource(self, name: str) -> Resource:
        res = self.resources.get(name)
        if res is None:
            res = self.resources[name] = Resource(name)
        return res

    def stats(self) -> dict[str, Any]:
        return {
            "cache": {name: r.stats() for name, r in self.resources.items()},
            "conditionalRequests": {name: r.conditional for name, r in self.resources.items()},
            "cacheCollection": {"gets": self.collection_gets, "posts": self.collection_posts,
                                "size": len(self.collection), "version": self.collection_version},
        }


state.register_bucket("cache", CacheState)

_ETAG_RE = re.compile(r'\s*((?:W/)?"[^"]*"|\*)\s*(?:,|$)')


def _etag_list(header: str) -> list[str]:
    return [m.group(1) for m in _ETAG_RE.finditer(header) if m.group(1)]


def _weak_match(a: str, b: str) -> bool:
    return a.removeprefix("W/") == b.removeprefix("W/")


def _expires_value(spec: str) -> str:
    """``+N`` / ``-N`` / ``N`` -> HTTP-date N seconds from now; anything else passes through."""
    if re.fullmatch(r"[+-]?\d+", spec.strip()):
        return http_date(time.time() + int(spec))
    return spec


def _validator_headers(request: web.Request, res: Resource) -> dict[str, str]:
    q = request.query
    headers: dict[str, str] = {}
    offset = q.get("dateOffset", "")
    headers["Date"] = http_date(time.time() + (int(offset) if re.fullmatch(r"[+-]?\d+", offset) else 0))
    if q.get("cc"):
        headers["Cache-Control"] = q["cc"]
    etag_mode = q.get("etag", "")
    if etag_mode in ("1", "true", "strong"):
        headers["ETag"] = f'"v{res.version}"'
    elif etag_mode == "weak":
        headers["ETag"] = f'W/"v{res.version}"'
    if q.get("lastModified") in ("1", "true"):
        headers["Last-Modified"] = http_date(res.last_modified)
    if q.get("vary"):
        headers["Vary"] = q["vary"]
    if q.get("expires"):
        headers["Expires"] = _expires_value(q["expires"])
    if q.get("age"):
        headers["Age"] = q["age"]
    return headers


async def get_resource(request: web.Request) -> web.Response:
    bucket: CacheState = state_of(request).bucket("cache")
    res = bucket.resource(request.match_info["name"])
    res.requests += 1
    inm = request.headers.get("If-None-Match")
    ims = request.headers.get("If-Modified-Since")
    if inm is not None or ims is not None:
        res.conditional += 1
    if inm is not None:
        res.last_inm = inm
    if ims is not None:
        res.last_ims = ims
    if res.fail_count > 0:
        res.fail_count -= 1
        res.failed += 1
        return error_response(res.fail_status, "injected_failure", f"Resource failing with {res.fail_status}",
                              headers={"Date": http_date()})

    headers = _validator_headers(request, res)
    current = f'"v{res.version}"'
    not_modified = False
    if inm is not None:
        tags = _etag_list(inm)
        not_modified = any(t == "*" or _weak_match(t, current) for t in tags)
    elif ims is not None and request.method in ("GET", "HEAD"):
        since = parse_http_date(ims)
        not_modified = since is not None and res.last_modified <= since
    if not_modified:
        res.not_modified += 1
        if request.query.get("cc304"):
            headers["Cache-Control"] = request.query["cc304"]  # the 304's own Cache-Control
        return web.Response(status=304, headers=headers)

    res.full += 1
    res.serial += 1
    body = {"name": res.name, "version": res.version, "lang": request.headers.get("Accept-Language"),
            "serial": res.serial, "servedAt": iso_ms(time.time())}
    return json_response(body, headers=headers)


async def bump_resource(request: web.Request) -> web.Response:
    res = state_of(request).bucket("cache").resource(request.match_info["name"])
    res.bump()
    return json_response({"name": res.name, "version": res.version, "etag": f'"v{res.version}"',
                          "lastModified": http_date(res.last_modified)})


async def fail_resource(request: web.Request) -> web.Response:
    res = state_of(request).bucket("cache").resource(request.match_info["name"])
    try:
        status = int(request.query.get("status", "503"))
        count = int(request.query.get("count", "1"))
    except ValueError:
        return error_response(400, "bad_request", "status and count must be integers")
    if not 400 <= status <= 599 or count < 0:
        return error_response(400, "bad_request", "status must be in 400...599 and count >= 0")
    res.fail_status, res.fail_count = status, count
    return json_response({"name": res.name, "failStatus": status, "failCount": count})


async def get_collection(request: web.Request) -> web.Response:
    bucket: CacheState = state_of(request).bucket("cache")
    bucket.collection_gets += 1
    return json_response({"items": bucket.collection, "count": len(bucket.collection),
                          "version": bucket.collection_version, "serial": bucket.collection_gets},
                         headers={"Cache-Control": "max-age=60", "ETag": f'"c{bucket.collection_version}"',
                                  "Date": http_date()})


async def post_collection(request: web.Request) -> web.Response:
    bucket: CacheState = state_of(request).bucket("cache")
    body: Any = None
    if await request.read():
        body, err = await read_json(request)
        if err:
            return err
    bucket.collection_posts += 1
    bucket.collection_version += 1
    element = {"id": len(bucket.collection) + 1, "data": body, "createdAt": iso_ms(time.time())}
    bucket.collection.append(element)
    if request.query.get("seeOther") == "1":
        return web.Response(status=303, headers={"Location": f"{prefix_of(request)}/cache/collection"})
    return json_response(element, status=201,
                         headers={"Location": f"{prefix_of(request)}/cache/collection/{element['id']}"})


async def get_collection_element(request: web.Request) -> web.Response:
    bucket: CacheState = state_of(request).bucket("cache")
    try:
        idx = int(request.match_info["id"])
    except ValueError:
        idx = 0
    if not 1 <= idx <= len(bucket.collection):
        return error_response(404, "not_found", f"Element {request.match_info['id']} not found")
    return json_response(bucket.collection[idx - 1], headers={"Cache-Control": "max-age=60"})


def setup(routes) -> None:
    routes.get("/cache/resource/{name}", get_resource)
    routes.post("/cache/resource/{name}/bump", bump_resource)
    routes.post("/cache/resource/{name}/fail", fail_resource)
    routes.get("/cache/collection", get_collection)
    routes.post("/cache/collection", post_collection)
    routes.get("/cache/collection/{id}", get_collection_element)
