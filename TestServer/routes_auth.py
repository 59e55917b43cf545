"""OAuth-like auth: /auth/login, /auth/refresh, /auth/config, /auth/revoke, the authorization code
flow with PKCE (/oauth/authorize, /oauth/token) and protected routes."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import web

import jwt_hs256
import state
from common import error_response, http_date, json_response, namespace_of, state_of

SECRET = secrets.token_bytes(32)  # per server process
PASSWORD = "secret"
DEFAULT_TTL = 3600.0
ISSUER = "courier-test-server"
JTI_LOG_LIMIT = 500


def _num(x: float) -> int | float:
    x = round(float(x), 3)
    return int(x) if x.is_integer() else x


class AuthState:
    def __init__(self, ns: state.Namespace) -> None:
        self.ns_name = ns.name
        self.access_ttl = DEFAULT_TTL
        self.refresh_delay = 0.0
        self.refresh_fails: str | None = None
        # Seconds the server's clock is ahead of the real one (negative: behind). Applies to the
        # JWT iat/exp it issues and checks, and to the Date header of token responses.
        self.clock_skew = 0.0
        self.omit_expires_in = False
        self.refresh_tokens: dict[str, dict[str, Any]] = {}
        self.access_tokens: dict[str, dict[str, Any]] = {}
        self.revoked: set[str] = set()
        self.logins = 0
        self.login_failures = 0
        self.refresh_calls = 0
        self.refresh_successes = 0
        self.refresh_failures = 0
        self.authorized = 0
        self.unauthorized = 0
        self.jtis_used: list[str] = []
        # authorization code -> {"challenge", "redirect_uri", "client_id", "used"}
        self.codes: dict[str, dict[str, Any]] = {}
        self.authorize_requests = 0
        self.code_exchanges = 0
        self.code_exchange_successes = 0
        self.code_exchange_failures = 0

    def config(self) -> dict[str, Any]:
        return {"accessTtl": _num(self.access_ttl), "refreshDelay": _num(self.refresh_delay),
                "refreshFails": self.refresh_fails, "clockSkew": _num(self.clock_skew),
                "omitExpiresIn": self.omit_expires_in}

    def now(self) -> float:
        """The server's (possibly skewed) clock."""
        return time.time() + self.clock_skew

    def token_response(self, body: dict[str, Any]) -> web.Response:
        """A token endpoint answer whose Date header follows the server's clock."""
        if self.omit_expires_in:
            body = {k: v for k, v in body.items() if k != "expires_in"}
        return json_response(body, headers={"Date": http_date(self.now())})

    def issue(self, sub: str) -> dict[str, Any]:
        now = self.now()
        ttl = self.access_ttl
        jti = secrets.token_hex(8)
        claims = {"iss": ISSUER, "sub": sub, "ns": self.ns_name, "iat": _num(now), "exp": _num(now + ttl),
                  "jti": jti}
        access = jwt_hs256.encode(claims, SECRET)
        refresh = secrets.token_urlsafe(32)
        self.access_tokens[jti] = {"sub": sub, "exp": now + ttl}
        self.refresh_tokens[refresh] = {"sub": sub, "used": False, "issuedAt": now, "jti": jti}
        return {"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
                "expires_in": _num(ttl)}

    def stats(self) -> dict[str, Any]:
        return {
            "logins": self.logins,
            "refreshCalls": self.refresh_calls,
            "auth": {
                "logins": self.logins,
                "loginFailures": self.login_failures,
                "refreshCalls": self.refresh_calls,
                "refreshSuccesses": self.refresh_successes,
                "refreshFailures": self.refresh_failures,
                "authorized": self.authorized,
                "unauthorized": self.unauthorized,
                "jtisUsed": list(self.jtis_used),
                "authorizeRequests": self.authorize_requests,
                "codeExchanges": self.code_exchanges,
                "codeExchangeSuccesses": self.code_exchange_successes,
                "codeExchangeFailures": self.code_exchange_failures,
                "config": self.config(),
            },
        }


state.register_bucket("auth", AuthState)


async def _read_params(request: web.Request) -> dict[str, Any]:
    """JSON object or application/x-www-form-urlencoded body -> dict (empty when neither).

    A body that starts with "{" is read as JSON whatever its Content-Type (curl -d sends
    form content type by default); anything else is read as a form.
    """
    raw = await request.read()
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            body = json.loads(text)
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}
    return dict(parse_qsl(text, keep_blank_values=True))


def _oauth_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> web.Response:
    return json_response({"error": error, "error_description": description}, status=status, headers=headers)


def _ttl_value(raw: Any, name: str = "accessTtl") -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite")
    return value


async def login(request: web.Request) -> web.Response:
    auth = state_of(request).bucket("auth")
    params = await _read_params(request)
    try:
        ttl = _ttl_value(params.get("accessTtl", request.query.get("accessTtl")))
    except ValueError as exc:
        return _oauth_error(400, "invalid_request", str(exc))
    username = params.get("username")
    if not isinstance(username, str) or params.get("password") != PASSWORD:
        auth.login_failures += 1
        return _oauth_error(401, "invalid_grant", "Invalid username or password")
    if ttl is not None:
        auth.access_ttl = ttl
    auth.logins += 1
    return auth.token_response(auth.issue(username))


async def refresh(request: web.Request) -> web.Response:
    """POST /auth/refresh[?gate=G]: rotates the refresh token (a spent one is refused)."""
    auth = state_of(request).bucket("auth")
    auth.refresh_calls += 1
    params = await _read_params(request)
    if auth.refresh_delay > 0:
        await asyncio.sleep(auth.refresh_delay)
    if request.query.get("gate"):
        # ?gate=G: held until gate G opens (routes_gates), so a test can act while a refresh is
        # at the server, counted in refreshCalls.
        import routes_gates  # routes_gates imports this module

        _, timed_out = await routes_gates.pass_gate(request, request.query["gate"])
        if timed_out is not None:
            return timed_out
    if auth.refresh_fails == "503":
        auth.refresh_failures += 1
        return _oauth_error(503, "temporarily_unavailable", "Forced refresh failure (503)")
    if auth.refresh_fails == "503-echo":
        # A gateway whose error page repeats the request it could not pass on.
        auth.refresh_failures += 1
        presented = params.get("refresh_token")
        return _oauth_error(503, "temporarily_unavailable", f"upstream down, refresh_token {presented} not checked")
    if auth.refresh_fails == "invalid_grant":
        auth.refresh_failures += 1
        return _oauth_error(400, "invalid_grant", "Forced refresh failure")
    grant = params.get("grant_type")
    if grant not in (None, "refresh_token"):
        auth.refresh_failures += 1
        return _oauth_error(400, "unsupported_grant_type", f"grant_type {grant!r} not supported")
    token = params.get("refresh_token")
    if not isinstance(token, str) or not token:
        auth.refresh_failures += 1
        return _oauth_error(400, "invalid_request", "refresh_token is required")
    record = auth.refresh_tokens.get(token)
    if record is None or record["used"]:
        auth.refresh_failures += 1
        why = "Refresh token already used" if record else "Unknown refresh token"
        return _oauth_error(400, "invalid_grant", why)
    record["used"] = True
    auth.refresh_successes += 1
    return auth.token_response(auth.issue(record["sub"]))


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def _found(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location, "Cache-Control": "no-store"})


def _with_query(uri: str, params: dict[str, str]) -> str:
    return uri + ("&" if "?" in uri else "?") + urlencode(params)


async def authorize(request: web.Request) -> web.Response:
    """RFC 6749 §4.1.1 + RFC 7636 §4.3: validates the request and redirects (302) to redirect_uri
    with code+state (and iss, RFC 9207), or with error=access_denied when ?deny=1. Without a usable redirect_uri or
    client_id, answers 400 (never redirects to an unchecked URI)."""
    auth = state_of(request).bucket("auth")
    auth.authorize_requests += 1
    q = request.query
    redirect_uri = q.get("redirect_uri", "")
    client_id = q.get("client_id", "")
    if not redirect_uri or ":" not in redirect_uri or not client_id:
        return _oauth_error(400, "invalid_request", "client_id and an absolute redirect_uri are required")
    state = q.get("state")
    # RFC 9207 §2: the issuer identifier in every authorization response, success or error.
    back = {"state": state, "iss": ISSUER} if state is not None else {"iss": ISSUER}
    if q.get("response_type") != "code":
        return _found(_with_query(redirect_uri, {"error": "unsupported_response_type", **back}))
    challenge = q.get("code_challenge", "")
    if q.get("code_challenge_method") != "S256" or not (43 <= len(challenge) <= 128):
        return _found(_with_query(redirect_uri, {
            "error": "invalid_request", "error_description": "code_challenge with method S256 required", **back}))
    if q.get("deny") in ("1", "true"):
        return _found(_with_query(redirect_uri, {
            "error": "access_denied", "error_description": "The user denied the request", **back}))
    code = secrets.token_urlsafe(24)
    auth.codes[code] = {"challenge": challenge, "redirect_uri": redirect_uri, "client_id": client_id,
                        "used": False, "sub": q.get("login_hint") or "alice"}
    return _found(_with_query(redirect_uri, {"code": code, **back}))


async def token(request: web.Request) -> web.Response:
    """RFC 6749 §4.1.3 + RFC 7636 §4.6: grant_type=authorization_code with code, redirect_uri,
    client_id and code_verifier; the code is single use. refresh_token grants go to /auth/refresh."""
    auth = state_of(request).bucket("auth")
    params = await _read_params(request)
    auth.code_exchanges += 1
    if params.get("grant_type") != "authorization_code":
        auth.code_exchange_failures += 1
        return _oauth_error(400, "unsupported_grant_type", f"grant_type {params.get('grant_type')!r} not supported")
    record = auth.codes.get(str(params.get("code", "")))
    verifier = str(params.get("code_verifier", ""))
    why = None
    if record is None:
        why = "Unknown authorization code"
    elif record["used"]:
        why = "Authorization code already used"
    elif params.get("redirect_uri") != record["redirect_uri"]:
        why = "redirect_uri does not match the authorization request"
    elif params.get("client_id") != record["client_id"]:
        why = "client_id does not match the authorization request"
    elif not (43 <= len(verifier) <= 128) or _s256(verifier) != record["challenge"]:
        why = "code_verifier does not match the code_challenge"
    if record is not None:
        record["used"] = True  # single use, even when this attempt fails (RFC 6749 §4.1.2)
    if why is not None:
        auth.code_exchange_failures += 1
        return _oauth_error(400, "invalid_grant", why)
    auth.code_exchange_successes += 1
    auth.logins += 1
    return auth.token_response(auth.issue(record["sub"]))


async def get_config(request: web.Request) -> web.Response:
    return json_response(state_of(request).bucket("auth").config())


async def set_config(request: web.Request) -> web.Response:
    auth = state_of(request).bucket("auth")
    params = await _read_params(request)
    try:
        if "accessTtl" in params:
            ttl = _ttl_value(params["accessTtl"])
            auth.access_ttl = DEFAULT_TTL if ttl is None else ttl
        if "refreshDelay" in params:
            delay = _ttl_value(params["refreshDelay"], "refreshDelay")
            auth.refresh_delay = max(0.0, delay or 0.0)
    except ValueError as exc:
        return _oauth_error(400, "invalid_request", str(exc))
    if "clockSkew" in params:
        try:
            auth.clock_skew = _ttl_value(params["clockSkew"], "clockSkew") or 0.0
        except ValueError as exc:
            return _oauth_error(400, "invalid_request", str(exc))
    if "omitExpiresIn" in params:
        auth.omit_expires_in = params["omitExpiresIn"] in (True, "true", "1")
    if "refreshFails" in params:
        fails = params["refreshFails"]
        if fails is not None:
            fails = str(fails)
        if fails not in (None, "", "invalid_grant", "503", "503-echo"):
            return _oauth_error(400, "invalid_request", 'refreshFails must be "invalid_grant", "503", "503-echo" or null')
        auth.refresh_fails = fails or None
    return json_response(auth.config())


async def revoke(request: web.Request) -> web.Response:
    auth = state_of(request).bucket("auth")
    params = await _read_params(request)
    jti = params.get("jti")
    if jti:
        auth.revoked.add(str(jti))
        revoked = [str(jti)]
    else:
        revoked = sorted(auth.access_tokens)
        auth.revoked.update(revoked)
    return json_response({"revoked": revoked})


# --------------------------------------------------------------------------- protected resources

def authenticate(request: web.Request) -> tuple[dict[str, Any] | None, web.Response | None]:
    """Validate ``Authorization: Bearer <jwt>``; returns (claims, None) or (None, 401 response)."""
    auth = state_of(request).bucket("auth")
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        auth.unauthorized += 1
        return None, _oauth_error(401, "unauthorized", "Missing bearer token",
                                  headers={"WWW-Authenticate": "Bearer"})

    def invalid(why: str) -> tuple[None, web.Response]:
        auth.unauthorized += 1
        return None, _oauth_error(401, "invalid_token", why,
                                  headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})

    try:
        claims = jwt_hs256.decode(token, SECRET)
    except jwt_hs256.InvalidToken as exc:
        return invalid(f"Invalid token: {exc}")
    if claims.get("ns") != namespace_of(request):
        return invalid("Token was issued for another namespace")
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or auth.now() >= exp:
        return invalid("The access token expired")
    if claims.get("jti") in auth.revoked:
        return invalid("The access token was revoked")
    auth.authorized += 1
    auth.jtis_used.append(str(claims.get("jti")))
    del auth.jtis_used[:-JTI_LOG_LIMIT]
    return claims, None


def _auth_info(claims: dict[str, Any]) -> dict[str, Any]:
    return {"sub": claims.get("sub"), "jti": claims.get("jti"), "exp": claims.get("exp"), "iat": claims.get("iat")}


def _auth_headers(claims: dict[str, Any]) -> dict[str, str]:
    return {"X-Auth-Sub": str(claims.get("sub")), "X-Auth-Jti": str(claims.get("jti"))}


async def me(request: web.Request) -> web.Response:
    claims, err = authenticate(request)
    if err:
        return err
    return json_response({"username": claims.get("sub"), **_auth_info(claims), "namespace": claims.get("ns")},
                         headers=_auth_headers(claims))


async def protected_items(request: web.Request) -> web.Response:
    claims, err = authenticate(request)
    if err:
        return err
    items = sorted(state_of(request).bucket("items").items.values(), key=lambda it: it["id"])
    return json_response({"items": items, "total": len(items), "limit": len(items), "offset": 0,
                          "auth": _auth_info(claims)}, headers=_auth_headers(claims))


async def protected_item(request: web.Request) -> web.Response:
    claims, err = authenticate(request)
    if err:
        return err
    items = state_of(request).bucket("items").items
    try:
        item = items.get(int(request.match_info["id"]))
    except ValueError:
        item = None
    if item is None:
        return error_response(404, "not_found", f"Item {request.match_info['id']} not found",
                              headers=_auth_headers(claims))
    return json_response({**item, "auth": _auth_info(claims)}, headers=_auth_headers(claims))


def setup(routes) -> None:
    routes.post("/auth/login", login)
    routes.post("/auth/refresh", refresh)
    routes.get("/oauth/authorize", authorize)
    routes.post("/oauth/token", token)
    routes.get("/auth/config", get_config)
    routes.post("/auth/config", set_config)
    routes.post("/auth/revoke", revoke)
    routes.get("/me", me)
    routes.get("/protected/items", protected_items)
    routes.get("/protected/items/{id}", protected_item)
