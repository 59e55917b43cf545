#!/usr/bin/env python3
"""HTTPS and HTTP/2 test server (hypercorn) for CourierCurl's TLS, pinning and HTTP/2 tests.

    python TestServer/tls_server.py --port-file DIR/tls.port --info-file DIR/tls.json --cert-dir DIR

https  TLS with ALPN h2 and http/1.1, certificate self-signed at startup (CA file in the JSON)
h2c    plain HTTP/1.1, or HTTP/2 with prior knowledge (RFC 9113 §3.3) — the port in --port-file

Routes (both listeners):
GET /_health            200
GET /tls/hello          {"httpVersion": "2" | "1.1", "scheme": "https" | "http", "stream": n}
GET /tls/bytes/{n}      n bytes (byte i = i % 251)

The info JSON: {"https": port, "h2c": port, "ca_file": path, "spki_sha256": base64 pin of the key}.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import pathlib
import socket
import subprocess

from hypercorn.asyncio import serve
from hypercorn.config import Config
from certificates import make_certificate

_BLOCK = bytes(i % 251 for i in range(251 * 256))


async def app(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/_health":
        await _reply(send, 200, b"ok", b"text/plain")
    elif path == "/tls/hello":
        body = json.dumps({"httpVersion": scope["http_version"], "scheme": scope["scheme"]}).encode()
        await _reply(send, 200, body, b"application/json")
    elif path.startswith("/tls/bytes/"):
        try:
            total = max(0, min(int(path.rsplit("/", 1)[1]), 1 << 30))
        except ValueError:
            await _reply(send, 400, b"bad size", b"text/plain")
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream"),
                                (b"content-length", str(total).encode())]})
        sent = 0
        while sent < total:
            n = min(len(_BLOCK), total - sent)
            await send({"type": "http.response.body", "body": _BLOCK[:n], "more_body": sent + n < total})
            sent += n
        if total == 0:
            await send({"type": "http.response.body", "body": b""})
    else:
        await _reply(send, 404, b"not found", b"text/plain")


async def _reply(send, status: int, body: bytes, content_type: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def spki_pin(cert: pathlib.Path) -> str:
    """base64(SHA-256(SubjectPublicKeyInfo DER)) of the certificate's key (RFC 7469 pin-sha256)."""
    pub = subprocess.run(["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"], check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pub, check=True,
                         capture_output=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def listening_socket(host: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--info-file", required=True)
    parser.add_argument("--cert-dir", required=True)
    args = parser.parse_args()

    cert, key = make_certificate(pathlib.Path(args.cert_dir), "tls", "Courier TLS test")
    secure, plain = listening_socket(args.host), listening_socket(args.host)
    config = Config()
    config.certfile, config.keyfile = str(cert), str(key)
    config.bind = [f"fd://{secure.fileno()}"]
    config.insecure_bind = [f"fd://{plain.fileno()}"]
    config.accesslog = None
    config.errorlog = "-"
    config.loglevel = "WARNING"
    # Idle connections stay open for a whole test run (hypercorn closes them after 5 s by default):
    # a starved test must not see its HTTP/2 connection closed between two requests.
    config.keep_alive_timeout = 300
    info = {"https": secure.getsockname()[1], "h2c": plain.getsockname()[1], "ca_file": str(cert),
            "spki_sha256": spki_pin(cert)}
    pathlib.Path(args.info_file).write_text(json.dumps(info))
    pathlib.Path(args.port_file).write_text(str(info["h2c"]))
    await serve(app, config)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
