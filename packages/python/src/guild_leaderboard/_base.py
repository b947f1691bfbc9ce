"""What both clients hold, whatever their I/O: the calls of the two APIs, the retry rules, and
the awards queued for the batches.
"""

from __future__ import annotations

import ssl
from typing import Any, Callable, Dict, Generic, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar

from ._batch import PendingAwards
from ._ids import Snowflake, snowflake
from ._protocol import MAX_BATCH, Operations, RetryInfo, RetryPolicy, award_item
from .types import KEEP, Award, ProfileValue, Xp

F = TypeVar("F")


class ClientBase(Generic[F]):
    """Both APIs of the service: writes through ``admin_url`` with ``token``, reads through
    ``api_url`` with ``api_key`` (give either pair, or both).

    ``timeout`` bounds an attempt (the asyncio client's whole attempt; the blocking client's
    connection and each read of the answer, as ``http.client`` does); a call retries what
    passes (no answer, ``429``, ``502``, ``503``, ``504``) for up to ``retry_for`` seconds,
    honouring ``Retry-After``, and tells ``on_retry`` before each wait. Awards queued with ``award()`` are sent in batches of up to
    ``max_batch``, a batch as soon as it is full, every award ``flush_interval`` seconds after
    the oldest was queued at the latest, and on ``flush()`` and close; past ``max_pending``
    waiting, ``award()`` raises AwardQueueFull. ``ssl_context`` verifies an https service.
    """

    def __init__(self, *, admin_url: Optional[str] = None, token: Optional[str] = None, api_url: Optional[str] = None,
                 api_key: Optional[str] = None, timeout: float = 10.0, retry_for: float = 30.0, flush_interval: float = 1.0,
                 max_batch: int = MAX_BATCH, max_pending: int = 100_000, on_retry: Optional[Callable[[RetryInfo], None]] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        if not 1 <= max_batch <= MAX_BATCH:
            raise ValueError(f"max_batch must be from 1 to {MAX_BATCH}")
        if flush_interval <= 0:
            raise ValueError("flush_interval must be positive")
        self._ops = Operations(admin_url=admin_url, token=token, api_url=api_url, api_key=api_key)
        self._policy = RetryPolicy(retry_for=retry_for)
        self._on_retry = on_retry
        self._flush_interval = flush_interval
        self._pending: PendingAwards[F] = PendingAwards(max_batch, max_pending)
        #: Every award future not yet settled, sent or not: what flush and close wait for.
        self._unsettled: Set[F] = set()
        self._closed = False
        self._start(timeout, ssl_context)

    def _start(self, timeout: float, ssl_context: Optional[ssl.SSLContext]) -> None:
        """Makes the client's transport and the state its sender needs."""
        raise NotImplementedError


def queued_award(guild_id: Snowflake, user_id: Snowflake, xp: Xp, username: Optional[str], op_id: Optional[Snowflake],
                 role_ids: Optional[Iterable[Snowflake]], channel_id: Optional[Snowflake],
                 display_name: ProfileValue, avatar_url: ProfileValue) -> Tuple[str, Dict[str, Any]]:
    """The server and the checked item of an ``award()`` call."""
    return snowflake("guild_id", guild_id), award_item(user_id, xp, username_=username, op_id=op_id,
                                                       role_ids=None if role_ids is None else list(role_ids), channel_id=channel_id,
                                                       display_name=display_name, avatar_url_=avatar_url)


def award_items(awards: Sequence[Award]) -> List[Dict[str, Any]]:
    """The checked items of an ``award_many()`` call: a key left out keeps the stored name or avatar, None clears it."""
    return [award_item(a["user_id"], a["xp"], username_=a.get("username"), op_id=a.get("op_id"),
                       role_ids=a.get("role_ids"), channel_id=a.get("channel_id"),
                       display_name=a.get("display_name", KEEP), avatar_url_=a.get("avatar_url", KEEP)) for a in awards]
