#!/usr/bin/env python3
"""A tiny counting HTTP forward proxy for the proxy tests (environment `http_proxy`/`https_proxy`,
transport switches that ignore them).

    python TestServer/proxy_server.py --port-file DIR/proxy.port

absolute-form requests (`GET http://host:port/path`)  forwarded to host:port (Connection: close), counted
CONNECT host:port                                     tunnelled, counted
GET /_proxy/stats                                     {"requests": n, "connects": n, "targets": ["host:port", …],
                                                       "paths": [path of each forwarded request, …]}
GET /_health                                          200

Host names in --map (default courier-test.invalid=127.0.0.1) resolve to the given address, so a
client that cannot resolve a custom name itself (URLSession on Linux) can still reach it through
the proxy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import urllib.parse

STATS: dict = {"requests": 0, "connects": 0, "targets": [], "paths": []}
NAMES: dict[str, str] = {}


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def reply(writer: asyncio.StreamWriter, status: str, body: bytes, content_type: str = "text/plain") -> None:
    writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, asyncio.LimitOverrunError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = (lines[0].split(" ", 2) + ["", ""])[:3]
    fields = [line for line in lines[1:] if line]
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        STATS["connects"] += 1
        STATS["targets"].append(target)
        try:
            up_reader, up_writer = await asyncio.open_connection(NAMES.get(host, host), int(port))
        except (OSError, ValueError):
            reply(writer, "502 Bad Gateway", b"cannot connect")
            await writer.drain()
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        return
    if not target.startswith("http://"):
        if target == "/_proxy/stats":
            reply(writer, "200 OK", json.dumps(STATS).encode(), "application/json")
        elif target == "/_health":
            reply(writer, "200 OK", b"ok")
        else:
            reply(writer, "404 Not Found", b"not a proxy request")
        await writer.drain()
        writer.close()
        return
    url = urllib.parse.urlsplit(target)
    host, port = url.hostname or "", url.port or 80
    STATS["requests"] += 1
    STATS["targets"].append(f"{host}:{port}")
    length = 0
    kept = []
    for field in fields:
        name, _, value = field.partition(":")
        lower = name.strip().lower()
        if lower == "content-length":
            length = int(value.strip() or "0")
        if lower in ("connection", "proxy-connection", "keep-alive"):
            continue
        kept.append(field)
    body = await reader.readexactly(length) if length else b""
    path = url.path or "/"
    STATS["paths"].append(path)
    if url.query:
        path += "?" + url.query
    try:
        up_reader, up_writer = await asyncio.open_connection(NAMES.get(host, host), port)
    except OSError:
        reply(writer, "502 Bad Gateway", b"cannot connect")
        await writer.drain()
        writer.close()
        return
    up_writer.write(f"{method} {path} {version}\r\n".encode("latin-1")
                    + "".join(f"{field}\r\n" for field in kept).encode("latin-1")
                    + b"Connection: close\r\n\r\n" + body)
    await up_writer.drain()
    await pipe(up_reader, writer)
    up_writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--map", action="append", default=["courier-test.invalid=127.0.0.1"])
    args = parser.parse_args()
    for entry in args.map:
        name, _, address = entry.partition("=")
        NAMES[name] = address
    server = await asyncio.start_server(handle, args.host, 0)
    pathlib.Path(args.port_file).write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
