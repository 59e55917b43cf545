"""Orders with Idempotency-Key support (draft-ietf-httpapi-idempotency-key-header).

POST /orders     create; honours Idempotency-Key (replay / 409 in flight / 422 other payload)
GET  /orders     list
GET  /orders/{id}
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any

from aiohttp import web

import state
from common import error_response, iso_ms, json_response, parse_float, prefix_of, state_of

MAX_PROCESSING_DELAY = 30.0


class OrdersState:
    def __init__(self, ns: state.Namespace) -> None:
        self.orders: list[dict[str, Any]] = []
        self.by_key: dict[str, int] = {}          # orders created per key
        self.keys: dict[str, dict[str, Any]] = {}  # key -> {fingerprint, state, status, body, headers}
        self.replays = 0
        self.conflicts = 0    # 409: same key still in flight
        self.mismatches = 0   # 422: same key, different payload

    def stats(self) -> dict[str, Any]:
        return {
            "ordersCreated": len(self.orders),
            "ordersByKey": dict(self.by_key),
            "idempotency": {"replays": self.replays, "conflicts": self.conflicts, "mismatches": self.mismatches},
        }


state.register_bucket("orders", OrdersState)


def _fingerprint(raw: bytes) -> str:
    try:
        canonical = json.dumps(json.loads(raw.decode("utf-8")), sort_keys=True, separators=(",", ":"))
        data = canonical.encode("utf-8")
    except (UnicodeDecodeError, ValueError):
        data = raw
    return hashlib.sha256(data).hexdigest()


async def create_order(request: web.Request) -> web.Response:
    bucket: OrdersState = state_of(request).bucket("orders")
    raw = await request.read()
    try:
        payload = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        payload = None
    if not isinstance(payload, dict):
        return error_response(400, "bad_request", "Order body must be a JSON object")
    key = request.headers.get("Idempotency-Key")
    fingerprint = _fingerprint(raw)

    if key is not None:
        record = bucket.keys.get(key)
        if record is not None:
            if record["fingerprint"] != fingerprint:
                bucket.mismatches += 1
                return error_response(422, "idempotency_key_reused",
                                      "Idempotency-Key was already used with a different payload")
            if record["state"] == "in_flight":
                bucket.conflicts += 1
                return error_response(409, "idempotency_key_in_flight",
                                      "A request with this Idempotency-Key is still being processed")
            bucket.replays += 1
            headers = {**record["headers"], "Idempotent-Replayed": "true"}
            return web.Response(status=record["status"], body=record["body"], headers=headers)
        bucket.keys[key] = {"fingerprint": fingerprint, "state": "in_flight"}

    try:
        delay = min(max(parse_float(request.query.get("delay"), 0.0) or 0.0, 0.0), MAX_PROCESSING_DELAY)
        if delay:
            await asyncio.sleep(delay)
        order = {
            "id": len(bucket.orders) + 1,
            "status": "created",
            "idempotencyKey": key,
            "payload": payload,
            "createdAt": iso_ms(time.time()),
        }
        bucket.orders.append(order)
        if key is not None:
            bucket.by_key[key] = bucket.by_key.get(key, 0) + 1
        body = json.dumps(order, separators=(",", ":")).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8",
                   "Location": f"{prefix_of(request)}/orders/{order['id']}"}
        if key is not None:
            bucket.keys[key] = {"fingerprint": fingerprint, "state": "done", "status": 201,
                                "body": body, "headers": headers}
    except BaseException:
        if key is not None and bucket.keys.get(key, {}).get("state") == "in_flight":
            del bucket.keys[key]  # processing failed: the key may be used again
        raise
    return web.Response(status=201, body=body, headers=headers)


async def list_orders(request: web.Request) -> web.Response:
    orders = state_of(request).bucket("orders").orders
    return json_response({"orders": orders, "total": len(orders)})


async def get_order(request: web.Request) -> web.Response:
    orders = state_of(request).bucket("orders").orders
    try:
        idx = int(request.match_info["id"])
    except ValueError:
        idx = 0
    if not 1 <= idx <= len(orders):
        return error_response(404, "not_found", f"Order {request.match_info['id']} not found")
    return json_response(orders[idx - 1])


def setup(routes) -> None:
    routes.post("/orders", create_order)
    routes.get("/orders", list_orders)
    routes.get("/orders/{id}", get_order)
