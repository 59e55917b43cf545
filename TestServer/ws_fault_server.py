"""A second, independent WebSocket server for CourierRealtime's fault tests: raw asyncio sockets,
its own RFC 6455 handshake (hashlib + base64, no websockets/wsproto code) and frame parser, so
the client is not only checked against one implementation. It acts out the faults a library
server cannot be told to commit, and keeps server-side counters as the tests' proof.

Paths (``/ns/{ns}/{kind}?params``; a fourth segment, ``/ns/{ns}/{kind}/{tail}``, is served as
``kind`` and only recorded):
  echo                      echoes text and binary messages; answers a Close with the same code
  stop-reading              completes the handshake, then never reads again (small SO_RCVBUF: the
                            client's writes fill the TCP window and block)
  close-then-fin?code=&reason=    sends a Close, then closes TCP at once (FIN), reading nothing
  close-then-reset?code=&reason=  sends a Close, then resets TCP at once (SO_LINGER 0: RST)
  redirect?status=&location=      answers the handshake with a 3xx
  reject?status=&retry-after=     answers the handshake with that status (and that Retry-After;
                            with &retry-after-on=N, only the Nth handshake of the namespace's
                            rejects carries it)
  negotiate?protocol=&extensions= answers 101 selecting that subprotocol and/or extensions (sent
                            as they are, offered or not), then holds the connection until the
                            client's Close, which it answers
  ping-storm?n=             n pings ("ping 0"..) in one write; records the pongs' payloads in order
  double-close              two Close frames (1001 "first", 1000 "second") in one write; records
                            every Close the client sends, then "end" when it ends TCP
  flood?n=&size=            n binary messages of size bytes (message i filled with byte i % 256)
                            as fast as the client reads them; counts the bytes handed to the
                            socket ("floodSent"); then holds the connection until the client's
                            Close, which it answers
  too-big?size=             one binary message of size bytes, written in 64 KiB pieces while
                            reading; records the client's Close code, then answers it and closes
  drop-midway?first=&code=  connection 1 reads `first` data messages (default 1), counting them,
                            then sends a Close with `code` (default 1001) and resets TCP; every
                            later connection reads nothing (its client's writes fill the small
                            window and block), waits 0.3 s, then does the same: a peer that goes
                            away while a reconnecting client re-sends its subscriptions
GET /_slow-tls (plain HTTP): {"port", "connections", "requests"} of the slow TLS listener
  (``start_slow_tls``): it lets each client wait SLOW_TLS_DELAY s for the TLS handshake, then reads
  the upgrade request (counted in "requests") and never answers it.
GET /ns/{ns}/_stats (plain HTTP): {"handshakes": {kind: n}, "closes": {kind: [code|null]},
  "pongs": {kind: [payload, ...]}, "pongsInOrder": {kind: bool}, "messages": {kind: [n per
  connection]}, "headerNames": {kind: [[the request head's field names, lowercased and sorted]
  per handshake], "targets": [each handshake's request target as it arrived]}; close code null =
  Close without a code, "none" = TCP ended without a Close from the client.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
import ssl
import sys
import struct
import threading
import time
from collections import defaultdict
from urllib.parse import parse_qs, urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
RCVBUF = 4096  # the listening socket's SO_RCVBUF (inherited by accepted sockets)


class Stats:
    def __init__(self) -> None:
        self.handshakes: dict[str, int] = defaultdict(int)
        self.closes: dict[str, list] = defaultdict(list)
        self.pongs: dict[str, list[str]] = defaultdict(list)
        self.expected_pongs: dict[str, int] = {}
        self.flood_sent: dict[str, int] = defaultdict(int)
        self.messages: dict[str, list[int]] = defaultdict(list)
        self.header_names: dict[str, list[list[str]]] = defaultdict(list)
        self.targets: list[str] = []

    def as_json(self) -> dict:
        in_order = {kind: pongs == [f"ping {i}" for i in range(len(pongs))] for kind, pongs in self.pongs.items()}
        return {"handshakes": dict(self.handshakes), "closes": dict(self.closes),
                "pongCounts": {k: len(v) for k, v in self.pongs.items()}, "pongsInOrder": in_order,
                "floodSent": dict(self.flood_sent), "messages": dict(self.messages),
                "headerNames": dict(self.header_names), "targets": self.targets}


STATS: dict[str, Stats] = defaultdict(Stats)


def frame(opcode: int, payload: bytes = b"", fin: bool = True) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def close_frame(code: int | None, reason: str = "") -> bytes:
    return frame(CLOSE, b"" if code is None else struct.pack("!H", code) + reason.encode())


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One client frame, unmasked (clients must mask, RFC 6455 §5.3; an unmasked one is read as is)."""
    head = await reader.readexactly(2)
    opcode, masked, n = head[0] & 0x0F, head[1] & 0x80, head[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    key = await reader.readexactly(4) if masked else b"\0\0\0\0"
    data = bytearray(await reader.readexactly(n))
    for i in range(n):
        data[i] ^= key[i & 3]
    return opcode, bytes(data)


def close_code(payload: bytes):
    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None


async def read_until_close(reader: asyncio.StreamReader, stats: Stats, kind: str, on_pong=None) -> None:
    """Reads client frames until its Close (recorded) or the end of TCP (recorded as "none")."""
    try:
        while True:
            opcode, payload = await read_frame(reader)
            if opcode == PONG and on_pong is not None:
                on_pong(payload)
            elif opcode == CLOSE:
                stats.closes[kind].append(close_code(payload))
                return
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        stats.closes[kind].append("none")


def http_response(status: int, reason: str, fields: list[str], body: bytes = b"") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *fields, f"Content-Length: {len(body)}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError) as error:
        # Logged: a client test that sees "closed during the handshake" can tell this side's give-up.
        print(f"ws_fault_server: no request head ({type(error).__name__}); closing", file=sys.stderr, flush=True)
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    target = urlsplit(parts[1] if len(parts) >= 2 else "/")
    query = {k: v[0] for k, v in parse_qs(target.query).items()}
    path = [p for p in target.path.split("/") if p]
    fields = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
    try:
        if target.path == "/_slow-tls":
            body = json.dumps(SLOW_TLS).encode()
            writer.write(http_response(200, "OK", ["Content-Type: application/json"], body))
        elif target.path == "/_health":
            writer.write(http_response(200, "OK", ["Content-Type: text/plain"], b"ok"))
        elif len(path) == 3 and path[0] == "ns" and path[2] == "_stats":
            body = json.dumps(STATS[path[1]].as_json()).encode()
            writer.write(http_response(200, "OK", ["Content-Type: application/json"], body))
        elif len(path) in (3, 4) and path[0] == "ns":
            STATS[path[1]].targets.append(parts[1])
            await serve(path[1], path[2], query, fields, reader, writer)
        else:
            writer.write(http_response(404, "Not Found", []))
        await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        if not writer.is_closing():
            writer.close()


async def serve(ns: str, kind: str, query: dict, fields: dict, reader, writer) -> None:
    stats = STATS[ns]
    stats.handshakes[kind] += 1
    stats.header_names[kind].append(sorted(fields))
    key = fields.get("sec-websocket-key", "")
    if fields.get("upgrade", "").lower() != "websocket" or not key:
        writer.write(http_response(400, "Bad Request", []))
        return
    if kind == "redirect":
        status = int(query.get("status", "301"))
        location = query.get("location", "ws://127.0.0.1:9/elsewhere")
        writer.write(http_response(status, "Redirect", [f"Location: {location}"]))
        return
    if kind == "reject":
        only_on = int(query.get("retry-after-on", "0"))  # only the Nth handshake of the kind asks
        asks = "retry-after" in query and (only_on == 0 or stats.handshakes[kind] == only_on)
        retry_after = [f"Retry-After: {query['retry-after']}"] if asks else []
        writer.write(http_response(int(query.get("status", "404")), "Rejected", retry_after))
        return
    accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    response = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
                f"Sec-WebSocket-Accept: {accept}"]
    if kind == "negotiate":
        if query.get("protocol"):
            response.append(f"Sec-WebSocket-Protocol: {query['protocol']}")
        if query.get("extensions"):
            response.append(f"Sec-WebSocket-Extensions: {query['extensions']}")
    writer.write(("\r\n".join(response) + "\r\n\r\n").encode())
    await writer.drain()

    if kind == "negotiate":
        # Held open until the client closes (answered), so the client sees an open connection
        # for as long as it looks: a server that ended TCP at once raced the client's "open".
        try:
            await asyncio.wait_for(read_until_close(reader, stats, kind), 60)
        except asyncio.TimeoutError:
            return
        code = stats.closes[kind][-1] if stats.closes[kind] else "none"
        if code != "none":
            writer.write(close_frame(code if isinstance(code, int) else 1000))
            await writer.drain()
    elif kind == "stop-reading":
        writer.transport.pause_reading()
        # Hold the connection (reading nothing) until the client gives up and drops it.
        await asyncio.sleep(120)
    elif kind in ("close-then-fin", "close-then-reset"):
        writer.write(close_frame(int(query.get("code", "1008")), query.get("reason", "")))
        await writer.drain()
        if kind == "close-then-reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
    elif kind == "drop-midway":
        connection = stats.handshakes[kind]
        index = len(stats.messages[kind])
        stats.messages[kind].append(0)
        limit = int(query.get("first", "1")) if connection == 1 else 0
        if limit == 0:
            writer.transport.pause_reading()
            await asyncio.sleep(0.3)
        while stats.messages[kind][index] < limit:
            opcode, _ = await read_frame(reader)
            if opcode in (TEXT, BINARY):
                stats.messages[kind][index] += 1
        writer.write(close_frame(int(query.get("code", "1001")), "going away midway"))
        await writer.drain()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
    elif kind == "ping-storm":
        n = int(query.get("n", "2000"))
        got_all = asyncio.Event()

        def on_pong(payload: bytes) -> None:
            stats.pongs[kind].append(payload.decode(errors="replace"))
            if len(stats.pongs[kind]) >= n:
                got_all.set()

        reading = asyncio.create_task(read_until_close(reader, stats, kind, on_pong))
        writer.write(b"".join(frame(PING, f"ping {i}".encode()) for i in range(n)))
        await writer.drain()
        try:
            await asyncio.wait_for(got_all.wait(), 60)
        except asyncio.TimeoutError:
            pass
        writer.write(close_frame(1000, "storm over"))
        await writer.drain()
        await asyncio.wait_for(reading, 30)
    elif kind == "double-close":
        writer.write(close_frame(1001, "first") + close_frame(1000, "second"))
        await writer.drain()
        # Every Close the client sends, until it ends TCP.
        try:
            while True:
                opcode, payload = await asyncio.wait_for(read_frame(reader), 30)
                if opcode == CLOSE:
                    stats.closes[kind].append(close_code(payload))
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError, OSError):
            stats.closes[kind].append("end")  # the client ended TCP: nothing more can come
    elif kind == "flood":
        n, size = int(query.get("n", "400")), int(query.get("size", str(1 << 20)))
        reading = asyncio.create_task(read_until_close(reader, stats, kind))
        for i in range(n):
            if reading.done():
                return
            message = frame(BINARY, bytes([i % 256]) * size)
            # In 64 KiB pieces, counted once the socket took them (drain below the high-water mark).
            for offset in range(0, len(message), 65536):
                piece = message[offset:offset + 65536]
                writer.write(piece)
                await writer.drain()
                stats.flood_sent[kind] += len(piece)
        try:
            await asyncio.wait_for(reading, 120)
        except asyncio.TimeoutError:
            return
        if stats.closes[kind] and stats.closes[kind][-1] != "none":
            writer.write(close_frame(stats.closes[kind][-1] or 1000))
            await writer.drain()
    elif kind == "too-big":
        size = int(query.get("size", str(1 << 20)))
        reading = asyncio.create_task(read_until_close(reader, stats, kind))
        if size < 126:
            header = bytes([0x80 | BINARY, size])
        elif size < 65536:
            header = bytes([0x80 | BINARY, 126]) + struct.pack("!H", size)
        else:
            header = bytes([0x80 | BINARY, 127]) + struct.pack("!Q", size)
        writer.write(header)
        sent, piece = 0, b"\x07" * 65536
        while sent < size and not reading.done():
            chunk = piece[: min(len(piece), size - sent)]
            writer.write(chunk)
            sent += len(chunk)
            await writer.drain()
        await asyncio.wait_for(reading, 30)
        if stats.closes[kind] and stats.closes[kind][-1] != "none":
            writer.write(close_frame(stats.closes[kind][-1] or 1000))
            await writer.drain()
    elif kind == "echo":
        while True:
            try:
                opcode, payload = await read_frame(reader)
            except (asyncio.IncompleteReadError, ConnectionError, OSError):
                stats.closes[kind].append("none")
                return
            if opcode in (TEXT, BINARY):
                writer.write(frame(opcode, payload))
            elif opcode == PING:
                writer.write(frame(PONG, payload))
            elif opcode == CLOSE:
                stats.closes[kind].append(close_code(payload))
                writer.write(frame(CLOSE, payload[:2]))
                await writer.drain()
                return
            await writer.drain()


async def start(host: str):
    """Listens on a free port of ``host`` with a small receive buffer; returns the asyncio server."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    sock.bind((host, 0))
    return await asyncio.start_server(handle, sock=sock, limit=1 << 20)


SLOW_TLS_DELAY = 1.5
SLOW_TLS: dict = {"port": 0, "connections": 0, "requests": 0}


def start_slow_tls(host: str, context: ssl.SSLContext) -> int:
    """Starts the slow TLS listener on a free port of ``host``; returns the port. Each client waits
    SLOW_TLS_DELAY s for the TLS handshake (its connect phase), then the upgrade request is read
    and never answered: a client's connect timeout must bound both phases together. Blocking
    sockets on threads of their own: an asyncio stream would read the ClientHello before TLS
    started."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, 0))
    listener.listen(64)

    def serve_one(conn: socket.socket) -> None:
        conn.settimeout(60)
        with conn:
            time.sleep(SLOW_TLS_DELAY)
            try:
                tls = context.wrap_socket(conn, server_side=True)
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = tls.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                SLOW_TLS["requests"] += 1
                tls.recv(1)  # until the client gives up and closes
            except (OSError, ssl.SSLError):
                pass

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            SLOW_TLS["connections"] += 1
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    SLOW_TLS["port"] = listener.getsockname()[1]
    return SLOW_TLS["port"]
