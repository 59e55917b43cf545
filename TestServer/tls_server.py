#!/usr/bin/env python3
"""HTTPS and HTTP/2 test server (hypercorn) for CourierCurl's TLS, pinning and HTTP/2 tests.

    python TestServer/tls_server.py --port-file DIR/tls.port --info-file DIR/tls.json --cert-dir DIR

https  TLS with ALPN h2 and http/1.1, certificate self-signed at startup (CA file in the JSON)
h2c    plain HTTP/1.1, or HTTP/2 with prior knowledge (RFC 9113 §3.3) — the port in --port-file

Routes (both listeners):
GET /_health            200
GET /tls/hello          {"httpVersion": "2" | "1.1", "scheme": "https" | "http", "clientPort": n}
                        (clientPort: the client's TCP port: one per connection, shared by h2 streams)
GET /tls/bytes/{n}      n bytes (byte i = i % 251)
GET /tls/redirect?to=URL[&status=N]   N (default 302) with Location: URL (an https → http hop for redirect tests)
GET /tls/set-cookie     200, Set-Cookie: courier_secure=…; Secure and courier_plain=… (both Path=/, host-only)
ANY /tls/probe/echo     {"method", "headers" (lower-cased names), "bodyLength", "bodySum" (sum % 65521), "http"}
GET /tls/probe/gzip/{n} n bytes (byte i = i % 251), Content-Encoding: gzip
GET /tls/probe/range/{n}  n bytes; a `Range: bytes=a-b` gets 206 with that part
GET /tls/probe/status/{code}  that status with ETag "v1" and no body

Certificate-failure listeners (TLS only; each answers any request with 200 "ok" when a client accepts it):
expired        signed by the CA file's key, validity ended yesterday        (X509_V_ERR_CERT_HAS_EXPIRED)
not_yet_valid  signed by the CA file's key, valid from tomorrow             (X509_V_ERR_CERT_NOT_YET_VALID)
wrong_host     signed by the CA file's key, for DNS:wrong.example only      (host name mismatch)
self_signed    a self-signed certificate that is not in the CA file         (X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT)
unknown_ca     signed by a CA that is not in the CA file                    (X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)

Mutual TLS and chain listeners (TLS only):
client_certificate  presents a leaf signed by the CA file's key and REQUIRES a client certificate
                    signed by a client CA made at startup; answers any request with 200 and
                    {"subject": "CN=…", "issuer": "CN=…"} of the client certificate it verified
                    (a client without one fails the TLS handshake: alert certificate_required)
chain               presents the chain CA file → leaf (the leaf signed by the CA file's key, the CA
                    sent along); answers 200 "ok". Pinning the CA's key must accept it.
chain_with_decoy    the same, with an unrelated self-signed certificate sent after the CA (off the
                    verified path). Pinning only the decoy's key must refuse it.

The info JSON: {"https": port, "h2c": port, "ca_file": path, "spki_sha256": base64 pin of the key,
"bad_certificates": {"expired": port, …}, "client_certificate": port, "chain": port,
"chain_leaf_spki_sha256": pin of the chain's leaf key, "chain_with_decoy": port,
"decoy_spki_sha256": pin of the decoy's key, "client_identity": {"certificate": PEM path,
"key": PEM path (unencrypted), "encrypted_key": PEM path (passphrase "courier"), "pkcs12": path
(passphrase "courier"), "subject": "CN=…"}, "other_identity": the same kinds of files for a client
certificate from a CA the listener does not trust}.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import hashlib
import json
import pathlib
import socket
import ssl
import subprocess
import urllib.parse

from hypercorn.asyncio import serve
from hypercorn.config import Config
from certificates import make_certificate, make_signed_certificate

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
        client = scope.get("client") or (None, None)
        body = json.dumps({"httpVersion": scope["http_version"], "scheme": scope["scheme"],
                           "clientPort": client[1]}).encode()
        await _reply(send, 200, body, b"application/json")
    elif path == "/tls/redirect":
        query = urllib.parse.parse_qs(scope["query_string"].decode())
        target = query.get("to", [""])[0]
        status = int(query.get("status", ["302"])[0])
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"location", target.encode()), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
    elif path == "/tls/set-cookie":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2"),
                                (b"set-cookie", b"courier_secure=secret-over-tls; Secure; Path=/"),
                                (b"set-cookie", b"courier_plain=visible; Path=/")]})
        await send({"type": "http.response.body", "body": b"ok"})
    elif path.startswith("/tls/probe/"):
        await _probe(scope, receive, send, path[len("/tls/probe/"):])
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


async def _probe(scope, receive, send, what: str) -> None:
    """Probe routes: echo (method, headers, body size+sum), gzip/N, range/N (honours Range), status/N."""
    import gzip as _gzip
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    kind, _, arg = what.partition("/")
    if kind == "echo":
        out = json.dumps({"method": scope["method"], "headers": headers, "bodyLength": len(body),
                          "bodySum": sum(body) % 65521, "http": scope["http_version"]}).encode()
        await _reply(send, 200, out, b"application/json")
    elif kind == "gzip":
        data = _BLOCK[:int(arg)] if int(arg) <= len(_BLOCK) else bytes(i % 251 for i in range(int(arg)))
        z = _gzip.compress(data)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream"), (b"content-encoding", b"gzip"),
                                (b"content-length", str(len(z)).encode())]})
        await send({"type": "http.response.body", "body": z})
    elif kind == "range":
        total = int(arg)
        data = bytes(i % 251 for i in range(total))
        rng = headers.get("range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start, end = int(a), (int(b) if b else total - 1)
            part = data[start:end + 1]
            await send({"type": "http.response.start", "status": 206,
                        "headers": [(b"content-range", f"bytes {start}-{end}/{total}".encode()),
                                    (b"content-length", str(len(part)).encode())]})
            await send({"type": "http.response.body", "body": part})
        else:
            await _reply(send, 200, data, b"application/octet-stream")
    elif kind == "status":
        code = int(arg)
        hs = [(b"etag", b'"v1"')]
        if code not in (204, 304):
            hs.append((b"content-length", b"0"))
        await send({"type": "http.response.start", "status": code, "headers": hs})
        await send({"type": "http.response.body", "body": b""})
    else:
        await _reply(send, 404, b"no probe", b"text/plain")


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


def bad_certificates(directory: pathlib.Path, ca: tuple[pathlib.Path, pathlib.Path]) -> dict[str, tuple[pathlib.Path, pathlib.Path]]:
    """The certificate of each certificate-failure listener (see the module docstring)."""
    now = dt.datetime.now(dt.timezone.utc)
    other_ca = make_certificate(directory, "tls-other-ca", "Courier untrusted test CA")
    return {
        "expired": make_signed_certificate(directory, "tls-expired", ca, not_before=now - dt.timedelta(days=3),
                                           not_after=now - dt.timedelta(days=1)),
        "not_yet_valid": make_signed_certificate(directory, "tls-not-yet-valid", ca,
                                                 not_before=now + dt.timedelta(days=1),
                                                 not_after=now + dt.timedelta(days=3)),
        "wrong_host": make_signed_certificate(directory, "tls-wrong-host", ca, subject_alt_name="DNS:wrong.example"),
        "self_signed": make_certificate(directory, "tls-self-signed", "Courier self-signed test"),
        "unknown_ca": make_signed_certificate(directory, "tls-unknown-ca", other_ca),
    }


async def serve_certificate(host: str, cert: pathlib.Path, key: pathlib.Path) -> asyncio.Server:
    """A TLS listener presenting ``cert`` that answers every request with 200 "ok" and closes."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            await writer.drain()
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError, asyncio.TimeoutError, asyncio.LimitOverrunError):
            pass  # the client refused the certificate: the handshake failed
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, 0, ssl=context)


async def serve_client_certificate(host: str, cert: pathlib.Path, key: pathlib.Path,
                                   client_ca: pathlib.Path) -> asyncio.Server:
    """A TLS listener that requires a client certificate signed by ``client_ca`` and answers
    every request with the subject and issuer of the certificate the client presented."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    context.load_verify_locations(str(client_ca))
    context.verify_mode = ssl.CERT_REQUIRED

    def name(parts) -> str:
        return ",".join(f"{k}={v}" for rdn in parts for k, v in [(("CN" if a == "commonName" else a), b) for a, b in rdn])

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
                peer = writer.get_extra_info("peercert") or {}
                body = json.dumps({"subject": name(peer.get("subject", ())), "issuer": name(peer.get("issuer", ()))}).encode()
                keep = b"connection: close" not in head.lower()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + (b"" if keep else b"\r\nConnection: close") + b"\r\n\r\n" + body)
                await writer.drain()
                if not keep:
                    break
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError, asyncio.TimeoutError, asyncio.LimitOverrunError):
            pass  # no (or an untrusted) client certificate: the handshake failed
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, 0, ssl=context)


def client_identity(directory: pathlib.Path, prefix: str, ca: tuple[pathlib.Path, pathlib.Path]) -> dict:
    """A client certificate signed by ``ca`` as PEM files (key plain and encrypted) and PKCS#12."""
    cert, key = make_signed_certificate(directory, prefix, ca, subject_alt_name="DNS:client.courier.test")
    encrypted, pkcs12 = directory / f"{prefix}-key-encrypted.pem", directory / f"{prefix}.p12"
    subprocess.run(["openssl", "pkey", "-in", str(key), "-aes256", "-passout", "pass:courier", "-out", str(encrypted)],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "pkcs12", "-export", "-in", str(cert), "-inkey", str(key), "-out", str(pkcs12),
                    "-passout", "pass:courier", "-name", prefix], check=True, capture_output=True)
    return {"certificate": str(cert), "key": str(key), "encrypted_key": str(encrypted), "pkcs12": str(pkcs12),
            "subject": f"CN=Courier {prefix} test"}


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
    listeners = {name: await serve_certificate(args.host, *pair)
                 for name, pair in bad_certificates(pathlib.Path(args.cert_dir), (cert, key)).items()}
    directory = pathlib.Path(args.cert_dir)
    # Mutual TLS: a client CA, a client certificate it signed, and one from a CA nobody trusts.
    client_ca = make_certificate(directory, "tls-client-ca", "Courier client CA")
    identity = client_identity(directory, "tls-client", client_ca)
    other = client_identity(directory, "tls-other-client", make_certificate(directory, "tls-other-client-ca", "Courier other CA"))
    mtls_leaf = make_signed_certificate(directory, "tls-mtls-server", (cert, key))
    mutual = await serve_client_certificate(args.host, *mtls_leaf, client_ca[0])
    # A chain: leaf signed by the CA file's key, presented with the CA after it.
    chain_leaf, chain_key = make_signed_certificate(directory, "tls-chain-leaf", (cert, key))
    chain_file = directory / "tls-chain-fullchain.pem"
    chain_file.write_text(chain_leaf.read_text() + cert.read_text())
    chain = await serve_certificate(args.host, chain_file, chain_key)
    # The same chain with an unrelated certificate sent along, off the verified path: a pin on its
    # key must not pass (an interceptor could append the genuine server's public certificate).
    decoy, _ = make_certificate(directory, "tls-decoy", "Courier decoy")
    decoy_file = directory / "tls-chain-with-decoy.pem"
    decoy_file.write_text(chain_leaf.read_text() + cert.read_text() + decoy.read_text())
    chain_with_decoy = await serve_certificate(args.host, decoy_file, chain_key)
    info = {"https": secure.getsockname()[1], "h2c": plain.getsockname()[1], "ca_file": str(cert),
            "spki_sha256": spki_pin(cert),
            "bad_certificates": {name: server.sockets[0].getsockname()[1] for name, server in listeners.items()},
            "client_certificate": mutual.sockets[0].getsockname()[1], "chain": chain.sockets[0].getsockname()[1],
            "chain_leaf_spki_sha256": spki_pin(chain_leaf), "client_identity": identity, "other_identity": other,
            "chain_with_decoy": chain_with_decoy.sockets[0].getsockname()[1], "decoy_spki_sha256": spki_pin(decoy)}
    pathlib.Path(args.info_file).write_text(json.dumps(info))
    pathlib.Path(args.port_file).write_text(str(info["h2c"]))
    await serve(app, config)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
