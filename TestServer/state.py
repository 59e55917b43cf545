"""Per-namespace server state.

Every feature keeps its state in a *bucket* of the namespace. A route module
registers its bucket class once at import time::

    class OrdersState:
        def __init__(self, ns): ...
        def stats(self) -> dict: ...   # optional, merged into GET /_stats

    state.register_bucket("orders", OrdersState)

and looks it up per request with ``state_of(request).bucket("orders")``.
Buckets are created eagerly for every new namespace (so stats always contain
every key, zeroed) and thrown away by ``POST /_reset``.
"""

from __future__ import annotations

import collections
import time
import weakref
from typing import Any, Callable

_BUCKETS: dict[str, Callable[["Namespace"], Any]] = {}

REQUEST_LOG_LIMIT = 500


def register_bucket(name: str, factory: Callable[["Namespace"], Any]) -> None:
    if name in _BUCKETS and _BUCKETS[name] is not factory:
        raise ValueError(f"bucket {name!r} registered twice")
    _BUCKETS[name] = factory


class Namespace:
    def __init__(self, name: str) -> None:
        self.name = name
        self.created = time.time()
        # request counters, filled by the stats middleware in server.py
        self.requests: collections.Counter[str] = collections.Counter()
        self.raw_requests: collections.Counter[str] = collections.Counter()
        self.total_requests = 0
        # TCP connections that carried a counted request (a transport is counted once; the weak
        # set forgets closed ones, the count stays): how often a client opened a new connection.
        self.connections = 0
        self.connection_transports: weakref.WeakSet[Any] = weakref.WeakSet()
        self.request_log: collections.deque[dict[str, Any]] = collections.deque(maxlen=REQUEST_LOG_LIMIT)
        self.request_seq = 0
        self._buckets: dict[str, Any] = {}
        for key, factory in _BUCKETS.items():
            self._buckets[key] = factory(self)

    def bucket(self, name: str) -> Any:
        b = self._buckets.get(name)
        if b is None:  # registered after this namespace was created
            b = self._buckets[name] = _BUCKETS[name](self)
        return b

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "namespace": self.name,
            "totalRequests": self.total_requests,
            "connections": self.connections,
            "requests": dict(self.requests),
            "rawRequests": dict(self.raw_requests),
        }
        for key in _BUCKETS:
            b = self.bucket(key)
            fn = getattr(b, "stats", None)
            if fn is not None:
                out.update(fn())
        return out


class Store:
    def __init__(self) -> None:
        self._namespaces: dict[str, Namespace] = {}

    def get(self, name: str) -> Namespace:
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = Namespace(name)
        return ns

    def reset(self, name: str) -> Namespace:
        self._namespaces.pop(name, None)
        return self.get(name)

    def reset_all(self) -> None:
        self._namespaces.clear()

    def names(self) -> list[str]:
        return sorted(self._namespaces)
