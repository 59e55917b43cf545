"""Test certificates for the TLS servers (tls_server.py, realtime_server.py), made with the openssl CLI."""

from __future__ import annotations

import datetime as _dt
import pathlib
import subprocess

# The host name the Secure-cookie tests use: not loopback-named (libcurl treats `localhost` and
# loopback addresses as secure contexts even over http), resolved to 127.0.0.1 by the client.
TEST_HOST_NAME = "courier-test.invalid"


def make_certificate(directory: pathlib.Path, prefix: str, common_name: str) -> tuple[pathlib.Path, pathlib.Path]:
    """A self-signed CA certificate for 127.0.0.1/localhost/courier-test.invalid (1 day):
    ``{prefix}-cert.pem`` and ``{prefix}-key.pem`` in ``directory``."""
    cert, key = directory / f"{prefix}-cert.pem", directory / f"{prefix}-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", f"/CN={common_name}",
                    "-addext", f"subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:{TEST_HOST_NAME}",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, capture_output=True)
    return cert, key


def _stamp(moment: _dt.datetime) -> str:
    return moment.astimezone(_dt.timezone.utc).strftime("%Y%m%d%H%M%SZ")


def make_signed_certificate(directory: pathlib.Path, prefix: str, ca: tuple[pathlib.Path, pathlib.Path], *,
                            subject_alt_name: str = "IP:127.0.0.1,DNS:localhost",
                            not_before: _dt.datetime | None = None,
                            not_after: _dt.datetime | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """A leaf certificate signed by ``ca`` (cert, key) with the given validity and names, made with
    ``openssl ca`` (the only CLI path in OpenSSL 3.0 to a start date in the past or the future):
    ``{prefix}-cert.pem`` and ``{prefix}-key.pem`` in ``directory``."""
    now = _dt.datetime.now(_dt.timezone.utc)
    not_before = not_before or now - _dt.timedelta(hours=1)
    not_after = not_after or now + _dt.timedelta(days=1)
    work = directory / f"{prefix}-ca"
    work.mkdir(exist_ok=True)
    (work / "index.txt").write_text("")
    (work / "serial").write_text("01\n")
    config = work / "ca.cnf"
    config.write_text(
        "[ca]\ndefault_ca = test\n"
        f"[test]\ndatabase = {work / 'index.txt'}\nnew_certs_dir = {work}\nserial = {work / 'serial'}\ndefault_md = sha256\n"
        "policy = anything\nunique_subject = no\ncopy_extensions = none\nx509_extensions = leaf\n"
        "[anything]\ncommonName = supplied\n"
        f"[leaf]\nbasicConstraints = critical,CA:FALSE\nsubjectAltName = {subject_alt_name}\n")
    cert, key, request = directory / f"{prefix}-cert.pem", directory / f"{prefix}-key.pem", work / "leaf.csr"
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(request),
                    "-subj", f"/CN=Courier {prefix} test"], check=True, capture_output=True)
    subprocess.run(["openssl", "ca", "-batch", "-config", str(config), "-cert", str(ca[0]), "-keyfile", str(ca[1]),
                    "-in", str(request), "-out", str(cert), "-notext",
                    "-startdate", _stamp(not_before), "-enddate", _stamp(not_after)],
                   check=True, capture_output=True)
    return cert, key
