"""Minimal HS256 JSON Web Tokens (RFC 7519 / RFC 7515 compact form), stdlib only."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any


class InvalidToken(Exception):
    pass


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or any(c not in _B64URL for c in text):
        raise InvalidToken("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _sign(signing_input: bytes, secret: bytes) -> str:
    return b64url_encode(hmac.new(secret, signing_input, hashlib.sha256).digest())


def encode(claims: dict[str, Any], secret: bytes) -> str:
    header = {"alg": "HS256", "typ": "JWT"}
    h = b64url_encode(json.dumps(header, separators=(",", ":")).encode())
    p = b64url_encode(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{h}.{p}".encode("ascii")
    return f"{h}.{p}.{_sign(signing_input, secret)}"


def decode(token: str, secret: bytes) -> dict[str, Any]:
    """Verify the signature and return the claims (expiry is checked by the caller)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("malformed token")
    h, p, s = parts
    try:
        header = json.loads(b64url_decode(h))
    except (ValueError, InvalidToken) as exc:
        raise InvalidToken("malformed header") from exc
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise InvalidToken("unsupported alg")
    expected = _sign(f"{h}.{p}".encode("ascii"), secret)
    if not hmac.compare_digest(expected, s):
        raise InvalidToken("bad signature")
    try:
        claims = json.loads(b64url_decode(p))
    except (ValueError, InvalidToken) as exc:
        raise InvalidToken("malformed claims") from exc
    if not isinstance(claims, dict):
        raise InvalidToken("malformed claims")
    return claims
