#!/usr/bin/env python3
"""WebSocket servers for CourierRealtime's tests and the demo's "live" chapter.

    python TestServer/realtime_server.py --port-file DIR/realtime.port --info-file DIR/realtime.json --cert-dir DIR

Three listeners on free 127.0.0.1 ports (written to --info-file as JSON; --port-file gets the ws
port once all are up):
  ws    (websockets)  /ns/{ns}/feed, /ns/{ns}/auth-feed, /ns/{ns}/echo, /ns/{ns}/big-echo, GET /ns/{ns}/_control?action=...
  wss   (websockets + TLS, certificate self-signed at startup with the openssl CLI; CA file in the JSON)
  conformance (wsproto handshake + raw frames, see ws_conformance.py)
  faults (raw asyncio, its own handshake and framing: the second, independent server; see
          ws_fault_server.py) — peers that stop reading, Close then reset, 3xx, ping storms; its
          GET /_slow-tls names a TLS listener (this certificate) slow to finish TLS
  deflate, deflate_tight (websockets with permessage-deflate, RFC 7692: a second implementation
          of the extension for CourierRealtime's client) — /ns/{ns}/echo and /ns/{ns}/_control
          as on ws. deflate answers with websockets' defaults (context takeover, 12-bit windows);
          deflate_tight with server_no_context_takeover, client_no_context_takeover,
          server_max_window_bits=10 and client_max_window_bits=9. stats then include
          "extensions" (each connection's negotiated Sec-WebSocket-Extensions) and
          "compressedIn" (client frames that arrived with RSV1 set), "wireBytesIn"/"wireBytesOut" (payload
          bytes of data frames as they travelled, compressed or not).

Feed protocol (JSON text messages from the client): {"op":"subscribe","topic":T},
{"op":"unsubscribe","topic":T}, {"op":"post","topic":T,"text":S} (broadcast to T's subscribers as
{"type":"message","topic":T,"seq":N,"text":S}), {"op":"replay","topic":T,"from":A,"to":B}.
Control actions: stats, drop (abort every TCP connection of the namespace; &refuse=1 then answers
handshakes with 503 until accept), accept, restart (&down=SECONDS: drop, forget subscriptions,
refuse for that long), close (&code=&reason=: a closing handshake from the server on every
connection), skip (&n=N: the next post skips N sequence numbers), post (&topic=&text=).
auth-feed accepts only "Authorization: Bearer fresh-token" (401 otherwise; every token seen is in stats).
stats' "subscribed" lists the topics some open connection is subscribed to (what a post reaches).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import pathlib
import ssl
import sys
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from websockets.asyncio.server import serve  # noqa: E402
from websockets.datastructures import Headers  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.frames import Opcode  # noqa: E402
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory  # noqa: E402
from websockets.http11 import Response  # noqa: E402

import ws_conformance  # noqa: E402
import ws_fault_server  # noqa: E402
from certificates import make_certificate

VALID_TOKEN = "fresh-token"


class Namespace:
    def __init__(self) -> None:
        self.connections: set = set()
        self.connection_count = 0
        self.subscribes: list[list] = []  # [connection number, topic]
        self.unsubscribes: list[list] = []
        self.tokens: list[str | None] = []
        self.refused = 0
        self.refusing = False
        self.topics: dict[str, set] = {}
        self.seq: dict[str, int] = {}
        self.history: dict[str, list[dict]] = {}
        self.skip = 0
        self.close_codes: list = []
        self.extensions: list = []
        self.compressed_in = 0
        self.messages_in = 0  # messages the server received, and their payload bytes
        self.bytes_in = 0
        self.messages_out = 0  # echo and big-echo replies, and their payload bytes
        self.bytes_out = 0
        self.wire_bytes_in = 0  # with permessage-deflate: data frame payload bytes as they travelled
        self.wire_bytes_out = 0

    def stats(self) -> dict:
        return {"connections": self.connection_count, "open": len(self.connections), "subscribes": self.subscribes,
                "unsubscribes": self.unsubscribes, "subscribed": sorted(t for t, s in self.topics.items() if s), "tokens": self.tokens, "refused": self.refused,
                "closeCodes": self.close_codes, "extensions": self.extensions, "compressedIn": self.compressed_in,
                "messagesIn": self.messages_in, "bytesIn": self.bytes_in, "messagesOut": self.messages_out,
                "bytesOut": self.bytes_out, "wireBytesIn": self.wire_bytes_in, "wireBytesOut": self.wire_bytes_out}

    def drop_all(self) -> None:
        for connection in list(self.connections):
            connection.transport.abort()  # TCP drop: no Close frame (the client reports 1006)
        self.connections.clear()

    async def broadcast(self, topic: str, text: str) -> None:
        self.seq[topic] = self.seq.get(topic, 0) + 1 + self.skip
        self.skip = 0
        message = {"type": "message", "topic": topic, "seq": self.seq[topic], "text": text}
        self.history.setdefault(topic, []).append(message)
        for connection in list(self.topics.get(topic, ())):
            try:
                await connection.send(json.dumps(message))
            except ConnectionClosed:
                pass


NAMESPACES: dict[str, Namespace] = {}


def namespace(name: str) -> Namespace:
    return NAMESPACES.setdefault(name, Namespace())


def json_response(connection, body: object, status: HTTPStatus = HTTPStatus.OK) -> Response:
    data = json.dumps(body).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data))), ("Connection", "close")])
    return Response(status.value, status.phrase, headers, data)


def control(ns_name: str, query: dict) -> object:
    ns = namespace(ns_name)
    action = query.get("action", ["stats"])[0]
    if action == "drop":
        ns.refusing = query.get("refuse", ["0"])[0] == "1"
        ns.drop_all()
    elif action == "accept":
        ns.refusing = False
    elif action == "close":
        code, reason = int(query.get("code", ["1000"])[0]), query.get("reason", [""])[0]
        for connection in list(ns.connections):
            asyncio.get_running_loop().create_task(connection.close(code, reason))
    elif action == "restart":
        down = float(query.get("down", ["1"])[0])
        ns.refusing = True
        ns.drop_all()
        ns.topics.clear()

        def reopen() -> None:
            ns.refusing = False

        asyncio.get_running_loop().call_later(down, reopen)
    elif action == "skip":
        ns.skip = int(query.get("n", ["1"])[0])
    elif action == "post":
        asyncio.get_running_loop().create_task(ns.broadcast(query["topic"][0], query["text"][0]))
    return ns.stats()


def process_request(connection, request):
    url = urlsplit(request.path)
    parts = [p for p in url.path.split("/") if p]
    if url.path == "/_health":
        return json_response(connection, {"ok": True})
    if len(parts) != 3 or parts[0] != "ns":
        return json_response(connection, {"error": "no such path"}, HTTPStatus.NOT_FOUND)
    ns_name, kind = parts[1], parts[2]
    if kind == "_control":
        return json_response(connection, control(ns_name, parse_qs(url.query)))
    ns = namespace(ns_name)
    if kind not in ("feed", "auth-feed", "echo", "big-echo"):
        return json_response(connection, {"error": "no such path"}, HTTPStatus.NOT_FOUND)
    if ns.refusing:
        ns.refused += 1
        return json_response(connection, {"error": "refusing"}, HTTPStatus.SERVICE_UNAVAILABLE)
    if kind == "auth-feed":
        authorization = request.headers.get("Authorization")
        token = authorization[7:] if authorization and authorization.startswith("Bearer ") else None
        ns.tokens.append(token)
        if token != VALID_TOKEN:
            return json_response(connection, {"error": "unauthorized"}, HTTPStatus.UNAUTHORIZED)
    return None


def payload_size(message) -> int:
    """A message's payload bytes (RFC 6455 §5.6): UTF-8 bytes of text, the bytes of binary."""
    return len(message.encode()) if isinstance(message, str) else len(message)


async def handler(connection) -> None:
    parts = [p for p in urlsplit(connection.request.path).path.split("/") if p]
    ns, kind = namespace(parts[1]), parts[2]
    ns.connection_count += 1
    number = ns.connection_count
    ns.connections.add(connection)
    ns.extensions.append(connection.response.headers.get("Sec-WebSocket-Extensions"))
    if connection.protocol.extensions:
        # Counts the client's frames that arrive compressed (RSV1), server-side proof of compression.
        # Also counts the payload bytes of data frames as they travelled, both ways.
        counted = connection.protocol.extensions[0]
        decode, encode = counted.decode, counted.encode
        data_opcodes = (Opcode.CONT, Opcode.TEXT, Opcode.BINARY)

        def counting_decode(frame, *, max_size=None):
            if frame.rsv1:
                ns.compressed_in += 1
            if frame.opcode in data_opcodes:
                ns.wire_bytes_in += len(frame.data)
            return decode(frame, max_size=max_size)

        def counting_encode(frame):
            encoded = encode(frame)
            if encoded.opcode in data_opcodes:
                ns.wire_bytes_out += len(encoded.data)
            return encoded
        counted.decode = counting_decode
        counted.encode = counting_encode
    try:
        async for raw in connection:
            ns.messages_in += 1
            ns.bytes_in += payload_size(raw)
            if kind in ("echo", "big-echo"):
                # big-echo echoes each message doubled: over the client's limit when it set one at the size.
                reply = raw if kind == "echo" else raw * 2
                await connection.send(reply)
                ns.messages_out += 1
                ns.bytes_out += payload_size(reply)
                continue
            try:
                message = json.loads(raw)
            except (TypeError, ValueError):
                continue
            op, topic = message.get("op"), message.get("topic")
            if op == "subscribe":
                ns.subscribes.append([number, topic])
                ns.topics.setdefault(topic, set()).add(connection)
            elif op == "unsubscribe":
                ns.unsubscribes.append([number, topic])
                ns.topics.get(topic, set()).discard(connection)
            elif op == "post":
                await ns.broadcast(topic, str(message.get("text", "")))
            elif op == "replay":
                for item in ns.history.get(topic, []):
                    if message.get("from", 0) <= item["seq"] <= message.get("to", 0):
                        await connection.send(json.dumps(dict(item, replayed=True)))
    except ConnectionClosed:
        pass
    finally:
        # The close code the client sent (None: its Close had none; "none": no Close at all).
        received = connection.protocol.close_rcvd
        ns.close_codes.append("none" if received is None else int(received.code))
        ns.connections.discard(connection)
        for subscribers in ns.topics.values():
            subscribers.discard(connection)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--info-file", required=True)
    parser.add_argument("--cert-dir", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    cert, key = make_certificate(pathlib.Path(args.cert_dir), "realtime", "Courier test CA")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    options = dict(process_request=process_request, max_size=16 * 1024 * 1024, ping_interval=None, compression=None)
    plain = await serve(handler, args.host, 0, **options)
    secure = await serve(handler, args.host, 0, ssl=context, **options)
    conformance = await ws_conformance.start(args.host)
    faults = await ws_fault_server.start(args.host)
    ws_fault_server.start_slow_tls(args.host, context)
    deflate_options = dict(process_request=process_request, max_size=16 * 1024 * 1024, ping_interval=None, compression=None)
    deflate = await serve(handler, args.host, 0, extensions=[ServerPerMessageDeflateFactory(
        server_max_window_bits=12, client_max_window_bits=12, compress_settings={"memLevel": 5})], **deflate_options)
    deflate_tight = await serve(handler, args.host, 0, extensions=[ServerPerMessageDeflateFactory(
        server_no_context_takeover=True, client_no_context_takeover=True, server_max_window_bits=10,
        client_max_window_bits=9)], **deflate_options)
    info = {
        "deflate": deflate.sockets[0].getsockname()[1],
        "deflate_tight": deflate_tight.sockets[0].getsockname()[1],
        "faults": faults.sockets[0].getsockname()[1],
        "ws": plain.sockets[0].getsockname()[1],
        "wss": secure.sockets[0].getsockname()[1],
        "conformance": conformance.sockets[0].getsockname()[1],
        "ca_file": str(cert),
    }
    pathlib.Path(args.info_file).write_text(json.dumps(info))
    pathlib.Path(args.port_file).write_text(str(info["ws"]))
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
