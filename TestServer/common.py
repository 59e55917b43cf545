"""Shared helpers for the Courier reference server.

Route modules import from here:

* ``Routes`` registers a handler under both ``/path`` and ``/ns/{ns}/path``.
* ``namespace_of(request)`` / ``state_of(request)`` give the namespace of a request.
* ``prefix_of(request)`` is ``/ns/<ns>`` for prefixed requests, ``""`` otherwise
  (use it to build ``Location`` headers).
* ``error_response`` builds the common ``{"error": {"code", "message"}}`` body.
* ``iso_ms`` / ``http_date`` / ``retry_after_value`` format times.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import time
from typing import Any, Awaitable, Callable

from aiohttp import web

NS_PREFIX = "/ns/{ns}"
NS_HEADER = "X-Namespace"
DEFAULT_NS = "default"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_WEEKDAYS_LONG = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


class Routes:
    """Registers every route twice: plain and under the ``/ns/{ns}`` prefix."""

    def __init__(self, app: web.Application) -> None:
        self.app = app

    def add(self, method: str, path: str, handler: Handler, *, head: bool = True) -> None:
        """Register ``handler`` for ``method`` (``"*"`` = any) at ``path`` and ``/ns/{ns}`` + ``path``.

        GET routes also answer HEAD (aiohttp drops the body) unless ``head=False``.
        """
        router = self.app.router
        for full in (path, NS_PREFIX + path):
            if method.upper() == "GET":
                router.add_get(full, handler, allow_head=head)
            else:
                router.add_route(method.upper(), full, handler)

    def get(self, path: str, handler: Handler) -> None:
        self.add("GET", path, handler)

    def post(self, path: str, handler: Handler) -> None:
        self.add("POST", path, handler)

    def put(self, path: str, handler: Handler) -> None:
        self.add("PUT", path, handler)

    def patch(self, path: str, handler: Handler) -> None:
        self.add("PATCH", path, handler)

    def delete(self, path: str, handler: Handler) -> None:
        self.add("DELETE", path, handler)

    def any(self, path: str, handler: Handler) -> None:
        self.add("*", path, handler)


# --------------------------------------------------------------------------- namespaces

_PREFIX_RE = re.compile(r"^/ns/([^/]+)(/.*)?$")


def namespace_of(request: web.Request) -> str:
    """``/ns/{ns}`` prefix wins, then the ``X-Namespace`` header, then ``default``."""
    info = request.match_info
    ns = info.get("ns") if info is not None else None
    if ns:
        return ns
    m = _PREFIX_RE.match(request.path)  # unmatched routes (404) have no match_info
    if m:
        return m.group(1)
    header = request.headers.get(NS_HEADER, "").strip()
    return header or DEFAULT_NS


def has_prefix(request: web.Request) -> bool:
    return _PREFIX_RE.match(request.path) is not None


def prefix_of(request: web.Request) -> str:
    """``/ns/<ns>`` when the request used the path prefix, else ``""``."""
    m = _PREFIX_RE.match(request.path)
    if m:
        # keep the segment as it was sent (percent-encoded) so it can go into a Location
        return "/ns/" + request.raw_path.split("?", 1)[0].split("/")[2]
    return ""


def unprefixed_path(request: web.Request) -> str:
    """The request path (decoded) without the ``/ns/<ns>`` prefix."""
    path = request.path
    m = _PREFIX_RE.match(path)
    if m:
        return m.group(2) or "/"
    return path


def route_template(request: web.Request) -> str | None:
    """Route template without the ns prefix, e.g. ``/items/{id}``; None when unmatched."""
    try:
        route = request.match_info.route
        resource = route.resource
    except Exception:
        return None
    if resource is None:
        return None
    canonical = resource.canonical
    if canonical.startswith(NS_PREFIX):
        canonical = canonical[len(NS_PREFIX):] or "/"
    return canonical


def state_of(request: web.Request):
    """The ``Namespace`` object of this request (created and seeded on first use)."""
    store = request.app["store"]
    return store.get(namespace_of(request))


# --------------------------------------------------------------------------- responses

def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return web.Response(
        status=status,
        body=body.encode("utf-8"),
        content_type="application/json",
        charset="utf-8",
        headers=headers,
    )


def error_response(status: int, code: str, message: str, *, headers: dict[str, str] | None = None,
                   **extra: Any) -> web.Response:
    err: dict[str, Any] = {"code": code, "message": message}
    err.update(extra)
    return json_response({"error": err}, status=status, headers=headers)


async def read_json(request: web.Request) -> tuple[Any, web.Response | None]:
    """Parse the body as JSON. Returns (value, None) or (None, 400 response)."""
    raw = await request.read()
    if not raw:
        return None, error_response(400, "bad_request", "Request body must be JSON")
    try:
        return json.loads(raw.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError) as exc:
        return None, error_response(400, "bad_request", f"Malformed JSON body: {exc}")


def parse_float(value: str | None, default: float | None = None) -> float | None:
    if value is None or value == "":
        return default
    try:
        f = float(value)
    except ValueError:
        return default
    if math.isnan(f) or math.isinf(f):
        return default
    return f


# --------------------------------------------------------------------------- time formats

def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def iso_ms(ts: float | _dt.datetime) -> str:
    """ISO-8601 UTC with millisecond fraction and ``Z``: ``2026-05-25T22:46:27.580Z``."""
    if isinstance(ts, (int, float)):
        ts = _dt.datetime.fromtimestamp(ts, _dt.timezone.utc)
    ts = ts.astimezone(_dt.timezone.utc)
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _utc(ts: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(int(ts), _dt.timezone.utc)


def http_date(ts: float | None = None) -> str:
    """IMF-fixdate, e.g. ``Sun, 06 Nov 1994 08:49:37 GMT`` (locale independent)."""
    d = _utc(time.time() if ts is None else ts)
    return (f"{_WEEKDAYS[d.weekday()]}, {d.day:02d} {_MONTHS[d.month - 1]} {d.year:04d} "
            f"{d.hour:02d}:{d.minute:02d}:{d.second:02d} GMT")


def rfc850_date(ts: float) -> str:
    """Obsolete RFC 850 format, e.g. ``Sunday, 06-Nov-94 08:49:37 GMT``."""
    d = _utc(ts)
    return (f"{_WEEKDAYS_LONG[d.weekday()]}, {d.day:02d}-{_MONTHS[d.month - 1]}-{d.year % 100:02d} "
            f"{d.hour:02d}:{d.minute:02d}:{d.second:02d} GMT")


def asctime_date(ts: float) -> str:
    """Obsolete asctime format, e.g. ``Sun Nov  6 08:49:37 1994``."""
    d = _utc(ts)
    return (f"{_WEEKDAYS[d.weekday()]} {_MONTHS[d.month - 1]} {d.day:2d} "
            f"{d.hour:02d}:{d.minute:02d}:{d.second:02d} {d.year:04d}")


def parse_http_date(value: str | None) -> float | None:
    """Parse any of the three HTTP-date formats into a POSIX timestamp (None if invalid)."""
    if not value:
        return None
    value = value.strip()
    for fmt in ("%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y"):
        try:
            d = _dt.datetime.strptime(re.sub(r"\s+", " ", value), fmt)
        except ValueError:
            continue
        return d.replace(tzinfo=_dt.timezone.utc).timestamp()
    return None


_RETRY_DATE = re.compile(r"^(date|rfc850|asctime)\s*([+-]\s*\d+(?:\.\d+)?)?$", re.IGNORECASE)


def retry_after_value(spec: Any) -> str:
    """Turn a fault/status ``retryAfter`` spec into a header value.

    * a number or digit string -> delta-seconds, passed through (``"2"``)
    * ``date+N`` -> IMF-fixdate N seconds from now (rounded *up* to the next whole second)
    * ``rfc850+N`` / ``asctime+N`` -> the obsolete formats, same instant
    * anything else -> passed through verbatim (for malformed-header tests)
    """
    if isinstance(spec, bool):
        return str(spec).lower()
    if isinstance(spec, (int, float)):
        return str(int(spec)) if float(spec).is_integer() else str(spec)
    text = str(spec)
    m = _RETRY_DATE.match(text.strip())
    if not m:
        return text
    offset = float(m.group(2).replace(" ", "")) if m.group(2) else 0.0
    ts = math.ceil(time.time() + offset)
    kind = m.group(1).lower()
    if kind == "rfc850":
        return rfc850_date(ts)
    if kind == "asctime":
        return asctime_date(ts)
    return http_date(ts)


_BYTE_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", re.IGNORECASE)


def parse_byte_range(header: str, total: int) -> tuple[int, int] | None | str:
    """One ``bytes=`` range of a ``total``-byte representation (RFC 9110 §14.1.2) -> (first, last)
    inclusive; None = ignore the header (not one valid range, §14.2); "416" = unsatisfiable (§15.5.17)."""
    m = _BYTE_RANGE.fullmatch(header)
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    if m.group(1) == "":
        suffix = int(m.group(2))
        if suffix == 0 or total == 0:
            return "416"
        return max(0, total - suffix), total - 1
    first = int(m.group(1))
    if first >= total:
        return "416"
    last = int(m.group(2)) if m.group(2) else total - 1
    if last < first:
        return None
    return first, min(last, total - 1)
