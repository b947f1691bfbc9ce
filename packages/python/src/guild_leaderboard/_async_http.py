"""HTTP/1.1 for the asyncio client, over asyncio streams: nothing here blocks the event loop
(name resolution runs in the loop's executor, as ``asyncio.open_connection`` does it).
Connections are kept alive per origin. Only what the service sends is read: a
``Content-Length`` body, a chunked one, or one that ends with the connection.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Dict, List, Optional, Tuple

from ._protocol import Origin, Request, Response, TransportError

_KEEP_IDLE = 8
#: The most a response's status line and headers may take.
_HEAD_LIMIT = 64 * 1024

Connection = Tuple[asyncio.StreamReader, asyncio.StreamWriter]


class _Malformed(Exception):
    """An answer that is not HTTP/1.x as this client reads it."""


class _Stale(Exception):
    """A kept-alive connection the server closed while it was idle: nothing was answered on it."""


class AsyncTransport:
    def __init__(self, timeout: float, ssl_context: Optional[ssl.SSLContext]) -> None:
        self._timeout = timeout
        self._ssl_context = ssl_context
        self._idle: Dict[Origin, List[Connection]] = {}

    async def send(self, request: Request) -> Response:
        """One attempt, within the timeout: the answer, or TransportError when none came."""
        try:
            return await asyncio.wait_for(self._attempt(request), self._timeout)
        except asyncio.TimeoutError as error:
            raise TransportError(f"no answer within {self._timeout:g} s") from error
        except (OSError, EOFError, asyncio.LimitOverrunError, _Malformed) as error:
            raise TransportError(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__,
                                 retryable=not isinstance(error, ssl.SSLCertVerificationError)) from error

    def close(self) -> None:
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for _, writer in connections:
                writer.close()

    async def _attempt(self, request: Request) -> Response:
        kept = self._take(request.origin)
        if kept is not None:
            try:
                return await self._exchange(kept, request, reused=True)
            except _Stale:
                pass  # not an attempt: send again on a new connection
        connection = await asyncio.open_connection(
            request.origin.host, request.origin.port, limit=_HEAD_LIMIT,
            ssl=(self._ssl_context or ssl.create_default_context()) if request.origin.scheme == "https" else None)
        return await self._exchange(connection, request, reused=False)

    async def _exchange(self, connection: Connection, request: Request, *, reused: bool) -> Response:
        reader, writer = connection
        try:
            try:
                writer.write(_encode(request))
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as error:
                if reused and not error.partial:
                    raise _Stale() from error
                raise
            except (ConnectionResetError, BrokenPipeError) as error:
                if reused:
                    raise _Stale() from error
                raise
            response, keep_alive = await _read_response(reader, request.method, head)
        except BaseException:
            writer.close()  # half-read or cancelled: the connection cannot be used again
            raise
        if keep_alive and not reader.at_eof():
            self._give_back(request.origin, connection)
        else:
            writer.close()
        return response

    def _take(self, origin: Origin) -> Optional[Connection]:
        idle = self._idle.get(origin)
        while idle:
            reader, writer = idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        return None

    def _give_back(self, origin: Origin, connection: Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < _KEEP_IDLE:
            idle.append(connection)
        else:
            connection[1].close()


def _encode(request: Request) -> bytes:
    lines = [f"{request.method} {request.target} HTTP/1.1", f"host: {request.origin.host_header}"]
    lines += [f"{name}: {value}" for name, value in request.headers]
    if request.body is not None or request.method in ("POST", "PUT", "PATCH"):
        lines.append(f"content-length: {len(request.body or b'')}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + (request.body or b"")


async def _read_response(reader: asyncio.StreamReader, method: str, head: bytes) -> Tuple[Response, bool]:
    while True:
        status, version, headers = _parse_head(head)
        if status >= 200:
            break
        head = await reader.readuntil(b"\r\n\r\n")  # an interim 1xx answer: the real one follows
    keep_alive = version == "HTTP/1.1" and "close" not in _tokens(headers.get("connection", ""))
    if method == "HEAD" or status in (204, 304):
        body = b""
    elif "chunked" in _tokens(headers.get("transfer-encoding", "")):
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        length = headers["content-length"]
        if not length.isascii() or not length.isdigit():
            raise _Malformed(f"content-length {length!r}")
        body = await reader.readexactly(int(length))
    else:
        body = await reader.read()
        keep_alive = False
    return Response(status, headers, body), keep_alive


def _parse_head(head: bytes) -> Tuple[int, str, Dict[str, str]]:
    status_line, *lines = head[:-4].decode("iso-8859-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not (parts[1].isascii() and parts[1].isdigit()):
        raise _Malformed(f"status line {status_line[:100]!r}")
    headers: Dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon:
            raise _Malformed(f"header line {line[:100]!r}")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return int(parts[1]), parts[0], headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: List[bytes] = []
    while True:
        size_line = (await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError as error:
            raise _Malformed(f"chunk size {size_line[:20]!r}") from error
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise _Malformed("a chunk not followed by CRLF")


def _tokens(value: str) -> List[str]:
    return [token.strip().lower() for token in value.split(",")]
