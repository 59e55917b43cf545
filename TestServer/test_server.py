#!/usr/bin/env python3
"""Smoke check of the reference server with urllib (no pytest needed).

    .venv/bin/python TestServer/test_server.py --base-url http://127.0.0.1:PORT

Without --base-url it starts its own server on a free port and stops it afterwards.
Prints one line per check and a closing "N passed, N failed" line; exit status 1 on failure.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import email.utils
import http.client
import hashlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable

BASE = ""
RESULTS: list[tuple[str, bool, str]] = []


class Resp:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


def call(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None, timeout: float = 30) -> Resp:
    data = raw
    hdrs = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(BASE + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Resp(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Resp(e.code, e.headers, e.read())


def ns() -> str:
    return "/ns/smoke-" + uuid.uuid4().hex[:10]


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise AssertionError(msg)


def eq(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def case(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
            RESULTS.append((fn.__name__, True, ""))
            print(f"ok   {fn.__name__}", flush=True)
        except Exception as exc:  # noqa: BLE001
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            RESULTS.append((fn.__name__, False, detail))
            print(f"FAIL {fn.__name__}: {detail}", flush=True)
    run.__name__ = fn.__name__
    CASES.append(run)
    return run


CASES: list[Callable[[], None]] = []


# --------------------------------------------------------------------------- items

@case
def items_namespaced_and_default() -> None:
    p = ns()
    r = call("GET", p + "/items")
    eq(r.status, 200, "status")
    j = r.json()
    eq(j["total"], 3, "seeded total")
    eq([i["id"] for i in j["items"]], [1, 2, 3], "seed ids")
    check(j["items"][0]["createdAt"].endswith("Z") and "." in j["items"][0]["createdAt"], "createdAt format")
    r = call("POST", p + "/items", {"name": "New", "price": 3.5, "tags": ["x"]})
    eq(r.status, 201, "create status")
    eq(r.header("Location"), f"{p}/items/4", "Location")
    eq(r.json()["status"], "active", "default status")
    eq(call("GET", p + "/items").json()["total"], 4, "namespaced total after create")
    # another namespace is untouched
    eq(call("GET", ns() + "/items").json()["total"], 3, "other namespace total")
    # X-Namespace header selects the same namespace as the prefix
    name = p.split("/")[2]
    eq(call("GET", "/items", headers={"X-Namespace": name}).json()["total"], 4, "X-Namespace header")
    # unprefixed = default namespace
    r = call("POST", "/items", {"name": "Default", "price": 1})
    loc = r.header("Location")
    eq((r.status, loc.startswith("/items/")), (201, True), "unprefixed Location")
    eq(call("GET", loc).json()["name"], "Default", "default ns get")
    eq(call("GET", "/ns/default" + loc).json()["name"], "Default", "/ns/default is the default namespace")


@case
def items_filters_paging_and_errors() -> None:
    p = ns()
    eq(call("GET", p + "/items?status=archived").json()["total"], 1, "status filter")
    eq(call("GET", p + "/items?q=gad").json()["items"][0]["name"], "Gadget", "q filter")
    j = call("GET", p + "/items?limit=1&offset=1").json()
    eq((j["limit"], j["offset"], j["total"], [i["id"] for i in j["items"]]), (1, 1, 3, [2]), "paging")
    r = call("GET", p + "/items/999")
    eq(r.status, 404, "missing status")
    eq(r.json()["error"]["code"], "not_found", "missing code")
    r = call("POST", p + "/items", {"name": "", "price": -1})
    eq(r.status, 422, "validation status")
    err = r.json()["error"]
    eq(err["code"], "validation_failed", "validation code")
    eq(err["fields"]["name"], ["must not be empty"], "name error")
    check("price" in err["fields"], "price error")
    r = call("PUT", p + "/items/1", {"name": "Replaced", "price": 2})
    eq((r.status, r.json()["name"], r.json()["tags"]), (200, "Replaced", []), "put")
    r = call("PATCH", p + "/items/2", {"price": 30})
    eq((r.status, r.json()["name"], r.json()["price"]), (200, "Gadget", 30), "patch")
    r = call("PATCH", p + "/items/2", {"price": -3})
    eq(r.status, 422, "patch validation")
    r = call("HEAD", p + "/items/2")
    eq((r.status, r.body), (200, b""), "head")
    r = call("DELETE", p + "/items/3")
    eq((r.status, r.header("Content-Length"), r.body), (204, "0", b""), "delete")
    eq(call("GET", p + "/items/3").status, 404, "deleted")


# --------------------------------------------------------------------------- misc

@case
def echo_query_decoding() -> None:
    q = "email=user%2Btag%40example.com&q=a%26b%3Dc%23d&sp=x%20y"
    r = call("GET", "/echo/some/path?" + q, headers={"X-Trace-Id": "abc"})
    j = r.json()
    eq(j["rawQuery"], q, "rawQuery")
    eq(j["query"], {"email": ["user+tag@example.com"], "q": ["a&b=c#d"], "sp": ["x y"]}, "query")
    eq(j["path"], "/echo/some/path", "path")
    eq(j["headers"].get("X-Trace-Id"), "abc", "header name case kept")
    eq(j["body"], None, "no body")
    r = call("POST", ns() + "/echo", {"a": [1, 2]})
    j = r.json()
    eq((j["method"], j["json"], j["bodyBase64"]), ("POST", {"a": [1, 2]}, base64.b64encode(b'{"a": [1, 2]}').decode()),
       "json echo")
    r = call("PUT", "/echo?a=1&a=2&b=", raw=b"x=1&y=%20z",
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    j = r.json()
    eq((j["form"], j["query"]), ({"x": ["1"], "y": [" z"]}, {"a": ["1", "2"], "b": [""]}), "form echo")
    boundary = "XyZ"
    mp = (b"--XyZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
          b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
          b"Content-Type: application/octet-stream\r\n\r\n\x00\x01\r\n\xff\r\n--XyZ--\r\n")
    j = call("POST", "/echo", raw=mp, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}).json()
    eq(j["form"], {"field": ["value"]}, "multipart field")
    eq((j["files"]["file"][0]["filename"], j["files"]["file"][0]["size"]), ("a.bin", 5), "multipart file")


@case
def status_and_bodies() -> None:
    r = call("GET", "/status/503?retryAfter=7")
    eq((r.status, r.header("Retry-After"), r.json()["status"]), (503, "7", 503), "status 503")
    r = call("GET", "/status/204")
    eq((r.status, r.body), (204, b""), "status 204")
    r = call("GET", "/html-502")
    eq((r.status, r.header("Content-Type")), (502, "text/html; charset=utf-8"), "html-502")
    check(b"<title>502 Bad Gateway</title>" in r.body, "html body")
    eq(call("GET", "/envelope-error").json()["error"]["code"], "insufficient_funds", "envelope-error")
    eq(call("GET", "/envelope-ok").json()["ok"], True, "envelope-ok")
    r = call("GET", "/empty")
    eq((r.status, r.body, r.header("Content-Length")), (200, b"", "0"), "empty")
    eq(call("GET", "/no-content").status, 204, "no-content")
    eq(call("GET", "/dates").json()["fractional"], "2026-05-25T22:46:27.580497Z", "dates")
    eq(call("GET", "/lossy").json()["items"][1], {"id": 2}, "lossy")
    eq(call("GET", "/unknown-enum").json(), {"status": "archived_v2"}, "unknown-enum")
    eq(call("GET", "/nope/nothing").json()["error"]["code"], "not_found", "404 JSON")


@case
def slow_drip_and_disconnect() -> None:
    t0 = time.monotonic()
    eq(call("GET", "/slow?seconds=0.3").json()["slept"], 0.3, "slow")
    check(time.monotonic() - t0 >= 0.3, "slow waited")
    t0 = time.monotonic()
    r = call("GET", "/drip?bytes=100&seconds=0.4&chunks=4")
    eq((len(r.body), r.header("Content-Length")), (100, "100"), "drip")
    check(time.monotonic() - t0 >= 0.3, "drip waited")
    # client gives up early: the server must survive
    host, port = BASE.split("//")[1].split(":")
    for path in ("/slow?seconds=1", "/drip?bytes=1000&seconds=1"):
        s = socket.create_connection((host, int(port)))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        time.sleep(0.1)
        s.close()
    time.sleep(1.2)
    eq(call("GET", "/_health").status, 200, "alive after disconnects")


@case
def cookies() -> None:
    r = call("GET", "/cookies/set?session=abc123")
    check("session=abc123" in (r.header("Set-Cookie") or ""), "Set-Cookie")
    check("Path=/" in r.header("Set-Cookie"), "cookie path")
    j = call("GET", "/cookies", headers={"Cookie": "session=abc123; b=2"}).json()
    eq((j["cookie"], j["cookies"]), ("session=abc123; b=2", {"session": "abc123", "b": "2"}), "cookie echo")


@case
def transfer() -> None:
    r = call("POST", "/upload", raw=b"a" * 100000)
    eq(r.json()["bytes"], 100000, "upload size")
    r = call("GET", "/download/1000", headers={"Range": "bytes=500-"})
    eq((r.status, len(r.body), r.body[0], r.header("Content-Range")), (206, 500, 500 % 251, "bytes 500-999/1000"),
       "range")
    r = call("GET", "/download/1000", headers={"Range": "bytes=0-9", "If-Range": '"other"'})
    eq((r.status, len(r.body)), (200, 1000), "if-range mismatch")


@case
def server_sent_events() -> None:
    p = ns()
    r = call("GET", p + "/sse/f?count=3&retry=1500")
    eq((r.status, r.header("Content-Type")), (200, "text/event-stream; charset=utf-8"), "sse head")
    check(r.body.startswith(b"\xef\xbb\xbf: courier sse feed f\r\nretry: 1500\r\n\r\n"), "BOM, comment, retry")
    check(b"id: 1\r\nevent: tick\r\ndata: event 1\r\n\r\n" in r.body and b"id: 3\nevent: tick\n" in r.body, "events")
    eq(call("GET", p + "/sse/f?count=3", headers={"Last-Event-ID": "3"}).status, 204, "204 when complete")
    r = call("GET", p + "/sse/f?count=3", headers={"Last-Event-ID": "2"})
    check(b"id: 3" in r.body and b"id: 2" not in r.body, "resumes after Last-Event-ID")
    eq(call("GET", p + "/sse/g?rejectFirst=1").status, 401, "401 once")
    eq(call("GET", p + "/sse/g?rejectFirst=1").status, 401, "then a token is needed")
    j = call("GET", p + "/_sse/f").json()
    eq((j["connections"], j["lastEventIds"], j["statuses"]), (3, [None, "3", "2"], [200, 204, 200]), "record")


# --------------------------------------------------------------------------- auth

def login(p: str, ttl: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"username": "alice", "password": "secret"}
    if ttl is not None:
        body["accessTtl"] = ttl
    r = call("POST", p + "/auth/login", body)
    eq(r.status, 200, "login status")
    return r.json()


def jwt_claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _authorize(path: str, params: dict[str, str]) -> dict[str, str]:
    """GET /oauth/authorize without following the redirect -> the Location's query."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(BASE + path + "/oauth/authorize?" + urllib.parse.urlencode(params), timeout=10)
        raise AssertionError("authorize did not redirect")
    except urllib.error.HTTPError as e:
        eq(e.code, 302, "authorize redirects")
        location = e.headers["Location"]
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))


@case
def oauth_authorization_code_with_pkce() -> None:
    p = ns()
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636 Appendix B
    params = {"response_type": "code", "client_id": "c", "redirect_uri": "app.test:/cb", "state": "s1",
              "code_challenge": challenge, "code_challenge_method": "S256"}
    back = _authorize(p, params)
    eq(back.get("state"), "s1", "state echoed")
    form = {"grant_type": "authorization_code", "code": back["code"], "redirect_uri": "app.test:/cb",
            "client_id": "c", "code_verifier": verifier[:-1] + "x"}
    r = call("POST", p + "/oauth/token", raw=urllib.parse.urlencode(form).encode(),
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    eq((r.status, r.json()["error"]), (400, "invalid_grant"), "wrong verifier")
    back = _authorize(p, params)
    form.update(code=back["code"], code_verifier=verifier)
    r = call("POST", p + "/oauth/token", raw=urllib.parse.urlencode(form).encode(),
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    eq(r.status, 200, "right verifier")
    eq(jwt_claims(r.json()["access_token"])["sub"], "alice", "sub")
    r = call("POST", p + "/oauth/token", raw=urllib.parse.urlencode(form).encode(),
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    eq(r.status, 400, "code is single use")
    eq(_authorize(p, {**params, "deny": "1"}).get("error"), "access_denied", "deny")
    stats = call("GET", p + "/_stats").json()["auth"]
    eq((stats["codeExchanges"], stats["codeExchangeSuccesses"]), (3, 1), "counters")


@case
def auth_login_refresh_rotation() -> None:
    p = ns()
    r = call("POST", p + "/auth/login", {"username": "alice", "password": "nope"})
    eq((r.status, r.json()["error"]), (401, "invalid_grant"), "bad password")
    tok = login(p)
    eq((tok["token_type"], tok["expires_in"]), ("Bearer", 3600), "token fields")
    claims = jwt_claims(tok["access_token"])
    eq(claims["sub"], "alice", "sub")
    check({"exp", "iat", "jti"} <= claims.keys(), "claims")
    r = call("GET", p + "/me")
    eq((r.status, r.header("WWW-Authenticate")), (401, "Bearer"), "missing token")
    r = call("GET", p + "/me", headers={"Authorization": "Bearer " + tok["access_token"]})
    eq((r.status, r.json()["jti"], r.json()["sub"]), (200, claims["jti"], "alice"), "me")
    r = call("GET", p + "/protected/items", headers={"Authorization": "Bearer " + tok["access_token"]})
    eq((r.status, r.json()["total"], r.json()["auth"]["jti"]), (200, 3, claims["jti"]), "protected items")
    r = call("GET", p + "/protected/items/2", headers={"Authorization": "Bearer " + tok["access_token"]})
    eq((r.status, r.json()["name"], r.header("X-Auth-Jti")), (200, "Gadget", claims["jti"]), "protected item")
    r = call("GET", p + "/me", headers={"Authorization": "Bearer " + tok["access_token"] + "x"})
    eq((r.status, r.header("WWW-Authenticate")), (401, 'Bearer error="invalid_token"'), "bad signature")
    # refresh rotation
    r = call("POST", p + "/auth/refresh", {"refresh_token": tok["refresh_token"]})
    eq(r.status, 200, "refresh")
    tok2 = r.json()
    check(tok2["refresh_token"] != tok["refresh_token"], "refresh rotated")
    check(jwt_claims(tok2["access_token"])["jti"] != claims["jti"], "new jti")
    r = call("POST", p + "/auth/refresh", {"refresh_token": tok["refresh_token"]})
    eq((r.status, r.json()["error"]), (400, "invalid_grant"), "re-use")
    r = call("POST", p + "/auth/refresh", raw=urllib.parse.urlencode(
        {"grant_type": "refresh_token", "refresh_token": tok2["refresh_token"]}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    eq(r.status, 200, "form refresh")
    eq(call("POST", p + "/auth/refresh", {"refresh_token": "bogus"}).status, 400, "unknown token")
    stats = call("GET", p + "/_stats").json()
    eq((stats["logins"], stats["refreshCalls"]), (1, 4), "auth stats")


@case
def auth_expiry_and_config() -> None:
    p = ns()
    tok = login(p, ttl=0)
    r = call("GET", p + "/me", headers={"Authorization": "Bearer " + tok["access_token"]})
    eq((r.status, r.header("WWW-Authenticate")), (401, 'Bearer error="invalid_token"'), "expired token")
    tok = login(p, ttl=0.5)
    eq(call("GET", p + "/me", headers={"Authorization": "Bearer " + tok["access_token"]}).status, 200, "fresh")
    time.sleep(0.6)
    eq(call("GET", p + "/me", headers={"Authorization": "Bearer " + tok["access_token"]}).status, 401, "expired")
    r = call("POST", p + "/auth/config", {"accessTtl": 60, "refreshDelay": 0.5, "refreshFails": None})
    eq(r.json(), {"accessTtl": 60, "refreshDelay": 0.5, "refreshFails": None, "clockSkew": 0,
                  "omitExpiresIn": False}, "config")
    # parallel refreshes with the same token: exactly one wins
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        codes = sorted(pool.map(lambda _: call("POST", p + "/auth/refresh",
                                               {"refresh_token": tok["refresh_token"]}).status, range(4)))
    eq(codes, [200, 400, 400, 400], "parallel refresh")
    call("POST", p + "/auth/config", {"refreshDelay": 0, "refreshFails": "503"})
    tok = login(p)
    eq(call("POST", p + "/auth/refresh", {"refresh_token": tok["refresh_token"]}).status, 503, "forced 503")
    call("POST", p + "/auth/config", {"refreshFails": "invalid_grant"})
    eq(call("POST", p + "/auth/refresh", {"refresh_token": tok["refresh_token"]}).status, 400, "forced grant")
    call("POST", p + "/auth/config", {"refreshFails": None})
    r = call("POST", p + "/auth/refresh", {"refresh_token": tok["refresh_token"]})
    eq((r.status, r.json()["expires_in"]), (200, 60), "refresh ttl from config")
    # a token from another namespace is rejected
    other = login(ns())
    eq(call("GET", p + "/me", headers={"Authorization": "Bearer " + other["access_token"]}).status, 401, "cross-ns")


@case
def http_semantics_routes() -> None:
    p = ns()
    r = call("GET", p + "/bytes?hex=636166e9&type=text/plain;%20charset=ISO-8859-1")
    eq((r.status, r.body, r.header("Content-Type")), (200, b"caf\xe9", "text/plain; charset=ISO-8859-1"), "bytes")
    eq(call("GET", p + "/bytes?hex=00").header("Content-Type"), "application/octet-stream", "bytes without type")
    r = call("GET", p + "/set-cookies")
    eq((r.headers.get_all("Set-Cookie"), r.json()["cookies"][1][:10]), (r.json()["cookies"], "theme=dark"), "set-cookies")
    r = call("GET", p + "/challenge?www=Basic%20realm%3D%22files%22&www=Bearer&status=403")
    eq((r.status, r.headers.get_all("WWW-Authenticate")), (403, ['Basic realm="files"', "Bearer"]), "challenge")
    eq(call("GET", p + "/segments/a%2Fb/%C3%A9").json()["segments"], ["a/b", "\u00e9"], "segments")
    call("POST", p + "/auth/config", {"clockSkew": -3600, "omitExpiresIn": True})
    r = call("POST", p + "/auth/login", {"username": "alice", "password": "secret"})
    claims = jwt_claims(r.json()["access_token"])
    check("expires_in" not in r.json() and abs(claims["iat"] - (time.time() - 3600)) < 60, "skewed token")
    served = email.utils.parsedate_to_datetime(r.header("Date")).timestamp()
    check(abs(served - (time.time() - 3600)) < 60, "skewed Date")


# --------------------------------------------------------------------------- orders & faults

@case
def orders_idempotency() -> None:
    p = ns()
    r1 = call("POST", p + "/orders", {"sku": "A", "qty": 1}, headers={"Idempotency-Key": "k-1"})
    eq(r1.status, 201, "first")
    r2 = call("POST", p + "/orders", {"qty": 1, "sku": "A"}, headers={"Idempotency-Key": "k-1"})
    eq((r2.status, r2.json(), r2.header("Idempotent-Replayed")), (201, r1.json(), "true"), "replay")
    r3 = call("POST", p + "/orders", {"sku": "B"}, headers={"Idempotency-Key": "k-1"})
    eq((r3.status, r3.json()["error"]["code"]), (422, "idempotency_key_reused"), "mismatch")
    call("POST", p + "/orders", {"sku": "C"})
    call("POST", p + "/orders", {"sku": "C"})
    # in flight -> 409
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        slow = pool.submit(call, "POST", p + "/orders?delay=0.5", {"sku": "D"}, {"Idempotency-Key": "k-2"})
        time.sleep(0.15)
        fast = pool.submit(call, "POST", p + "/orders", {"sku": "D"}, {"Idempotency-Key": "k-2"})
        eq((slow.result().status, fast.result().status), (201, 409), "in flight")
    stats = call("GET", p + "/_stats").json()
    eq((stats["ordersCreated"], stats["ordersByKey"]), (4, {"k-1": 1, "k-2": 1}), "order stats")
    eq(call("GET", p + "/orders").json()["total"], 4, "list")


@case
def drop_after_store_creates_order_without_response() -> None:
    p = ns()
    r = call("POST", p + "/_faults", {"path": "/orders", "method": "POST", "faults": [{"action": "drop_after_store"}]})
    eq(r.json()["remaining"], 1, "plan stored")
    host, port = BASE.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)  # urllib always asks for close
    conn.request("GET", p + "/items")
    resp = conn.getresponse()
    resp.read()
    eq(resp.getheader("Connection"), "close", "Connection: close while a drop is pending")
    conn.close()
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", p + "/orders", body=json.dumps({"sku": "Z"}),
                 headers={"Content-Type": "application/json", "Idempotency-Key": "drop-1"})
    try:
        conn.getresponse()
        raise AssertionError("expected no response")
    except (http.client.RemoteDisconnected, ConnectionError):
        pass
    finally:
        conn.close()
    stats = call("GET", p + "/_stats").json()
    eq((stats["ordersCreated"], stats["faults"]["served"], stats["faults"]["remaining"]), (1, 1, 0), "stored")
    r = call("POST", p + "/orders", {"sku": "Z"}, headers={"Idempotency-Key": "drop-1"})
    eq((r.status, r.header("Idempotent-Replayed")), (201, "true"), "retry replays")
    eq(call("GET", p + "/_stats").json()["ordersCreated"], 1, "no duplicate")
    # plain drop: nothing stored
    call("POST", p + "/_faults", {"path": "/orders", "faults": [{"action": "drop"}]})
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", p + "/orders", body=json.dumps({"sku": "Y"}), headers={"Content-Type": "application/json"})
    try:
        conn.getresponse()
        raise AssertionError("expected no response")
    except (http.client.RemoteDisconnected, ConnectionError):
        pass
    finally:
        conn.close()
    eq(call("GET", p + "/_stats").json()["ordersCreated"], 1, "drop stores nothing")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)  # urllib always asks for close
    conn.request("GET", p + "/items")
    resp = conn.getresponse()
    resp.read()
    eq(resp.getheader("Connection"), None, "keep-alive again once no drop is pending")
    conn.close()


@case
def fault_503_retry_after_then_success() -> None:
    p = ns()
    call("POST", p + "/_faults", {"path": "/items/{id}", "method": "GET",
                                  "faults": [{"status": 503, "retryAfter": "1"}, {"status": 429, "retryAfter": "date+2"},
                                             {"status": 500, "body": "oops"}]})
    r = call("GET", p + "/items/1")
    eq((r.status, r.header("Retry-After"), r.json()["error"]["code"]), (503, "1", "injected_fault"), "503")
    r = call("GET", p + "/items/2")
    eq(r.status, 429, "429")
    check(r.header("Retry-After").endswith(" GMT"), "http-date retry-after")
    r = call("GET", p + "/items/2")
    eq((r.status, r.body), (500, b"oops"), "custom body")
    eq(call("GET", p + "/items/1").status, 200, "then success")
    stats = call("GET", p + "/_stats").json()
    eq((stats["requests"]["GET /items/{id}"], stats["rawRequests"]["GET /items/1"]), (4, 2), "request counts")
    log = call("GET", p + "/_requests?path=/items/{id}").json()["requests"]
    eq(len(log), 4, "request log")


@case
def other_fault_actions() -> None:
    p = ns()
    host, port = BASE.split("//")[1].split(":")
    call("POST", p + "/_faults", [{"path": "/echo*", "faults": [{"action": "truncate", "bytes": 5}]},
                                  {"path": "/status/{code}", "method": "GET", "faults": [{"action": "reset"}]}])
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", p + "/echo/x")
    resp = conn.getresponse()
    try:
        resp.read()
        raise AssertionError("expected a truncated body")
    except http.client.IncompleteRead as exc:
        eq(len(exc.partial), 5, "truncated bytes")
    conn.close()
    try:
        call("GET", p + "/status/200")
        raise AssertionError("expected a reset")
    except (ConnectionError, urllib.error.URLError, http.client.HTTPException):
        pass
    eq(call("GET", p + "/status/200").status, 200, "after faults")
    eq(call("GET", p + "/_faults").json()["remaining"], 0, "consumed")
    r = call("GET", "/status/418")
    eq((r.status, r.json()), (418, {"status": 418, "reason": "I'm a Teapot"}), "teapot")
    r = call("GET", "/cookies/delete?session")
    check("session=" in (r.header("Set-Cookie") or ""), "delete cookie")


# --------------------------------------------------------------------------- cache

@case
def cache_conditional_flow() -> None:
    p = ns()
    url = p + "/cache/resource/r1?cc=max-age%3D60&etag=1&lastModified=1&vary=Accept-Language"
    r = call("GET", url, headers={"Accept-Language": "de"})
    eq((r.status, r.header("Cache-Control"), r.header("ETag"), r.header("Vary")),
       (200, "max-age=60", '"v1"', "Accept-Language"), "first")
    check(r.header("Last-Modified") and r.header("Date"), "validators")
    eq((r.json()["version"], r.json()["lang"]), (1, "de"), "body")
    r = call("GET", url, headers={"If-None-Match": '"v1"'})
    eq((r.status, r.body, r.header("ETag"), r.header("Cache-Control")), (304, b"", '"v1"', "max-age=60"), "304")
    lm = call("GET", url).header("Last-Modified")
    eq(call("GET", url, headers={"If-Modified-Since": lm}).status, 304, "IMS 304")
    call("POST", p + "/cache/resource/r1/bump")
    r = call("GET", url, headers={"If-None-Match": '"v1"'})
    eq((r.status, r.header("ETag"), r.json()["version"]), (200, '"v2"', 2), "after bump")
    eq(call("GET", url, headers={"If-Modified-Since": lm}).status, 200, "IMS after bump")
    eq(call("GET", p + "/cache/resource/w?etag=weak").header("ETag"), 'W/"v1"', "weak")
    call("POST", p + "/cache/resource/r1/fail?status=503&count=2")
    eq([call("GET", url).status for _ in range(3)], [503, 503, 200], "fail count")
    s = call("GET", p + "/_stats").json()["cache"]["r1"]
    eq((s["requests"], s["conditionalRequests"], s["notModified"], s["lastIfNoneMatch"]),
       (9, 4, 2, '"v1"'), "cache stats")
    r = call("POST", p + "/cache/collection", {"x": 1})
    eq((r.status, r.header("Location")), (201, f"{p}/cache/collection/1"), "collection post")
    r = call("GET", p + "/cache/collection")
    eq((r.header("Cache-Control"), r.json()["count"]), ("max-age=60", 1), "collection get")
    eq(call("GET", p + "/_stats").json()["cacheCollection"]["gets"], 1, "collection stats")


@case
def graphql_post_get_errors_apq_and_idempotency() -> None:
    p = ns()
    accept = {"Accept": "application/graphql-response+json, application/json"}
    r = call("POST", p + "/graphql", {"query": "query L { items { name supplier { name } } }", "operationName": "L"},
             headers=accept)
    eq(r.status, 200, "partial status")
    eq(r.header("Content-Type"), "application/graphql-response+json; charset=utf-8", "media type")
    body = r.json()
    eq([i["supplier"] for i in body["data"]["items"]][2], None, "nulled supplier")
    eq((body["errors"][0]["path"], body["errors"][0]["extensions"]["code"]),
       (["items", 2, "supplier"], "SUPPLIER_UNAVAILABLE"), "partial error")
    r = call("POST", p + "/graphql", {"query": "query V { viewer { username } }"}, headers=accept)
    eq((r.status, r.json()["data"], r.json()["errors"][0]["extensions"]["code"]), (200, None, "UNAUTHENTICATED"), "auth")
    r = call("POST", p + "/graphql", {"query": "query X { nope }"}, headers=accept)
    eq((r.status, "data" in r.json()), (400, False), "validation with graphql-response+json")
    r = call("POST", p + "/graphql", {"query": "query X { nope }"}, headers={"Accept": "application/json"})
    eq(r.status, 200, "validation with application/json")
    document = "query I { item(id: 1) { name } }"
    sha = hashlib.sha256(document.encode()).hexdigest()
    ext = json.dumps({"persistedQuery": {"version": 1, "sha256Hash": sha}})
    get = p + "/graphql?" + urllib.parse.urlencode({"operationName": "I", "extensions": ext})
    eq(call("GET", get, headers=accept).json()["errors"][0]["message"], "PersistedQueryNotFound", "apq miss")
    full = p + "/graphql?" + urllib.parse.urlencode({"query": document, "operationName": "I", "extensions": ext})
    r = call("GET", full, headers=accept)
    eq((r.status, r.header("Cache-Control")), (200, "public, max-age=60"), "apq register")
    eq(call("GET", get, headers=accept).json(), {"data": {"item": {"name": "Widget"}}}, "apq hit")
    mutation = {"query": 'mutation M { createItem(input: {name: "N", price: 1}) { id } }'}
    eq(call("GET", p + "/graphql?" + urllib.parse.urlencode(mutation), headers=accept).status, 405, "mutation over GET")
    r1 = call("POST", p + "/graphql", mutation, headers={**accept, "Idempotency-Key": "m-1"})
    r2 = call("POST", p + "/graphql", mutation, headers={**accept, "Idempotency-Key": "m-1"})
    eq((r1.json(), r2.header("Idempotent-Replayed")), (r2.json(), "true"), "mutation replay")
    stats = call("GET", p + "/_stats").json()["graphql"]
    eq((stats["itemsCreated"], stats["replays"], stats["apq"]["misses"], stats["apq"]["hits"]), (1, 1, 1, 1), "stats")
    eq([e["kind"] for e in stats["log"] if e["operationName"] == "I"], ["hashOnly", "fullWithHash", "hashOnly"], "log")


@case
def offline_mutations() -> None:
    p = ns()
    k = {"Idempotency-Key": "k1"}
    eq(call("POST", p + "/mutations", {"a": 1}, headers=k).status, 201, "applied")
    eq(call("POST", p + "/mutations", {"a": 1}, headers=k).header("Idempotent-Replayed"), "true", "replayed")
    eq(call("POST", p + "/mutations", {"a": 2}, headers=k).status, 422, "key reused")
    eq(call("POST", p + "/mutations", {"invalid": True}).status, 422, "validation")
    eq(call("PUT", p + "/entities/e", {"value": 1}).status, 200, "entity v2")
    eq(call("PUT", p + "/entities/e", {"value": 2}, headers={"If-Match": '"v1"'}).status, 412, "stale If-Match")
    eq(call("PUT", p + "/entities/e", {"value": 2, "baseVersion": 1}).status, 409, "stale baseVersion")
    call("POST", p + "/_down", {"down": True})
    eq(call("POST", p + "/mutations", {"a": 3}).status, 503, "down")
    call("POST", p + "/_down", {"down": False})
    log = call("GET", p + "/mutations").json()
    eq((len(log["applied"]), log["replays"], log["mismatches"], log["refusedWhileDown"]), (2, 1, 1, 1), "log")


@case
def connections_counted() -> None:
    p = ns()
    host, port = urllib.parse.urlsplit(BASE).netloc.rsplit(":", 1)
    kept = http.client.HTTPConnection(host, int(port), timeout=30)
    for _ in range(3):  # three requests on one kept-alive connection
        kept.request("GET", p + "/items/1")
        kept.getresponse().read()
    kept.close()
    call("GET", p + "/items/1")  # urllib: a connection of its own
    s = call("GET", p + "/_stats").json()
    eq((s["totalRequests"], s["connections"]), (4, 2), "connections")


@case
def reset_namespace() -> None:
    p = ns()
    call("POST", p + "/items", {"name": "n", "price": 1})
    call("POST", p + "/_reset")
    s = call("GET", p + "/_stats").json()
    eq((s["items"]["count"], s["totalRequests"]), (3, 0), "reset")


# --------------------------------------------------------------------------- runner

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    global BASE
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", default=os.environ.get("COURIER_API_URL"))
    args = parser.parse_args()
    proc = None
    if not args.base_url:
        port_file = os.path.join(tempfile.mkdtemp(), "port")
        server = pathlib.Path(__file__).resolve().parent / "server.py"
        proc = subprocess.Popen([sys.executable, str(server), "--port", "0", "--port-file", port_file, "--quiet"])
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        args.base_url = f"http://127.0.0.1:{open(port_file).read().strip()}"
    BASE = args.base_url.rstrip("/")
    try:
        for run in CASES:
            run()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    passed = sum(1 for _, ok, _ in RESULTS if ok)
    failed = len(RESULTS) - passed
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
