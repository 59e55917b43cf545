"""Items resource: /items, /items/{id} (GET/HEAD/POST/PUT/PATCH/DELETE)."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

import state
from common import error_response, iso_ms, json_response, prefix_of, read_json, state_of

SEED = [
    {"name": "Widget", "price": 9.99, "status": "active", "tags": ["tools"]},
    {"name": "Gadget", "price": 24.5, "status": "active", "tags": ["electronics", "gifts"]},
    {"name": "Old Lamp", "price": 0, "status": "archived", "tags": []},
]
# Fixed timestamps for the seed items so responses are stable across runs.
SEED_CREATED = 1767225600.0  # 2026-01-01T00:00:00.000Z

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


class ItemsState:
    def __init__(self, ns: state.Namespace) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        for i, seed in enumerate(SEED):
            ts = iso_ms(SEED_CREATED + i * 60.5)
            self.insert({**seed, "tags": list(seed["tags"]), "createdAt": ts, "updatedAt": ts})
        self.created = 0
        self.updated = 0
        self.deleted = 0

    def insert(self, fields: dict[str, Any]) -> dict[str, Any]:
        item = {"id": self.next_id, **fields}
        self.items[self.next_id] = item
        self.next_id += 1
        return item

    def stats(self) -> dict[str, Any]:
        return {"items": {"count": len(self.items), "created": self.created,
                          "updated": self.updated, "deleted": self.deleted}}


state.register_bucket("items", ItemsState)

_FIELDS = ("name", "price", "status", "tags")


def validate(body: Any, partial: bool) -> tuple[dict[str, Any], dict[str, list[str]] | None]:
    """Returns (clean fields, None) or ({}, {field: [messages]})."""
    if not isinstance(body, dict):
        return {}, {"body": ["must be a JSON object"]}
    errors: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}

    def fail(field: str, msg: str) -> None:
        errors.setdefault(field, []).append(msg)

    if "name" in body or not partial:
        name = body.get("name")
        if name is None or (isinstance(name, str) and not name.strip()):
            fail("name", "must not be empty")
        elif not isinstance(name, str):
            fail("name", "must be a string")
        else:
            clean["name"] = name
    if "price" in body or not partial:
        price = body.get("price")
        if price is None:
            fail("price", "is required")
        elif isinstance(price, bool) or not isinstance(price, (int, float)):
            fail("price", "must be a number")
        elif price < 0:
            fail("price", "must be greater than or equal to 0")
        else:
            clean["price"] = price
    if "status" in body:
        st = body["status"]
        if not isinstance(st, str) or not st:
            fail("status", "must be a non-empty string")
        else:
            clean["status"] = st
    elif not partial:
        clean["status"] = "active"
    if "tags" in body:
        tags = body["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            fail("tags", "must be an array of strings")
        else:
            clean["tags"] = list(tags)
    elif not partial:
        clean["tags"] = []
    return clean, (errors or None)


def _validation_error(fields: dict[str, list[str]]) -> web.Response:
    return error_response(422, "validation_failed", "Validation failed", fields=fields)


def _not_found(item_id: Any) -> web.Response:
    return error_response(404, "not_found", f"Item {item_id} not found")


def _lookup(request: web.Request) -> tuple[ItemsState, int | None]:
    bucket = state_of(request).bucket("items")
    try:
        return bucket, int(request.match_info["id"])
    except ValueError:
        return bucket, None


def _int_param(request: web.Request, name: str, default: int, lo: int, hi: int) -> int | web.Response:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        return error_response(400, "bad_request", f"{name} must be an integer")
    if not lo <= value <= hi:
        return error_response(400, "bad_request", f"{name} must be between {lo} and {hi}")
    return value


async def list_items(request: web.Request) -> web.Response:
    bucket = state_of(request).bucket("items")
    limit = _int_param(request, "limit", DEFAULT_LIMIT, 0, MAX_LIMIT)
    if isinstance(limit, web.Response):
        return limit
    offset = _int_param(request, "offset", 0, 0, 1 << 31)
    if isinstance(offset, web.Response):
        return offset
    items = sorted(bucket.items.values(), key=lambda it: it["id"])
    status = request.query.get("status")
    if status:
        items = [it for it in items if it["status"] == status]
    q = request.query.get("q")
    if q:
        items = [it for it in items if q.lower() in it["name"].lower()]
    tag = request.query.get("tag")
    if tag:
        items = [it for it in items if tag in it["tags"]]
    return json_response({"items": items[offset:offset + limit], "total": len(items),
                          "limit": limit, "offset": offset})


async def get_item(request: web.Request) -> web.Response:
    bucket, item_id = _lookup(request)
    item = bucket.items.get(item_id) if item_id is not None else None
    if item is None:
        return _not_found(request.match_info["id"])
    return json_response(item)


async def create_item(request: web.Request) -> web.Response:
    body, err = await read_json(request)
    if err:
        return err
    clean, errors = validate(body, partial=False)
    if errors:
        return _validation_error(errors)
    bucket = state_of(request).bucket("items")
    now = iso_ms(time.time())
    item = bucket.insert({**clean, "createdAt": now, "updatedAt": now})
    bucket.created += 1
    return json_response(item, status=201, headers={"Location": f"{prefix_of(request)}/items/{item['id']}"})


async def replace_item(request: web.Request) -> web.Response:
    bucket, item_id = _lookup(request)
    item = bucket.items.get(item_id) if item_id is not None else None
    if item is None:
        return _not_found(request.match_info["id"])
    body, err = await read_json(request)
    if err:
        return err
    clean, errors = validate(body, partial=False)
    if errors:
        return _validation_error(errors)
    new = {"id": item["id"], **clean, "createdAt": item["createdAt"], "updatedAt": iso_ms(time.time())}
    bucket.items[item_id] = new
    bucket.updated += 1
    return json_response(new)


async def patch_item(request: web.Request) -> web.Response:
    bucket, item_id = _lookup(request)
    item = bucket.items.get(item_id) if item_id is not None else None
    if item is None:
        return _not_found(request.match_info["id"])
    body, err = await read_json(request)
    if err:
        return err
    clean, errors = validate(body, partial=True)
    if errors:
        return _validation_error(errors)
    item.update(clean)
    item["updatedAt"] = iso_ms(time.time())
    bucket.updated += 1
    return json_response(item)


async def delete_item(request: web.Request) -> web.Response:
    bucket, item_id = _lookup(request)
    if item_id is None or item_id not in bucket.items:
        return _not_found(request.match_info["id"])
    del bucket.items[item_id]
    bucket.deleted += 1
    request["force_content_length_zero"] = True
    return web.Response(status=204)


def setup(routes) -> None:
    routes.get("/items", list_items)
    routes.post("/items", create_item)
    routes.get("/items/{id}", get_item)  # also HEAD
    routes.put("/items/{id}", replace_item)
    routes.patch("/items/{id}", patch_item)
    routes.delete("/items/{id}", delete_item)
