"""Offline-queue targets: an idempotent mutation log, versioned entities, and a down switch.

POST   /mutations            apply a JSON mutation; dedupes by Idempotency-Key (same key + same
                             payload -> replay of the first answer, same key + other payload -> 422);
                             a body with "invalid": true -> 422 with field errors
GET    /mutations            {"applied": [...in order, each with its raw "query"...], "deliveries": n, "replays": n,
                              "mismatches": n, "byKey": {key: times applied}}
PUT    /entities/{id}        replace an entity's value; preconditions: If-Match (ETag "v<version>")
                             -> 412, body "baseVersion" -> 409, both answers carry the current entity;
                             dedupes by Idempotency-Key like /mutations
GET    /entities/{id}        {"id", "version", "value"} with ETag
POST   /_mutations_config {"delayAfterApply": seconds} wait after applying, before answering
                             (so a client killed meanwhile must replay: the crash-safety test);
                             {"holdAfterApply": true} holds every answer after applying until
                             {"holdAfterApply": false} (at most 30 s): a send known to be in flight
POST   /_down                {"down": true|false, "mode": "503"|"reset"} while down, /mutations and
                             /entities answer 503 (Retry-After: 1) or reset the connection
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from aiohttp import web

import state
from common import error_response, json_response, read_json, state_of
from faults import _close


class MutationsState:
    def __init__(self, ns: state.Namespace) -> None:
        self.applied: list[dict[str, Any]] = []
        self.by_key: dict[str, int] = {}
        self.keys: dict[str, dict[str, Any]] = {}  # key -> {fingerprint, status, body}
        self.deliveries = 0
        self.replays = 0
        self.mismatches = 0
        self.entities: dict[str, dict[str, Any]] = {}
        self.down = False
        self.down_mode = "503"
        self.refused_while_down = 0
        self.delay_after_apply = 0.0
        self.released = asyncio.Event()
        self.released.set()

    def stats(self) -> dict[str, Any]:
        return {"mutations": {"applied": len(self.applied), "deliveries": self.deliveries,
                              "replays": self.replays, "mismatches": self.mismatches,
                              "refusedWhileDown": self.refused_while_down}}


state.register_bucket("mutations", MutationsState)


def _fingerprint(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _bucket(request: web.Request) -> MutationsState:
    return state_of(request).bucket("mutations")


def _down_answer(request: web.Request, bucket: MutationsState) -> web.StreamResponse | None:
    if not bucket.down:
        return None
    bucket.refused_while_down += 1
    if bucket.down_mode == "reset":
        return _close(request, rst=True)
    resp = error_response(503, "down", "The service is down (down switch)", headers={"Retry-After": "1"})
    resp.force_close()
    return resp


async def _idempotent(request: web.Request, bucket: MutationsState, raw: bytes, apply) -> web.Response:
    """Runs apply() once per Idempotency-Key; replays its answer for the same payload."""
    bucket.deliveries += 1
    key = request.headers.get("Idempotency-Key")
    fingerprint = _fingerprint(raw)
    if key is not None and key in bucket.keys:
        record = bucket.keys[key]
        if record["fingerprint"] != fingerprint:
            bucket.mismatches += 1
            return error_response(422, "idempotency_key_reused",
                                  "Idempotency-Key was already used with a different payload")
        bucket.replays += 1
        return web.Response(status=record["status"], body=record["body"],
                            headers={"Content-Type": "application/json", "Idempotent-Replayed": "true"})
    status, payload = apply()
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    if key is not None and 200 <= status < 300:  # failures are not remembered: a fixed retry may pass
        bucket.keys[key] = {"fingerprint": fingerprint, "status": status, "body": body}
    if bucket.delay_after_apply > 0:
        await asyncio.sleep(bucket.delay_after_apply)
    if not bucket.released.is_set():
        try:
            await asyncio.wait_for(bucket.released.wait(), timeout=30)
        except asyncio.TimeoutError:
            pass
    return web.Response(status=status, body=body, headers={"Content-Type": "application/json"})


async def _read_object(request: web.Request, bucket: MutationsState, what: str):
    """The raw body and its JSON object, or a response to send instead (server down, not an object)."""
    raw = await request.read()
    down = _down_answer(request, bucket)
    if down is not None:
        return raw, None, down
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        payload = None
    if not isinstance(payload, dict):
        return raw, None, error_response(400, "bad_request", f"{what} body must be a JSON object")
    return raw, payload, None


async def post_mutation(request: web.Request) -> web.StreamResponse:
    bucket = _bucket(request)
    raw, payload, refusal = await _read_object(request, bucket, "Mutation")
    if refusal is not None:
        return refusal
    if payload.get("invalid"):
        bucket.deliveries += 1
        return json_response({"error": {"code": "validation_failed", "message": "The change is invalid",
                                        "fields": {"name": ["must not be empty"]}}}, status=422)
    key = request.headers.get("Idempotency-Key")

    def apply():
        entry = {"seq": len(bucket.applied) + 1, "key": key, "payload": payload,
                 "query": request.raw_path.partition("?")[2]}
        bucket.applied.append(entry)
        if key is not None:
            bucket.by_key[key] = bucket.by_key.get(key, 0) + 1
        return 201, entry

    return await _idempotent(request, bucket, raw, apply)


async def list_mutations(request: web.Request) -> web.Response:
    b = _bucket(request)
    return json_response({"applied": b.applied, "deliveries": b.deliveries, "replays": b.replays,
                          "mismatches": b.mismatches, "byKey": b.by_key,
                          "refusedWhileDown": b.refused_while_down})


def _entity(bucket: MutationsState, entity_id: str) -> dict[str, Any]:
    return bucket.entities.setdefault(entity_id, {"id": entity_id, "version": 1, "value": None})


def _etag(entity: dict[str, Any]) -> str:
    return f'"v{entity["version"]}"'


async def put_entity(request: web.Request) -> web.StreamResponse:
    bucket = _bucket(request)
    raw, payload, refusal = await _read_object(request, bucket, "Entity")
    if refusal is not None:
        return refusal
    entity = _entity(bucket, request.match_info["id"])
    if_match = request.headers.get("If-Match")
    if if_match is not None and if_match.strip() not in ("*", _etag(entity)):
        bucket.deliveries += 1
        return json_response({"error": {"code": "precondition_failed", "message": "The entity changed"},
                              "current": entity}, status=412, headers={"ETag": _etag(entity)})
    base = payload.get("baseVersion")
    if base is not None and base != entity["version"]:
        bucket.deliveries += 1
        return json_response({"error": {"code": "conflict", "message": "The entity changed"},
                              "current": entity}, status=409, headers={"ETag": _etag(entity)})

    def apply():
        entity["version"] += 1
        entity["value"] = payload.get("value")
        key = request.headers.get("Idempotency-Key")
        bucket.applied.append({"seq": len(bucket.applied) + 1, "key": key, "payload": payload,
                               "entity": entity["id"]})
        if key is not None:
            bucket.by_key[key] = bucket.by_key.get(key, 0) + 1
        return 200, dict(entity)

    return await _idempotent(request, bucket, raw, apply)


async def get_entity(request: web.Request) -> web.Response:
    entity = _entity(_bucket(request), request.match_info["id"])
    return json_response(entity, headers={"ETag": _etag(entity)})


async def set_down(request: web.Request) -> web.Response:
    bucket = _bucket(request)
    body, _ = await read_json(request)
    if not isinstance(body, dict):
        body = {}
    bucket.down = bool(body.get("down", True))
    mode = body.get("mode", "503")
    bucket.down_mode = mode if mode in ("503", "reset") else "503"
    return json_response({"down": bucket.down, "mode": bucket.down_mode})


async def set_config(request: web.Request) -> web.Response:
    bucket = _bucket(request)
    body, _ = await read_json(request)
    if isinstance(body, dict):
        try:
            bucket.delay_after_apply = min(max(float(body.get("delayAfterApply", 0.0)), 0.0), 5.0)
        except (TypeError, ValueError):
            return error_response(400, "bad_request", "delayAfterApply must be a number of seconds")
        if body.get("holdAfterApply") is True:
            bucket.released.clear()
        elif body.get("holdAfterApply") is False:
            bucket.released.set()
    return json_response({"delayAfterApply": bucket.delay_after_apply, "holdAfterApply": not bucket.released.is_set()})


def setup(routes) -> None:
    routes.post("/_mutations_config", set_config)
    routes.post("/mutations", post_mutation)
    routes.get("/mutations", list_mutations)
    routes.put("/entities/{id}", put_entity)
    routes.get("/entities/{id}", get_entity)
    routes.post("/_down", set_down)
