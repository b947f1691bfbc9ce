"""HTTP/1.1 for the blocking client: ``http.client`` connections kept alive per origin, safe to
share between threads (each request takes a connection of its own from the pool).
"""

from __future__ import annotations

import http.client
import ssl
import threading
from typing import Dict, List, Optional

from ._protocol import Origin, Request, Response, TransportError

#: Idle connections kept per origin.
_KEEP_IDLE = 8
# What a kept-alive connection that the server has since closed raises on its next request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class SyncTransport:
    def __init__(self, timeout: float, ssl_context: Optional[ssl.SSLContext]) -> None:
        self._timeout = timeout
        self._ssl_context = ssl_context
        self._idle: Dict[Origin, List[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def send(self, request: Request) -> Response:
        """One attempt: the answer, or TransportError when none came."""
        connection = self._take(request.origin)
        if connection is not None:
            try:
                return self._exchange(connection, request)
            except _STALE:
                pass  # the server closed it while idle: not an attempt, send again on a new connection
            except (OSError, http.client.HTTPException) as error:
                raise _failed(error) from error
        try:
            return self._exchange(self._connect(request.origin), request)
        except (OSError, http.client.HTTPException) as error:
            raise _failed(error) from error

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    def _exchange(self, connection: http.client.HTTPConnection, request: Request) -> Response:
        try:
            connection.request(request.method, request.target, body=request.body, headers=dict(request.headers))
            raw = connection.getresponse()
            body = raw.read()
        except BaseException:
            connection.close()
            raise
        headers: Dict[str, str] = {}
        for name, value in raw.getheaders():
            name = name.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if raw.will_close:
            connection.close()
        else:
            self._give_back(request.origin, connection)
        return Response(raw.status, headers, body)

    def _take(self, origin: Origin) -> Optional[http.client.HTTPConnection]:
        with self._lock:
            idle = self._idle.get(origin)
            return idle.pop() if idle else None

    def _give_back(self, origin: Origin, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < _KEEP_IDLE:
                idle.append(connection)
                return
        connection.close()

    def _connect(self, origin: Origin) -> http.client.HTTPConnection:
        if origin.scheme == "https":
            context = self._ssl_context or ssl.create_default_context()
            return http.client.HTTPSConnection(origin.host, origin.port, timeout=self._timeout, context=context)
        return http.client.HTTPConnection(origin.host, origin.port, timeout=self._timeout)


def _failed(error: BaseException) -> TransportError:
    # A certificate the client does not trust will not be trusted on the next attempt either.
    retryable = not isinstance(error, ssl.SSLCertVerificationError)
    return TransportError(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__, retryable=retryable)
