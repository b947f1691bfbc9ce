"""What both clients share, with no I/O: the requests each method makes, how an answer is read,
and when a call is retried. The blocking client (client.py) and the asyncio one (aio.py) only
send the requests built here and wait as told, each in its own way.

Every request is safe to send again: reads are GETs, and every write carries an
``Idempotency-Key`` made once per call (or given by the caller) and sent on each of its attempts,
so the service applies it once however many attempts reach it.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, Generic, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast
from urllib.parse import SplitResult, quote, urlencode, urlsplit

from ._version import __version__
from ._ids import op_id as check_op_id
from ._ids import snowflake, snowflakes
from .errors import ApiError, ConnectionFailed, UnexpectedAnswer, error_class
from .types import (KEEP, AdminMemberRecord, AroundPage, AwardResult, DailyClaim, GuildStats, LeaderboardPage, MemberList,
                    MemberRecord, Period, Settings, SettingsUpdate, Visibility, VisibilityChange)

T = TypeVar("T")

#: The service takes up to this many awards in one request.
MAX_BATCH = 1000
MAX_AWARD = 1_000_000
MAX_USERNAME_LENGTH = 100
MAX_DISPLAY_NAME_LENGTH = 100
MAX_AVATAR_URL_LENGTH = 512

_IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HEADER_VALUE = re.compile(r"[\x21-\x7e]+")
_PERIODS = ("all", "week", "month", "last_week", "last_month")


@dataclass(frozen=True)
class Origin:
    """Where one API lives: ``http://127.0.0.1:3001/admin/v1`` split for a connection."""

    scheme: str
    host: str
    port: int
    base_path: str

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"

    def url(self, target: str) -> str:
        return f"{self.scheme}://{self.host_header}{target}"


def parse_origin(name: str, url: str) -> Origin:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{name} must be an http:// or https:// URL, not {url!r}")
    if parts.query or parts.fragment or parts.username:
        raise ValueError(f"{name} must hold no query, fragment or credentials: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Origin(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


def check_secret(name: str, value: str) -> str:
    """A token or key, refused before it could split a header (or be logged in an error)."""
    if not isinstance(value, str) or _HEADER_VALUE.fullmatch(value) is None:
        raise ValueError(f"{name} must be a non-empty string of printable ASCII characters without spaces")
    return value


@dataclass(frozen=True)
class Request:
    """One request as it is sent, the same bytes on every attempt."""

    method: str
    origin: Origin
    target: str
    headers: Tuple[Tuple[str, str], ...]
    body: Optional[bytes]
    idempotency_key: Optional[str]

    @property
    def url(self) -> str:
        return self.origin.url(self.target)


@dataclass(frozen=True)
class Response:
    status: int
    #: Lower-case names; repeated headers joined with ", ".
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class Call(Generic[T]):
    """A method's request and how its successful answer is read."""

    request: Request
    read: Callable[[Response], T]


class TransportError(Exception):
    """No (complete) answer to one attempt. ``retryable`` is false for what a retry cannot mend (a bad certificate)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class RetryInfo:
    """What ``on_retry`` is told before each retry's wait."""

    #: The retry about to be made: 1 for the first.
    attempt: int
    #: Seconds it waits first: the answer's ``Retry-After``, or the backoff.
    delay: float
    method: str
    url: str
    #: The status of the answer retried, or None when the attempt got no answer.
    status: Optional[int]
    #: The error of an attempt that got no answer.
    error: Optional[BaseException]
    #: The write's key, the same on every attempt (None for a read).
    idempotency_key: Optional[str]


@dataclass
class RetryPolicy:
    """Which failures are retried, and how long a call keeps at it.

    Retried: no answer (a refused or dropped connection, a timeout), ``429``, ``502``, ``503``,
    ``504`` and ``409 idempotency_key_in_use``; after the answer's ``Retry-After`` when it has one,
    else after a backoff (full jitter: a random wait below ``base_delay`` doubled per attempt, at
    most ``max_delay``). A call gives up once the next wait would end past ``retry_for`` seconds
    from its start, and raises the last error.
    """

    retry_for: float = 30.0
    base_delay: float = 0.25
    max_delay: float = 5.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, elapsed: float, response: Optional[Response]) -> Optional[float]:
        """Seconds to wait before retrying after attempt number ``attempt`` (0 for the first), or None to give up."""
        wait: Optional[float]
        if response is None:
            wait = self.backoff(attempt)
        else:
            retry_after = retry_after_of(response)
            if response.status in (429, 503) or (response.status == 409 and error_code(response) == "idempotency_key_in_use"):
                wait = float(retry_after) if retry_after is not None else self.backoff(attempt)
            elif response.status in (502, 504):
                wait = self.backoff(attempt)
            else:
                wait = None
        if wait is None or elapsed + wait > self.retry_for:
            return None
        return wait

    def backoff(self, attempt: int) -> float:
        return self.rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** attempt))


def retry_after_of(response: Response) -> Optional[int]:
    """``Retry-After`` in whole seconds (the only form the service sends), or None."""
    value = response.headers.get("retry-after", "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def _json_body(response: Response) -> Any:
    try:
        return json.loads(response.body)
    except ValueError:
        return None


def error_code(response: Response) -> str:
    body = _json_body(response)
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else f"http_{response.status}"


def api_error(request: Request, response: Response) -> ApiError:
    """The exception for an error answer, of the class its code names."""
    body = _json_body(response)
    shaped = isinstance(body, dict) and isinstance(body.get("code"), str)
    code = error_code(response)
    message = body["message"] if shaped and isinstance(body.get("message"), str) else f"{response.status} from {request.url}"
    return error_class(response.status, code)(
        response.status, code, message, retry_after=retry_after_of(response),
        request_id=response.headers.get("x-request-id"), idempotency_key=request.idempotency_key,
        body=body if shaped else None)


def read_json(response: Response) -> Any:
    return json.loads(response.body)


def idempotency_key(given: Optional[str]) -> str:
    """The caller's key, checked, or a new one for this call."""
    if given is None:
        return str(uuid.uuid4())
    if not isinstance(given, str) or _IDEMPOTENCY_KEY.fullmatch(given) is None:
        raise ValueError(f"idempotency_key must be 1 to 128 of A-Z a-z 0-9 . _ : -, not {given!r}")
    return given


def username(value: object, field: str = "username", longest: int = MAX_USERNAME_LENGTH) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, not {type(value).__name__}")
    name = value.strip()
    # Code points, as the service counts them.
    if not 1 <= len(name) <= longest or _CONTROL.search(name):
        raise ValueError(f"{field} must be 1 to {longest} characters without control characters, not {value!r}")
    return name


def avatar_url(value: object) -> str:
    """An https URL as the service takes it: what it surely refuses is refused here (its URL parser has the last word)."""
    if not isinstance(value, str):
        raise TypeError(f"avatar_url must be a string, not {type(value).__name__}")
    # The service counts a URL's length in UTF-16 code units.
    length = len(value.encode("utf-16-le")) // 2
    try:
        parts: Optional[SplitResult] = urlsplit(value)
    except ValueError:  # an unbalanced bracket in the host
        parts = None
    if (length > MAX_AVATAR_URL_LENGTH or not value.startswith("https://") or parts is None or not parts.hostname
            or parts.username is not None or parts.password is not None):
        raise ValueError(f"avatar_url must be an https URL of at most {MAX_AVATAR_URL_LENGTH} characters, with no user or password, not {value!r}")
    return value


def profile_fields(display_name: object, avatar_url_: object) -> Dict[str, Any]:
    """A write's ``display_name`` and ``avatar_url``: KEEP sends nothing, None sends null (clears), a value is checked."""
    fields: Dict[str, Any] = {}
    if display_name is not KEEP:
        fields["display_name"] = None if display_name is None else username(display_name, "display_name", MAX_DISPLAY_NAME_LENGTH)
    if avatar_url_ is not KEEP:
        fields["avatar_url"] = None if avatar_url_ is None else avatar_url(avatar_url_)
    return fields


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be from {low} to {high}, not {value}")
    return value


def xp_value(value: object) -> Any:
    """An award's XP: an int, or ``{"min", "max"}`` for the service to draw from."""
    if isinstance(value, Mapping):
        if set(value) != {"min", "max"}:
            raise ValueError(f"an XP range is {{'min': m, 'max': n}}, not {dict(value)!r}")
        low = _whole("xp['min']", value["min"], 1, MAX_AWARD)
        high = _whole("xp['max']", value["max"], low, MAX_AWARD)
        return {"min": low, "max": high}
    return _whole("xp", value, 1, MAX_AWARD)


def award_item(user_id: object, xp: object, *, username_: Optional[str] = None, op_id: object = None,
               role_ids: Optional[Sequence[object]] = None, channel_id: object = None,
               display_name: object = KEEP, avatar_url_: object = KEEP) -> Dict[str, Any]:
    """One award as the service takes it, every field checked: a batch with one bad item is refused whole."""
    item: Dict[str, Any] = {"user_id": snowflake("user_id", user_id), "xp": xp_value(xp)}
    if username_ is not None:
        item["username"] = username(username_)
    item.update(profile_fields(display_name, avatar_url_))
    if op_id is not None:
        item["op_id"] = check_op_id(op_id)
    if role_ids is not None:
        item["role_ids"] = snowflakes("role_ids", role_ids)
    if channel_id is not None:
        item["channel_id"] = snowflake("channel_id", channel_id)
    return item


def _settings_body(update: SettingsUpdate) -> Dict[str, Any]:
    """The update with every role and channel id made a string."""
    if not isinstance(update, Mapping) or not update:
        raise ValueError("settings must be a dict with at least one field to change")
    body: Dict[str, Any] = dict(update)
    multipliers = body.get("multipliers")
    if isinstance(multipliers, Mapping):
        body["multipliers"] = dict(multipliers)
        for kind, name in (("roles", "role id"), ("channels", "channel id")):
            given = multipliers.get(kind)
            if isinstance(given, Mapping):
                body["multipliers"][kind] = {snowflake(f"multipliers.{kind}: a {name}", key): m for key, m in given.items()}
    rewards = body.get("role_rewards")
    if isinstance(rewards, list):
        body["role_rewards"] = [{**reward, "role_id": snowflake(f"role_rewards[{index}].role_id", reward.get("role_id"))}
                                if isinstance(reward, Mapping) else reward for index, reward in enumerate(rewards)]
    return body


class Operations:
    """The calls of both APIs: the write API (``/admin/v1``, a bearer token) and the read API (``/api/v1``, an API key)."""

    def __init__(self, *, admin_url: Optional[str], token: Optional[str], api_url: Optional[str], api_key: Optional[str]) -> None:
        if (admin_url is None) != (token is None):
            raise ValueError("give admin_url and token together (the write API), or neither")
        if (api_url is None) != (api_key is None):
            raise ValueError("give api_url and api_key together (the read API), or neither")
        if admin_url is None and api_url is None:
            raise ValueError("give admin_url and token (writes), api_url and api_key (reads), or both")
        self._admin = None if admin_url is None else parse_origin("admin_url", admin_url)
        self._api = None if api_url is None else parse_origin("api_url", api_url)
        self._admin_headers = () if token is None else (("authorization", f"Bearer {check_secret('token', token)}"),)
        self._api_headers = () if api_key is None else (("x-api-key", check_secret("api_key", api_key)),)
        self._agent = (("user-agent", f"guild-leaderboard-python/{__version__}"), ("accept", "application/json"))

    # The write API

    def award_batch(self, guild_id: object, items: List[Dict[str, Any]], key: Optional[str] = None) -> Call[List[AwardResult]]:
        if not 1 <= len(items) <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} awards, not {len(items)}")

        path = f"/servers/{_path_id('guild_id', guild_id)}/awards"

        def read(response: Response) -> List[AwardResult]:
            results = cast(List[AwardResult], read_json(response)["results"])
            if len(results) != len(items):
                raise UnexpectedAnswer(f"the service answered {len(results)} results for {len(items)} awards")
            return results
        return self._write("POST", path, {"awards": items}, key, read)

    def set_member(self, guild_id: object, user_id: object, xp: Optional[int], name: Optional[str],
                   display_name: object, avatar_url_: object, key: Optional[str]) -> Call[AdminMemberRecord]:
        body: Dict[str, Any] = {}
        if xp is not None:
            body["xp"] = _whole("xp", xp, 0, 10 ** 12)
        if name is not None:
            body["username"] = username(name)
        body.update(profile_fields(display_name, avatar_url_))
        if not body:
            raise ValueError("set_member needs xp, username, display_name or avatar_url")
        return self._write("PUT", _member_path(guild_id, user_id), body, key, read_json)

    def remove_member(self, guild_id: object, user_id: object, key: Optional[str]) -> Call[None]:
        return self._write("DELETE", _member_path(guild_id, user_id), None, key, lambda _: None)

    def claim_daily(self, guild_id: object, user_id: object, name: Optional[str], key: Optional[str]) -> Call[DailyClaim]:
        body = {} if name is None else {"username": username(name)}
        return self._write("POST", f"{_member_path(guild_id, user_id)}/daily", body, key, read_json)

    def set_visibility(self, guild_id: object, user_id: object, visible: bool, reason: Optional[str],
                       key: Optional[str]) -> Call[Visibility]:
        return self._write("PUT", f"{_member_path(guild_id, user_id)}/visibility", _visibility_body(visible, reason), key, read_json)

    def set_visibility_many(self, guild_id: object, changes: Sequence[VisibilityChange], key: Optional[str]) -> Call[List[Visibility]]:
        if not 1 <= len(changes) <= 10_000:
            raise ValueError(f"set_visibility_many takes 1 to 10,000 changes, got {len(changes)}")
        members = []
        for i, change in enumerate(changes):
            body = _visibility_body(change.get("visible"), change.get("reason"))
            members.append({"user_id": snowflake(f"changes[{i}].user_id", change.get("user_id")), **body})
        return self._write("POST", f"/servers/{_path_id('guild_id', guild_id)}/visibility", {"members": members}, key,
                           lambda response: read_json(response)["results"])

    def settings(self, guild_id: object) -> Call[Settings]:
        path = f"/servers/{_path_id('guild_id', guild_id)}/settings"
        return Call(self._request("GET", self._need_admin(), path, {}, None, None), read_json)

    def update_settings(self, guild_id: object, update: SettingsUpdate, key: Optional[str]) -> Call[Settings]:
        return self._write("PUT", f"/servers/{_path_id('guild_id', guild_id)}/settings", _settings_body(update), key, read_json)

    # The read API

    def leaderboard(self, guild_id: object, limit: Optional[int], page: Optional[int], period: Optional[Period]) -> Call[LeaderboardPage]:
        query: Dict[str, object] = {}
        if limit is not None:
            query["limit"] = _whole("limit", limit, 1, 100)
        if page is not None:
            query["page"] = _whole("page", page, 1, 1_000_000_000)
        if period is not None:
            if period not in _PERIODS:
                raise ValueError(f"period must be one of {', '.join(_PERIODS)}, not {period!r}")
            query["period"] = period
        return self._read(f"/servers/{_path_id('guild_id', guild_id)}/leaderboard", query)

    def member(self, guild_id: object, user_id: object) -> Call[MemberRecord]:
        return self._read(_member_path(guild_id, user_id), {})

    def around(self, guild_id: object, user_id: object, radius: Optional[int]) -> Call[AroundPage]:
        query = {} if radius is None else {"radius": _whole("radius", radius, 0, 50)}
        return self._read(f"{_member_path(guild_id, user_id)}/around", query)

    def members(self, guild_id: object, user_ids: Sequence[object]) -> Call[MemberList]:
        ids = snowflakes("user_ids", user_ids)
        if not 1 <= len(ids) <= 100:
            raise ValueError(f"members reads 1 to 100 ids at once, not {len(ids)}")
        return self._read(f"/servers/{_path_id('guild_id', guild_id)}/members", {"ids": ",".join(ids)})

    def stats(self, guild_id: object) -> Call[GuildStats]:
        return self._read(f"/servers/{_path_id('guild_id', guild_id)}/stats", {})

    def _need_admin(self) -> Origin:
        if self._admin is None:
            raise ValueError("this is a call of the write API: make the client with admin_url and token")
        return self._admin

    def _write(self, method: str, path: str, body: Optional[Dict[str, Any]], key: Optional[str],
               read: Callable[[Response], Any]) -> Call[Any]:
        return Call(self._request(method, self._need_admin(), path, {}, body, idempotency_key(key)), read)

    def _read(self, path: str, query: Mapping[str, object]) -> Call[Any]:
        if self._api is None:
            raise ValueError("this is a call of the read API: make the client with api_url and api_key")
        return Call(self._request("GET", self._api, path, query, None, None), read_json)

    def _request(self, method: str, origin: Origin, path: str, query: Mapping[str, object], body: Optional[Dict[str, Any]],
                 key: Optional[str]) -> Request:
        headers = list(self._agent) + list(self._admin_headers if origin is self._admin else self._api_headers)
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            headers.append(("content-type", "application/json"))
        if key is not None:
            headers.append(("idempotency-key", key))
        target = origin.base_path + path + (f"?{urlencode(query)}" if query else "")
        return Request(method, origin, target, tuple(headers), data, key)


def _path_id(name: str, value: object) -> str:
    return quote(snowflake(name, value), safe="")


def _visibility_body(visible: object, reason: object) -> Dict[str, Any]:
    if not isinstance(visible, bool):
        raise TypeError(f"visible must be True or False, got {visible!r}")
    if reason is None:
        if not visible:
            raise ValueError('hiding a member needs a reason: "left" or "opted_out"')
        return {"visible": visible}
    if reason not in ("left", "opted_out"):
        raise ValueError(f'reason must be "left" or "opted_out", got {reason!r}')
    return {"visible": visible, "reason": reason}


def _member_path(guild_id: object, user_id: object) -> str:
    return f"/servers/{_path_id('guild_id', guild_id)}/members/{_path_id('user_id', user_id)}"


def outcome(call: Call[T], response: Response) -> T:
    """The call's value for a 2xx answer; else its error, raised."""
    if 200 <= response.status < 300:
        try:
            return call.read(response)
        except (ValueError, KeyError, TypeError) as error:
            raise UnexpectedAnswer(f"a {response.status} answer this client cannot read from {call.request.url}: {error!r}") from error
    raise api_error(call.request, response)


@dataclass(frozen=True)
class Wait:
    """A pause before the next attempt, in seconds: the driver sleeps as its kind does (``time.sleep``, ``asyncio.sleep``)."""

    seconds: float


#: What a call's attempts ask of their driver: send this request (answer with its Response, or
#: the TransportError of a failed attempt), or wait (answer None).
Step = Union[Request, Wait]
Answer = Union[Response, TransportError, None]


def attempts(call: Call[T], policy: RetryPolicy, on_retry: Optional[Callable[[RetryInfo], None]],
             clock: Callable[[], float]) -> Generator[Step, Answer, T]:
    """The attempts of one call: sends its request until an answer settles it, waiting between tries as the policy says.

    The two clients drive this the same way, each with its own I/O, so the retry rules are written once.
    """
    request = call.request
    started = clock()
    attempt = 0
    while True:
        answer = yield request
        if isinstance(answer, Response):
            if 200 <= answer.status < 300:
                return outcome(call, answer)
            delay = policy.delay(attempt, clock() - started, answer)
            if delay is None:
                raise api_error(request, answer)
            status, error = answer.status, None
        else:
            if not isinstance(answer, TransportError):
                raise TypeError(f"a request is answered with a Response or a TransportError, not {answer!r}")
            delay = policy.delay(attempt, clock() - started, None) if answer.retryable else None
            if delay is None:
                raise ConnectionFailed(f"no answer from {request.method} {request.url}: {answer}",
                                       idempotency_key=request.idempotency_key) from answer
            status, error = None, answer
        attempt += 1
        if on_retry is not None:
            on_retry(RetryInfo(attempt, delay, request.method, request.url, status, error, request.idempotency_key))
        yield Wait(delay)
