"""A strict, streaming multipart/form-data parser (RFC 7578 on RFC 2046 §5.1.1) for the tests.

Stricter than real servers on purpose, so a client bug shows up as a 400 instead of being
forgiven:

* ``Content-Type`` is ``multipart/form-data`` with a ``boundary`` of 1-70 ``bchars`` (RFC 2046).
* No preamble: the body starts with ``--boundary CRLF``; every later delimiter is
  ``CRLF --boundary`` followed by CRLF (no transport padding); the close delimiter
  ``CRLF --boundary--`` is followed by exactly one CRLF and nothing else (no epilogue).
* Header lines end in CRLF (a bare LF or CR is an error); ``Content-Disposition: form-data``
  with a quoted ``name`` is required; ``filename`` is a quoted string whose ``\\"`` and ``\\\\``
  quoted-pairs are undone (RFC 9110 §5.6.4); ``filename*`` is refused (RFC 7578 §4.2); a control
  character other than HTAB inside a quoted string is an error.

The body is read chunk by chunk: a part's bytes are hashed as they arrive and never buffered, so
a 512 MiB upload costs the server a few hundred KiB.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, AsyncIterator

_BCHARS = re.compile(r"^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
MAX_HEADER_BYTES = 16 * 1024
MAX_PARTS = 1000


class MultipartError(ValueError):
    """The body breaks a rule; the message says which."""


def boundary_of(content_type: str | None) -> str:
    """The boundary parameter of a ``multipart/form-data`` Content-Type."""
    if not content_type:
        raise MultipartError("no Content-Type")
    media, _, params = content_type.partition(";")
    if media.strip().lower() != "multipart/form-data":
        raise MultipartError(f"Content-Type is {media.strip()!r}, not multipart/form-data")
    parsed = parse_parameters(b";" + params.encode("utf-8")) if params.strip() else []
    values = [v for k, v in parsed if k.lower() == "boundary"]
    if len(values) != 1:
        raise MultipartError("exactly one boundary parameter is required")
    boundary = values[0].decode("latin-1")
    if not _BCHARS.match(boundary):
        raise MultipartError(f"boundary {boundary!r} is not 1-70 bchars (RFC 2046 §5.1.1)")
    return boundary


def parse_parameters(raw: bytes) -> list[tuple[str, bytes]]:
    """``; name=value`` pairs; a value is a token or a quoted string (quoted-pairs undone)."""
    out: list[tuple[str, bytes]] = []
    i, n = 0, len(raw)
    while i < n:
        while i < n and raw[i] in b" \t":
            i += 1
        if i >= n:
            break
        if raw[i:i + 1] != b";":
            raise MultipartError(f"expected ';' at {raw[i:]!r}")
        i += 1
        while i < n and raw[i] in b" \t":
            i += 1
        start = i
        while i < n and raw[i:i + 1] not in (b"=", b";", b" ", b"\t"):
            i += 1
        name = raw[start:i].decode("latin-1")
        if not name or not _TOKEN.match(name):
            raise MultipartError(f"bad parameter name {name!r}")
        if raw[i:i + 1] != b"=":
            raise MultipartError(f"parameter {name!r} has no value")
        i += 1
        if raw[i:i + 1] == b'"':
            i += 1
            value = bytearray()
            while True:
                if i >= n:
                    raise MultipartError(f"unterminated quoted string in {name!r}")
                c = raw[i]
                if c == 0x22:
                    i += 1
                    break
                if c == 0x5C:
                    if i + 1 >= n:
                        raise MultipartError(f"dangling backslash in {name!r}")
                    c = raw[i + 1]
                    i += 1
                if (c < 0x20 and c != 0x09) or c == 0x7F:
                    raise MultipartError(f"control character 0x{c:02x} in parameter {name!r}")
                value.append(c)
                i += 1
            out.append((name, bytes(value)))
        else:
            start = i
            while i < n and raw[i:i + 1] not in (b";", b" ", b"\t"):
                i += 1
            token = raw[start:i]
            if not token or not _TOKEN.match(token.decode("latin-1")):
                raise MultipartError(f"parameter {name!r} has a bad token value {token!r}")
            out.append((name, token))
    return out


def _parse_headers(block: bytes) -> tuple[list[list[str]], dict[str, Any]]:
    if b"\n" in block.replace(b"\r\n", b"") or b"\r" in block.replace(b"\r\n", b""):
        raise MultipartError("a part header line ends in a bare CR or LF")
    headers: list[list[str]] = []
    info: dict[str, Any] = {"name": None, "filename": None, "contentType": None}
    for line in block.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.match(name.decode("latin-1")):
            raise MultipartError(f"bad part header line {line!r}")
        value = value.strip(b" \t")
        headers.append([name.decode("latin-1"), value.decode("utf-8", "replace")])
        lname = name.decode("latin-1").lower()
        if lname == "content-disposition":
            if info.get("_disposition"):
                raise MultipartError("two Content-Disposition fields in one part")
            info["_disposition"] = True
            kind, _, params = value.partition(b";")
            if kind.strip().lower() != b"form-data":
                raise MultipartError(f"disposition type {kind!r} is not form-data")
            seen: set[str] = set()
            for pname, pvalue in parse_parameters(b";" + params if params else b""):
                key = pname.lower()
                if key in seen:
                    raise MultipartError(f"parameter {pname!r} given twice")
                seen.add(key)
                if key == "filename*":
                    raise MultipartError("filename* is not allowed in multipart/form-data (RFC 7578 §4.2)")
                if key == "name":
                    info["name"] = pvalue
                elif key == "filename":
                    info["filename"] = pvalue
        elif lname == "content-type":
            info["contentType"] = value.decode("latin-1")
    if not info.pop("_disposition", False):
        raise MultipartError("a part has no Content-Disposition")
    if info["name"] is None:
        raise MultipartError("a part has no name parameter")
    return headers, info


async def parse(chunks: AsyncIterator[bytes], boundary: str) -> dict[str, Any]:
    """Parses the body from ``chunks``; returns ``{"parts": [...], "bytes": n}``."""
    dash = b"--" + boundary.encode("latin-1")
    delimiter = b"\r\n" + dash
    buf = bytearray()
    total = 0
    parts: list[dict[str, Any]] = []
    state = "start"  # start -> headers -> body -> ... -> end
    digest = None
    length = 0
    current: dict[str, Any] = {}
    keep = len(delimiter) + 4
    ended = False

    async def more() -> bool:
        nonlocal total
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return False
        total += len(chunk)
        buf.extend(chunk)
        return True

    while True:
        if state == "start":
            while len(buf) < len(dash) + 2:
                if not await more():
                    raise MultipartError("body ends before the first delimiter")
            if not buf.startswith(dash + b"\r\n"):
                raise MultipartError("body does not start with --boundary CRLF (no preamble allowed)")
            del buf[:len(dash) + 2]
            state = "headers"
        elif state == "headers":
            end = buf.find(b"\r\n\r\n")
            # a part without header fields is refused below (Content-Disposition is required)
            while end < 0:
                if len(buf) > MAX_HEADER_BYTES:
                    raise MultipartError("part header block larger than 16 KiB")
                if not await more():
                    raise MultipartError("body ends inside a part's header block")
                end = buf.find(b"\r\n\r\n")
            headers, info = _parse_headers(bytes(buf[:end]))
            del buf[:end + 4]
            current = {"headers": headers, **info}
            digest, length = hashlib.sha256(), 0
            state = "body"
        elif state == "body":
            at = buf.find(delimiter)
            if at < 0:
                if len(buf) > keep:
                    take = len(buf) - keep
                    digest.update(buf[:take])
                    length += take
                    del buf[:take]
                if not await more():
                    raise MultipartError("body ends inside a part (no close delimiter)")
                continue
            # need the two bytes after the delimiter
            while len(buf) < at + len(delimiter) + 2:
                if not await more():
                    raise MultipartError("body ends right after a delimiter")
            after = bytes(buf[at + len(delimiter):at + len(delimiter) + 2])
            if after not in (b"\r\n", b"--"):
                # "CRLF--boundary" followed by something else is part content (RFC 2046 only
                # treats it as a delimiter when the line ends there); keep scanning after it.
                take = at + 1
                digest.update(buf[:take])
                length += take
                del buf[:take]
                continue
            digest.update(buf[:at])
            length += at
            del buf[:at + len(delimiter) + 2]
            parts.append(_report(current, digest, length))
            if len(parts) > MAX_PARTS:
                raise MultipartError(f"more than {MAX_PARTS} parts")
            if after == b"--":
                while len(buf) < 2:
                    if not await more():
                        raise MultipartError("close delimiter not followed by CRLF")
                if not buf.startswith(b"\r\n"):
                    raise MultipartError("close delimiter not followed by CRLF")
                del buf[:2]
                ended = True
                break
            state = "headers"
    if ended:
        while not buf:
            if not await more():
                break
        if buf:
            raise MultipartError(f"{len(buf)}+ bytes after the close delimiter (no epilogue allowed)")
    return {"parts": parts, "bytes": total}


def _report(current: dict[str, Any], digest: Any, length: int) -> dict[str, Any]:
    name: bytes = current["name"]
    filename: bytes | None = current["filename"]
    return {
        "name": name.decode("utf-8", "replace"),
        "nameHex": name.hex(),
        "filename": filename.decode("utf-8", "replace") if filename is not None else None,
        "filenameHex": filename.hex() if filename is not None else None,
        "contentType": current["contentType"],
        "headers": current["headers"],
        "sha256": digest.hexdigest(),
        "length": length,
    }
