"""What the tests share: the live service they run against (its URLs and secrets come from the
environment: test/python-package.test.ts starts the service and sets them), fresh server ids,
and two small servers of their own on loopback: a proxy in front of the service that records
each exchange and can cut a connection before its answer, and an endpoint that holds its answer
until the test lets it go.
"""

from __future__ import annotations

import http.server
import itertools
import json
import os
import socket
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Collection, Dict, List, Optional, Tuple

#: Long enough never to end a test that works; only a broken one waits this long.
HANG_GUARD_SECONDS = 60.0


@dataclass(frozen=True)
class Live:
    admin_url: str
    api_url: str
    token: str
    api_key: str
    #: The service's redis-server, which the fault tests pause (SIGSTOP) and resume.
    redis_pid: int
    #: Requests a free-plan key may make per rate-limit window.
    free_limit: int
    admin_port: int
    api_port: int


def live() -> Live:
    """The service under test, from the environment test/python-package.test.ts sets."""
    names = ("LEADERBOARD_ADMIN_URL", "LEADERBOARD_API_URL", "LEADERBOARD_TOKEN", "LEADERBOARD_API_KEY",
             "LEADERBOARD_REDIS_PID", "LEADERBOARD_FREE_LIMIT")
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        raise RuntimeError(f"{', '.join(missing)} unset: these tests run against a live service, "
                           "started by `npx tap test/python-package.test.ts`")
    admin_url, api_url = os.environ["LEADERBOARD_ADMIN_URL"], os.environ["LEADERBOARD_API_URL"]
    return Live(admin_url, api_url, os.environ["LEADERBOARD_TOKEN"], os.environ["LEADERBOARD_API_KEY"],
                int(os.environ["LEADERBOARD_REDIS_PID"]), int(os.environ["LEADERBOARD_FREE_LIMIT"]),
                _port(admin_url), _port(api_url))


def _port(url: str) -> int:
    port = urllib.parse.urlsplit(url).port
    assert port is not None, url
    return port


_guilds = itertools.count(1)


def fresh_guild() -> int:
    """A server id no other test uses, as discord.py gives ids: an int past 2**53."""
    return 1_400_000_000_000_000_000 + (os.getpid() % 100_000) * 10_000 + next(_guilds)


def admin_request(method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
    """A write-API call made without the package (to arrange what the package does not do, as making an API key)."""
    env = live()
    request = urllib.request.Request(env.admin_url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"authorization": f"Bearer {env.token}", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS) as response:
        return json.loads(response.read())


def free_key(guild_id: int) -> str:
    """A new free-plan API key of ``guild_id``: ``free_limit`` requests per window, then 429."""
    return str(admin_request("POST", f"/servers/{guild_id}/keys", {"plan": "free", "name": "python rate-limit test"})["key"])


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Exchange:
    """One request that passed through the proxy, and the answer the service gave it."""

    method: str
    path: str
    headers: Dict[str, str]
    body: bytes
    status: int = 0
    response_headers: Dict[str, str] = field(default_factory=dict)
    #: The proxy cut the client's connection instead of passing this answer on.
    dropped: bool = False

    def json(self) -> Any:
        return json.loads(self.body)


class Proxy:
    """A proxy on loopback in front of ``upstream_port``: reads every request and answer whole,
    records them, and cuts the client's connection instead of passing on the answers of the
    exchanges numbered in ``drop`` (0 for the first), once the service has given them: a write
    is applied, its answer lost.
    """

    def __init__(self, upstream_port: int, *, drop: Collection[int] = ()) -> None:
        self.exchanges: List[Exchange] = []
        self._upstream_port = upstream_port
        self._drop = set(drop)
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, base_path: str) -> str:
        return f"http://127.0.0.1:{self.port}{base_path}"

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client, socket.create_connection(("127.0.0.1", self._upstream_port)) as upstream:
            client_in, upstream_in = client.makefile("rb"), upstream.makefile("rb")
            while True:
                request = _read_message(client_in)
                if request is None:
                    return
                head, body = request
                upstream.sendall(head + body)
                answer = _read_message(upstream_in, method=head.split(b" ", 1)[0].decode())
                if answer is None:
                    return
                exchange = _exchange(head, body, answer[0])
                with self._lock:
                    exchange.dropped = len(self.exchanges) in self._drop
                    self.exchanges.append(exchange)
                if exchange.dropped:
                    client.shutdown(socket.SHUT_RDWR)
                    return
                client.sendall(answer[0] + answer[1])


def _read_message(stream: BinaryIO, method: Optional[str] = None) -> Optional[Tuple[bytes, bytes]]:
    """One HTTP/1.1 message (head, body) as the service and the clients send them: a Content-Length body or none."""
    lines = []
    while True:
        line = stream.readline()
        if not line:
            return None
        lines.append(line)
        if line == b"\r\n":
            break
    head = b"".join(lines)
    headers = _headers(head)
    status = head.split(b" ", 2)[1] if method is not None else b""
    if method == "HEAD" or status in (b"204", b"304"):
        return head, b""
    assert "transfer-encoding" not in headers, "the proxy reads Content-Length bodies only"
    return head, stream.read(int(headers.get("content-length", "0")))


def _headers(head: bytes) -> Dict[str, str]:
    found = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, colon, value = line.partition(":")
        if colon:
            found[name.strip().lower()] = value.strip()
    return found


def _exchange(request_head: bytes, body: bytes, answer_head: bytes) -> Exchange:
    method, path, _ = request_head.split(b" ", 2)
    return Exchange(method.decode(), path.decode(), _headers(request_head), body,
                    int(answer_head.split(b" ", 2)[1]), _headers(answer_head))


#: An answer of a test endpoint: status, headers, body.
Answer = Tuple[int, Dict[str, str], bytes]
EMPTY_PAGE = b'{"data":[],"total":0,"page":1}'


class Endpoint:
    """An HTTP endpoint on loopback that answers every GET with what ``answer()`` returns (called on the server's thread)."""

    def __init__(self, answer: Callable[[], Answer]) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                status, headers, body = answer()
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers, "content-length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/api/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HeldEndpoint(Endpoint):
    """An endpoint that answers every GET with an empty leaderboard page, but only once
    ``release`` is set (or ``hold`` seconds pass, then with a 500 saying so). ``received`` is set
    when a request arrives.
    """

    def __init__(self, hold: float = HANG_GUARD_SECONDS) -> None:
        self.received = threading.Event()
        self.release = threading.Event()

        def answer() -> Answer:
            self.received.set()
            if self.release.wait(hold):
                return 200, {}, EMPTY_PAGE
            return 500, {}, b'{"statusCode":500,"code":"never_released","message":"held"}'
        super().__init__(answer)

    def close(self) -> None:
        self.release.set()
        super().close()
