"""Self-signed test certificates for the TLS servers (tls_server.py, realtime_server.py)."""

from __future__ import annotations

import pathlib
import subprocess


def make_certificate(directory: pathlib.Path, prefix: str, common_name: str) -> tuple[pathlib.Path, pathlib.Path]:
    """A self-signed CA certificate for 127.0.0.1/localhost (1 day), made with the openssl CLI:
    ``{prefix}-cert.pem`` and ``{prefix}-key.pem`` in ``directory``."""
    cert, key = directory / f"{prefix}-cert.pem", directory / f"{prefix}-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", f"/CN={common_name}", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, capture_output=True)
    return cert, key
