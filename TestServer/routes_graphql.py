"""GraphQL endpoint (graphql-core) per the GraphQL-over-HTTP draft, with Apollo's automatic
persisted queries (APQ) and server-side counters for the tests.

GET|POST /graphql       see README.md ("GraphQL") for the schema and the rules
"""

from __future__ import annotations

import collections
import hashlib
import json
import time
from typing import Any

from aiohttp import web
from graphql import (GraphQLError, GraphQLSchema, OperationType, build_schema, parse, validate)
from graphql.error import GraphQLSyntaxError
from graphql.execution import ExecutionContext, execute
from graphql.utilities import get_operation_ast

import routes_auth
import state
from common import iso_ms, state_of

GQL_JSON = "application/graphql-response+json"
JSON = "application/json"
LOG_LIMIT = 200

SDL = """
type Query {
  "An item of the namespace; a missing id is a NOT_FOUND error (the null bubbles up to data)."
  item(id: ID!): Item!
  "Items of the namespace, sorted by id, optionally filtered."
  items(filter: ItemFilter): [Item!]!
  "The signed-in user: needs a valid bearer token of the namespace, else UNAUTHENTICATED."
  viewer: Viewer!
}

type Mutation {
  "Creates an item (also visible under /items). Honours Idempotency-Key."
  createItem(input: ItemInput!): Item!
}

type Item {
  id: ID!
  name: String!
  price: Float!
  status: String!
  tags: [String!]!
  "null with a SUPPLIER_UNAVAILABLE error for items without tags (partial data)."
  supplier: Supplier
  details: ItemDetails
}

type Supplier { name: String! country: String! }
type Viewer { username: String! tokenId: String! }
type ItemDetails { color: String dimensions: Dimensions }
type Dimensions { width: Float! height: Float! unit: String! }

input ItemFilter { status: String tags: [String!] price: PriceRange nameContains: String }
input PriceRange { min: Float max: Float }
input ItemInput { name: String! price: Float! status: String tags: [String!] details: ItemDetailsInput }
input ItemDetailsInput { color: String dimensions: DimensionsInput }
input DimensionsInput { width: Float! height: Float! unit: String = "cm" }
"""


class GraphQLState:
    def __init__(self, ns: state.Namespace) -> None:
        self.persisted: dict[str, str] = {}          # sha256 hex -> document
        self.requests: collections.Counter[str] = collections.Counter()   # by method
        self.operations: collections.Counter[str] = collections.Counter()  # executed, by operation name
        self.apq = {"hashOnly": 0, "misses": 0, "hits": 0, "registered": 0, "mismatches": 0, "unsupported": 0}
        self.items_created = 0
        self.created_by_key: dict[str, int] = {}
        self.keys: dict[str, dict[str, Any]] = {}    # Idempotency-Key -> record
        self.replays = 0
        self.unauthenticated = 0
        self.log: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_LIMIT)

    def stats(self) -> dict[str, Any]:
        return {"graphql": {
            "requests": dict(self.requests),
            "operations": dict(self.operations),
            "apq": dict(self.apq),
            "itemsCreated": self.items_created,
            "createdByKey": dict(self.created_by_key),
            "replays": self.replays,
            "unauthenticated": self.unauthenticated,
            "log": list(self.log),
        }}


state.register_bucket("graphql", GraphQLState)


# --------------------------------------------------------------------------- schema and resolvers

def _item_view(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "id": str(item["id"])}


def _resolve_item(_root: Any, info, id: str) -> dict[str, Any]:
    items = info.context["ns"].bucket("items").items
    try:
        item = items.get(int(id))
    except ValueError:
        item = None
    if item is None:
        raise GraphQLError(f"Item {id} not found", extensions={"code": "NOT_FOUND"})
    return _item_view(item)


def _resolve_items(_root: Any, info, filter: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    items = sorted(info.context["ns"].bucket("items").items.values(), key=lambda it: it["id"])
    f = filter or {}
    if f.get("status") is not None:
        items = [it for it in items if it["status"] == f["status"]]
    if f.get("tags"):
        items = [it for it in items if all(tag in it["tags"] for tag in f["tags"])]
    if f.get("nameContains"):
        needle = f["nameContains"].lower()
        items = [it for it in items if needle in it["name"].lower()]
    price = f.get("price") or {}
    if price.get("min") is not None:
        items = [it for it in items if it["price"] >= price["min"]]
    if price.get("max") is not None:
        items = [it for it in items if it["price"] <= price["max"]]
    return [_item_view(it) for it in items]


def _resolve_supplier(item: dict[str, Any], _info) -> dict[str, Any]:
    if not item["tags"]:
        raise GraphQLError(f"Supplier of item {item['id']} is unavailable",
                           extensions={"code": "SUPPLIER_UNAVAILABLE"})
    return {"name": f"{item['tags'][0].title()} Supply Co.", "country": "NL"}


def _resolve_viewer(_root: Any, info) -> dict[str, Any]:
    claims, err = routes_auth.authenticate(info.context["request"])
    info.context["private"] = True
    if err is not None:
        info.context["graphql"].unauthenticated += 1
        raise GraphQLError("Sign in again: the access token is missing, expired or revoked",
                           extensions={"code": "UNAUTHENTICATED"})
    return {"username": claims.get("sub"), "tokenId": claims.get("jti")}


def _resolve_create_item(_root: Any, info, input: dict[str, Any]) -> dict[str, Any]:
    if not input["name"].strip():
        raise GraphQLError("name must not be empty", extensions={"code": "BAD_USER_INPUT", "field": "name"})
    if input["price"] < 0:
        raise GraphQLError("price must be >= 0", extensions={"code": "BAD_USER_INPUT", "field": "price"})
    now = iso_ms(time.time())
    bucket = info.context["ns"].bucket("items")
    item = bucket.insert({
        "name": input["name"], "price": input["price"], "status": input.get("status") or "active",
        "tags": list(input.get("tags") or []), "details": input.get("details"),
        "createdAt": now, "updatedAt": now,
    })
    bucket.created += 1
    gql: GraphQLState = info.context["graphql"]
    gql.items_created += 1
    key = info.context.get("idempotency_key")
    if key is not None:
        gql.created_by_key[key] = gql.created_by_key.get(key, 0) + 1
    return _item_view(item)


def _make_schema() -> GraphQLSchema:
    schema = build_schema(SDL)
    query = schema.query_type.fields
    query["item"].resolve = _resolve_item
    query["items"].resolve = _resolve_items
    query["viewer"].resolve = _resolve_viewer
    schema.mutation_type.fields["createItem"].resolve = _resolve_create_item
    schema.get_type("Item").fields["supplier"].resolve = _resolve_supplier
    return schema


SCHEMA = _make_schema()


# --------------------------------------------------------------------------- HTTP

class _Reply(Exception):
    """A response decided before execution (malformed request, APQ miss, 405...)."""

    def __init__(self, status: int, errors: list[dict[str, Any]], outcome: str,
                 headers: dict[str, str] | None = None, media: str | None = None) -> None:
        super().__init__(outcome)
        self.status = status
        self.errors = errors
        self.outcome = outcome
        self.headers = headers or {}
        self.media = media  # overrides the negotiated response type (the legacy APQ forms)


def _media_type(accept: str | None) -> str | None:
    """The response media type for ``accept`` (highest q first, ties in order); None → 406."""
    if not accept or not accept.strip():
        return GQL_JSON
    ranges = []
    for index, part in enumerate(accept.split(",")):
        pieces = [p.strip() for p in part.split(";")]
        q = 1.0
        for param in pieces[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        ranges.append((-q, index, pieces[0].lower()))
    for neg_q, _, media in sorted(ranges):
        if neg_q == 0:
            continue
        if media == GQL_JSON:
            return GQL_JSON
        if media == JSON:
            return JSON
        if media in ("*/*", "application/*"):
            return GQL_JSON
    return None


def _json_param(raw: Any, name: str) -> dict[str, Any] | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise _Reply(400, [{"message": f"{name} must be a JSON object"}], "badRequest")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _Reply(400, [{"message": f"{name} must be an object"}], "badRequest")
    return raw


async def _params(request: web.Request) -> dict[str, Any]:
    if request.method == "GET":
        q = request.query
        return {"query": q.get("query") or None, "operationName": q.get("operationName") or None,
                "variables": _json_param(q.get("variables"), "variables"),
                "extensions": _json_param(q.get("extensions"), "extensions")}
    content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type != JSON:
        raise _Reply(415, [{"message": "POST a JSON body (Content-Type: application/json)"}], "unsupportedMediaType")
    raw = await request.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _Reply(400, [{"message": "The body is not valid JSON"}], "badRequest")
    if not isinstance(body, dict):
        raise _Reply(400, [{"message": "The body must be a JSON object"}], "badRequest")
    query = body.get("query")
    if query is not None and not isinstance(query, str):
        raise _Reply(400, [{"message": "query must be a string"}], "badRequest")
    name = body.get("operationName")
    if name is not None and not isinstance(name, str):
        raise _Reply(400, [{"message": "operationName must be a string"}], "badRequest")
    return {"query": query, "operationName": name or None,
            "variables": _json_param(body.get("variables"), "variables"),
            "extensions": _json_param(body.get("extensions"), "extensions")}


def _resolve_document(params: dict[str, Any], gql: GraphQLState, media: str, entry: dict[str, Any],
                      apq: str = "standard") -> str:
    """The document to run; records the request kind in ``entry``: full, hashOnly or fullWithHash (APQ).

    ``apq``: "standard" answers a miss per the negotiated media type (400 graphql-response+json or
    200 json); "400-json" answers a miss with 400 and ``application/json`` whatever the client accepts
    (what Apollo Server 2/3, graphql-java and others send); "unsupported-400-json" refuses every
    persisted query with PersistedQueryNotSupported in that same 400 JSON form.
    """
    request_error = 400 if media == GQL_JSON else 200
    persisted = (params["extensions"] or {}).get("persistedQuery")
    if persisted is None:
        if not params["query"]:
            raise _Reply(400, [{"message": "Missing query"}], "badRequest")
        entry["kind"] = "full"
        return params["query"]
    if apq == "unsupported-400-json":
        entry["kind"] = "fullWithHash" if params["query"] else "hashOnly"
        gql.apq["unsupported"] += 1
        raise _Reply(400, [{"message": "PersistedQueryNotSupported",
                            "extensions": {"code": "PERSISTED_QUERY_NOT_SUPPORTED"}}],
                     "persistedQueryNotSupported", media=JSON)
    sha = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    if not isinstance(persisted, dict) or persisted.get("version") != 1 or not isinstance(sha, str):
        raise _Reply(400, [{"message": "Unsupported persisted query version",
                            "extensions": {"code": "PERSISTED_QUERY_NOT_SUPPORTED"}}], "badRequest")
    if not params["query"]:
        entry["kind"] = "hashOnly"
        gql.apq["hashOnly"] += 1
        document = gql.persisted.get(sha)
        if document is None:
            gql.apq["misses"] += 1
            legacy = apq == "400-json"
            raise _Reply(400 if legacy else request_error, [{"message": "PersistedQueryNotFound",
                                                             "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}],
                         "persistedQueryNotFound", {"Cache-Control": "private, no-cache, must-revalidate"},
                         media=JSON if legacy else None)
        gql.apq["hits"] += 1
        return document
    entry["kind"] = "fullWithHash"
    if hashlib.sha256(params["query"].encode("utf-8")).hexdigest() != sha:
        gql.apq["mismatches"] += 1
        raise _Reply(400, [{"message": "provided sha does not match query",
                            "extensions": {"code": "PERSISTED_QUERY_HASH_MISMATCH"}}], "badRequest")
    if sha not in gql.persisted:
        gql.apq["registered"] += 1
    gql.persisted[sha] = params["query"]
    return params["query"]


def _respond(media: str, status: int, payload: dict[str, Any], headers: dict[str, str]) -> web.Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    resp = web.Response(status=status, body=body, headers={**headers, "Vary": "Accept"})
    resp.content_type = media
    resp.charset = "utf-8"
    return resp


def _fingerprint(raw: bytes) -> str:
    try:
        data = json.dumps(json.loads(raw.decode("utf-8")), sort_keys=True, separators=(",", ":")).encode("utf-8")
    except (UnicodeDecodeError, ValueError):
        data = raw
    return hashlib.sha256(data).hexdigest()


async def graphql_handler(request: web.Request, apq: str = "standard") -> web.Response:
    ns = state_of(request)
    gql: GraphQLState = ns.bucket("graphql")
    gql.requests[request.method] += 1
    entry: dict[str, Any] = {"method": request.method, "operationName": None, "kind": None}
    gql.log.append(entry)
    media = _media_type(request.headers.get("Accept"))
    if media is None:
        entry.update(status=406, outcome="notAcceptable")
        return web.json_response({"errors": [{"message": "Accept application/graphql-response+json or application/json"}]},
                                 status=406)
    request_error = 400 if media == GQL_JSON else 200
    try:
        params = await _params(request)
        entry["operationName"] = params["operationName"]
        document = _resolve_document(params, gql, media, entry, apq)
        try:
            ast = parse(document)
        except GraphQLSyntaxError as exc:
            raise _Reply(request_error, [exc.formatted], "requestError")
        operation = get_operation_ast(ast, params["operationName"])
        if operation is None:
            raise _Reply(request_error, [{"message": "Could not determine the operation to run"}], "requestError")
        if request.method == "GET" and operation.operation != OperationType.QUERY:
            raise _Reply(405, [{"message": "Mutations are not allowed over GET; use POST"}], "methodNotAllowed",
                         {"Allow": "POST"})
        errors = validate(SCHEMA, ast)
        if errors:
            raise _Reply(request_error, [e.formatted for e in errors], "requestError")
        context: dict[str, Any] = {"request": request, "ns": ns, "graphql": gql, "private": False,
                                   "idempotency_key": None}
        built = ExecutionContext.build(SCHEMA, ast, None, context, params["variables"], params["operationName"])
        if isinstance(built, list):
            raise _Reply(request_error, [e.formatted for e in built], "requestError")
    except _Reply as reply:
        entry.update(status=reply.status, outcome=reply.outcome)
        return _respond(reply.media or media, reply.status, {"errors": reply.errors},
                        {"Cache-Control": "no-store", **reply.headers})

    # Idempotency-Key on a mutation: replay the stored response instead of applying it again.
    key = request.headers.get("Idempotency-Key") if operation.operation == OperationType.MUTATION else None
    fingerprint = _fingerprint(await request.read()) if key is not None else None
    if key is not None:
        record = gql.keys.get(key)
        if record is not None and record["fingerprint"] == fingerprint and record["state"] == "done":
            gql.replays += 1
            entry.update(status=record["status"], outcome="replayed")
            return _respond(media, record["status"], record["payload"],
                            {"Idempotent-Replayed": "true", "Cache-Control": "no-store"})
        if record is not None:
            status = 409 if record["fingerprint"] == fingerprint else 422
            entry.update(status=status, outcome="idempotencyConflict")
            return _respond(media, status, {"errors": [{"message": "Idempotency-Key in flight or reused",
                                                        "extensions": {"code": "IDEMPOTENCY_CONFLICT"}}]},
                            {"Cache-Control": "no-store"})
        gql.keys[key] = {"fingerprint": fingerprint, "state": "in_flight"}
        context["idempotency_key"] = key

    result = execute(SCHEMA, ast, None, context, params["variables"], params["operationName"])
    payload: dict[str, Any] = {"data": result.data}
    if result.errors:
        payload["errors"] = [e.formatted for e in result.errors]
    name = params["operationName"] or (operation.name.value if operation.name else "<anonymous>")
    gql.operations[name] += 1
    if key is not None:
        gql.keys[key] = {"fingerprint": fingerprint, "state": "done", "status": 200, "payload": payload}
    cacheable = request.method == "GET" and not result.errors and not context["private"]
    headers = {"Cache-Control": "public, max-age=60" if cacheable else "no-store"}
    entry.update(status=200, outcome="executed")
    return _respond(media, 200, payload, headers)


async def graphql_apq_400_json_handler(request: web.Request) -> web.Response:
    return await graphql_handler(request, "400-json")


async def graphql_apq_unsupported_400_json_handler(request: web.Request) -> web.Response:
    return await graphql_handler(request, "unsupported-400-json")


def setup(routes) -> None:
    routes.get("/graphql", graphql_handler)
    routes.post("/graphql", graphql_handler)
    # The same endpoint with the legacy APQ answers (see _resolve_document).
    for path, handler in (("/graphql/apq-400-json", graphql_apq_400_json_handler),
                          ("/graphql/apq-unsupported-400-json", graphql_apq_unsupported_400_json_handler)):
        routes.get(path, handler)
        routes.post(path, handler)
