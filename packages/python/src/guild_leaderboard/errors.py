"""The exceptions this package raises.

Every answer of the service that is an error becomes an :class:`ApiError` subclass chosen by its
``code`` (the service's error code, as ``"member_not_found"``), so a bot catches what it handles::

    try:
        client.claim_daily(guild_id, user_id)
    except DailyAlreadyClaimed as refused:
        print("come back at", refused.next_claim_at)
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Mapping, Optional, Type


class LeaderboardError(Exception):
    """Base class of every error of this package."""


class ClientClosed(LeaderboardError):
    """A call on a client that was closed."""


class AwardQueueFull(LeaderboardError):
    """``award()`` while ``max_pending`` awards are already waiting to be sent (the service is unreachable, say)."""


class UnexpectedAnswer(LeaderboardError):
    """A success answer this client cannot read (a proxy's page, say, or a service of another version)."""


class ConnectionFailed(LeaderboardError):
    """No answer from the service (a refused or dropped connection, a timeout) for as long as retries were allowed.

    A write may or may not have been applied: send it again with the same ``idempotency_key``
    (every write method takes one) and it is applied once.
    """

    def __init__(self, message: str, *, idempotency_key: Optional[str] = None) -> None:
        super().__init__(message)
        self.idempotency_key = idempotency_key


class ApiError(LeaderboardError):
    """An error answer of the service: ``{"statusCode", "error", "code", "message"}``.

    ``code`` is the service's code, or ``"http_<status>"`` for an answer not in that shape (a
    proxy's 502 page, say).
    """

    def __init__(self, status: int, code: str, message: str, *, retry_after: Optional[int] = None,
                 request_id: Optional[str] = None, idempotency_key: Optional[str] = None,
                 body: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        #: The answer's ``Retry-After``, in seconds, when it had one.
        self.retry_after = retry_after
        #: The request's id (the service logs it): quote it when reporting a problem.
        self.request_id = request_id
        #: The write's ``Idempotency-Key``: a retry with it is applied once.
        self.idempotency_key = idempotency_key
        #: The whole error body.
        self.body: Dict[str, Any] = dict(body or {})


class InvalidRequest(ApiError):
    """400: ``invalid_parameter`` (the message names the value), ``bad_request``, ``invalid_import_file``."""


class AuthenticationFailed(ApiError):
    """401: ``missing_token``, ``invalid_token``, ``missing_api_key``, ``invalid_api_key``."""


class Forbidden(ApiError):
    """403: the token or key does not cover this server (or the token lacks the route's scope)."""


class NotFound(ApiError):
    """404: ``not_found``, ``api_key_not_found``."""


class MemberNotFound(NotFound):
    """404 ``member_not_found``."""


class Conflict(ApiError):
    """409: ``idempotency_key_in_use``, ``api_key_inactive``."""


class DailyAlreadyClaimed(Conflict):
    """409 ``daily_already_claimed``: the member claimed today (UTC); ``next_claim_at`` is when the next claim is accepted."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(status, code, message, **details)
        raw = self.body.get("next_claim_at")
        given = _parse_iso(raw) if isinstance(raw, str) else None
        # The service always says; the next UTC midnight by this machine's clock is the rule it follows.
        tomorrow = datetime.now(timezone.utc).date() + timedelta(days=1)
        #: When the next claim is accepted: the next UTC midnight, an aware datetime.
        self.next_claim_at: datetime = given or datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=timezone.utc)


class IdempotencyKeyReused(ApiError):
    """422 ``idempotency_key_reused``: this ``Idempotency-Key`` came with another request within 10 minutes."""


class Unprocessable(ApiError):
    """422: ``import_refused``."""


class RateLimited(ApiError):
    """429 ``rate_limited``, past the retries (``retry_after`` says when a request is admitted)."""


class ServiceUnavailable(ApiError):
    """503 ``service_unavailable`` (Redis unreachable or slow, the instance overloaded or closing), past the retries."""


class ServerError(ApiError):
    """Any other 5xx (``internal_error``, a proxy's 502 or 504)."""


_BY_CODE: Dict[str, Type[ApiError]] = {
    "member_not_found": MemberNotFound,
    "daily_already_claimed": DailyAlreadyClaimed,
    "idempotency_key_reused": IdempotencyKeyReused,
}
_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: InvalidRequest, 401: AuthenticationFailed, 403: Forbidden, 404: NotFound, 409: Conflict,
    422: Unprocessable, 429: RateLimited, 503: ServiceUnavailable,
}


def error_class(status: int, code: str) -> Type[ApiError]:
    """The most specific class for an error answer."""
    found = _BY_CODE.get(code) or _BY_STATUS.get(status)
    if found is not None:
        return found
    return ServerError if status >= 500 else ApiError


def _parse_iso(text: str) -> Optional[datetime]:
    # fromisoformat takes "Z" only from Python 3.11.
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
