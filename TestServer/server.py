#!/usr/bin/env python3
"""Courier reference API server (aiohttp).

    python TestServer/server.py --host 127.0.0.1 --port 0 --port-file /tmp/port

Every ``routes_*.py`` module in this directory (plus ``faults.py``) is imported and its
``setup(routes)`` called, so new routes go into a new file without touching this one.
See README.md for the routes.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import pathlib
import signal
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from aiohttp import web  # noqa: E402

import faults  # noqa: E402
import state  # noqa: E402
from common import (Routes, error_response, namespace_of, route_template, unprefixed_path)  # noqa: E402

MAX_BODY = 64 * 1024 * 1024


def route_modules() -> list[str]:
    return sorted(p.stem for p in HERE.glob("routes_*.py"))


# --------------------------------------------------------------------------- middlewares

@web.middleware
async def json_errors_middleware(request: web.Request, handler):
    """Turn aiohttp's plain-text 404/405/413 into the JSON error shape."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        return error_response(404, "not_found", f"No route for {request.method} {request.path}")
    except web.HTTPMethodNotAllowed as exc:
        resp = error_response(405, "method_not_allowed", f"{request.method} not allowed on {request.path}")
        resp.headers["Allow"] = ",".join(sorted(exc.allowed_methods))
        return resp
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, "payload_too_large", f"Body larger than {MAX_BODY} bytes")


@web.middleware
async def stats_middleware(request: web.Request, handler):
    """Counts every request (except /_* control routes) before faults are applied."""
    path = unprefixed_path(request)
    if not path.startswith("/_"):
        ns = request.app["store"].get(namespace_of(request))
        template = route_template(request)
        ns.total_requests += 1
        transport = request.transport
        if transport is not None and transport not in ns.connection_transports:
            ns.connection_transports.add(transport)
            ns.connections += 1
        if template is not None:
            ns.requests[f"{request.method} {template}"] += 1
        ns.raw_requests[f"{request.method} {path}"] += 1
        ns.request_seq += 1
        raw_query = request.raw_path.partition("?")[2]
        headers: dict[str, str] = {}
        for k, v in request.raw_headers:
            name = k.decode("latin-1")
            value = v.decode("utf-8", "replace")
            headers[name] = headers[name] + ", " + value if name in headers else value
        ns.request_log.append({
            "seq": ns.request_seq,
            "time": time.time(),
            "method": request.method,
            "path": path,
            "route": template,
            "rawQuery": raw_query,
            "headers": headers,
        })
    return await handler(request)


async def _on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    # aiohttp strips Content-Length from 204 responses; a handler may ask to keep "0"
    # (as many real servers send it) by setting request["force_content_length_zero"].
    if request.get("force_content_length_zero") and response.status == 204:
        response.headers["Content-Length"] = "0"


def create_app() -> web.Application:
    app = web.Application(
        middlewares=[json_errors_middleware, stats_middleware, faults.fault_middleware],
        client_max_size=MAX_BODY,
    )
    app["store"] = state.Store()
    app.on_response_prepare.append(_on_prepare)
    routes = Routes(app)
    faults.setup(routes)
    for name in route_modules():
        module = importlib.import_module(name)
        module.setup(routes)
    return app


# --------------------------------------------------------------------------- main

async def serve(host: str, port: int, port_file: str | None, access_log: bool) -> None:
    app = create_app()
    runner = web.AppRunner(app, access_log=logging.getLogger("aiohttp.access") if access_log else None,
                           handle_signals=False, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=1024)
    await site.start()
    real_port = runner.addresses[0][1]  # the real port when --port 0 was given
    url = f"http://{host}:{real_port}"
    if port_file:
        tmp = f"{port_file}.tmp{os.getpid()}"
        with open(tmp, "w") as fh:
            fh.write(f"{real_port}\n")
        os.replace(tmp, port_file)
    print(f"Courier test server listening on {url} (pid {os.getpid()})", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("Courier test server stopping", flush=True)
    await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the real port to this file once listening")
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    asyncio.run(serve(args.host, args.port, args.port_file, not args.quiet))
    return 0


if __name__ == "__main__":
    sys.exit(main())
