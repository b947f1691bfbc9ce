"""The blocking client, for scripts and bots without an event loop (for discord.py, use
:class:`~guild_leaderboard.aio.AsyncLeaderboardClient`). Safe to share between threads.

::

    with LeaderboardClient(admin_url=..., token=...) as client:
        client.award(guild_id, user_id, 20)          # queued, sent in a batch
        print(client.claim_daily(guild_id, user_id))  # one request
"""

from __future__ import annotations

import atexit
import logging
import ssl
import threading
import time
import weakref
from concurrent.futures import Future, wait
from typing import Callable, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union, cast

from ._base import ClientBase, award_items, queued_award
from ._batch import Item
from ._ids import Snowflake
from ._protocol import Call, Response, TransportError, Wait, attempts
from ._sync_http import SyncTransport
from .errors import ClientClosed
from .types import (KEEP, AdminMemberRecord, AroundPage, Award, AwardResult, DailyClaim, GuildStats, LeaderboardPage, MemberList,
                    MemberRecord, Period, ProfileValue, Settings, SettingsUpdate, Visibility, VisibilityChange, Xp)

T = TypeVar("T")
log = logging.getLogger("guild_leaderboard")


class LeaderboardClient(ClientBase[Future[AwardResult]]):
    """The blocking client: every method returns once its request is answered, except
    :meth:`award`, whose batches a background thread sends; :meth:`close` (also run at
    interpreter exit for a client left open) sends what is queued. Options: see ClientBase.
    """

    def _start(self, timeout: float, ssl_context: Optional[ssl.SSLContext]) -> None:
        self._transport = SyncTransport(timeout, ssl_context)
        self._changed = threading.Condition()
        self._flush_now = False
        self._closing = False
        self._sender: Optional[threading.Thread] = None
        self._at_exit: Optional[Callable[[], None]] = None

    def __enter__(self) -> LeaderboardClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # Awards, batched

    def award(self, guild_id: Snowflake, user_id: Snowflake, xp: Xp, *, username: Optional[str] = None,
              op_id: Optional[Snowflake] = None, role_ids: Optional[Iterable[Snowflake]] = None,
              channel_id: Optional[Snowflake] = None,
              display_name: ProfileValue = KEEP, avatar_url: ProfileValue = KEEP) -> Future[AwardResult]:
        """Queues an award and returns at once; the future settles with its result once its batch is sent.

        ``op_id`` (the message id) makes the award apply once however often it is sent. A bad
        argument raises here, so that it never sinks the batch it would have joined.
        """
        guild, item = queued_award(guild_id, user_id, xp, username, op_id, role_ids, channel_id, display_name, avatar_url)
        future: Future[AwardResult] = Future()
        with self._changed:
            if self._closing:
                raise ClientClosed("this client was closed")
            self._pending.add(guild, item, future, time.monotonic())
            self._unsettled.add(future)
            if self._sender is None:
                self._start_sender()
            self._changed.notify()
        future.add_done_callback(self._forget)
        return future

    def award_many(self, guild_id: Snowflake, awards: Sequence[Award], *, idempotency_key: Optional[str] = None) -> List[AwardResult]:
        """Sends up to 1,000 awards in one request now, without the queue; their results in order."""
        return self._call(self._ops.award_batch(guild_id, award_items(awards), idempotency_key))

    def flush(self) -> None:
        """Sends every queued award now and waits for all of them; raises the first batch's error, if any failed."""
        with self._changed:
            waiting = list(self._unsettled)
            self._flush_now = True
            self._changed.notify()
        _raise_first(waiting)

    def close(self) -> None:
        """Sends what is queued, then stops the sender and closes the connections.

        Raises the first batch's error, after closing, if any failed.
        """
        with self._changed:
            if self._closing:
                return
            self._closing = True
            waiting = list(self._unsettled)
            self._changed.notify()
            sender = self._sender
        if sender is not None:
            sender.join()
        if self._at_exit is not None:
            atexit.unregister(self._at_exit)
        self._closed = True
        self._transport.close()
        _raise_first(waiting)

    # The write API, one request each

    def set_member(self, guild_id: Snowflake, user_id: Snowflake, *, xp: Optional[int] = None,
                   username: Optional[str] = None, display_name: ProfileValue = KEEP, avatar_url: ProfileValue = KEEP,
                   idempotency_key: Optional[str] = None) -> AdminMemberRecord:
        """Sets a member's XP outright (not multiplied), its names or its avatar (None clears a display name or an avatar);
        the member's record after it, hidden or not."""
        return self._call(self._ops.set_member(guild_id, user_id, xp, username, display_name, avatar_url, idempotency_key))

    def remove_member(self, guild_id: Snowflake, user_id: Snowflake, *, idempotency_key: Optional[str] = None) -> None:
        """Removes a member and all its data; :class:`~guild_leaderboard.errors.MemberNotFound` for a non-member."""
        self._call(self._ops.remove_member(guild_id, user_id, idempotency_key))

    def claim_daily(self, guild_id: Snowflake, user_id: Snowflake, *, username: Optional[str] = None,
                    idempotency_key: Optional[str] = None) -> DailyClaim:
        """Records today's claim (UTC); :class:`~guild_leaderboard.errors.DailyAlreadyClaimed` if already made today."""
        return self._call(self._ops.claim_daily(guild_id, user_id, username, idempotency_key))

    def set_visibility(self, guild_id: Snowflake, user_id: Snowflake, *, visible: bool, reason: Optional[str] = None,
                       idempotency_key: Optional[str] = None) -> Visibility:
        """Hides (``visible=False`` with ``reason`` ``"left"`` or ``"opted_out"``) or shows a user on every public read;
        its XP is kept. Showing with a reason takes only that reason away."""
        return self._call(self._ops.set_visibility(guild_id, user_id, visible, reason, idempotency_key))

    def set_visibility_many(self, guild_id: Snowflake, changes: Sequence[VisibilityChange], *,
                            idempotency_key: Optional[str] = None) -> List[Visibility]:
        """1 to 10,000 changes at once (a join and leave sync); each user's visibility after them, in order."""
        return self._call(self._ops.set_visibility_many(guild_id, changes, idempotency_key))

    def settings(self, guild_id: Snowflake) -> Settings:
        return self._call(self._ops.settings(guild_id))

    def update_settings(self, guild_id: Snowflake, update: SettingsUpdate, *, idempotency_key: Optional[str] = None) -> Settings:
        """Changes the fields given; the settings after the change."""
        return self._call(self._ops.update_settings(guild_id, update, idempotency_key))

    # The read API

    def leaderboard(self, guild_id: Snowflake, *, limit: Optional[int] = None, page: Optional[int] = None,
                    period: Optional[Period] = None) -> LeaderboardPage:
        return self._call(self._ops.leaderboard(guild_id, limit, page, period))

    def member(self, guild_id: Snowflake, user_id: Snowflake) -> MemberRecord:
        return self._call(self._ops.member(guild_id, user_id))

    def around(self, guild_id: Snowflake, user_id: Snowflake, *, radius: Optional[int] = None) -> AroundPage:
        return self._call(self._ops.around(guild_id, user_id, radius))

    def members(self, guild_id: Snowflake, user_ids: Sequence[Snowflake]) -> MemberList:
        return self._call(self._ops.members(guild_id, user_ids))

    def stats(self, guild_id: Snowflake) -> GuildStats:
        return self._call(self._ops.stats(guild_id))

    # The machinery

    def _call(self, call: Call[T]) -> T:
        if self._closed:
            raise ClientClosed("this client was closed")
        steps = attempts(call, self._policy, self._on_retry, time.monotonic)
        step = next(steps)
        while True:
            try:
                if isinstance(step, Wait):
                    time.sleep(step.seconds)
                    step = steps.send(None)
                else:
                    answer: Union[Response, TransportError]
                    try:
                        answer = self._transport.send(step)
                    except TransportError as error:
                        answer = error
                    step = steps.send(answer)
            except StopIteration as done:
                return cast(T, done.value)

    def _start_sender(self) -> None:
        self._sender = threading.Thread(target=self._send_loop, name="guild-leaderboard-awards", daemon=True)
        self._sender.start()
        # A daemon thread dies with the interpreter: close at exit, so that queued awards are sent.
        client = weakref.ref(self)

        def close_at_exit() -> None:
            alive = client()
            if alive is not None:
                alive.close()
        self._at_exit = close_at_exit
        atexit.register(close_at_exit)

    def _send_loop(self) -> None:
        while True:
            with self._changed:
                batches = self._wait_for_batches()
            if batches is None:
                return
            for guild_id, batch in batches:
                self._settle(guild_id, batch)

    def _wait_for_batches(self) -> Optional[List[Tuple[str, List[Item[Future[AwardResult]]]]]]:
        """Under the lock: the full batches, or every award waiting once the oldest is due or a flush or close asks; None to stop."""
        while True:
            if len(self._pending) == 0:
                self._flush_now = False
                if self._closing:
                    return None
                self._changed.wait()
                continue
            oldest = self._pending.oldest if self._pending.oldest is not None else time.monotonic()
            due = oldest + self._flush_interval - time.monotonic()
            if self._flush_now or self._closing or due <= 0:
                self._flush_now = False
                return self._pending.take_all()
            if self._pending.has_full_batch():
                return self._pending.take_full()
            self._changed.wait(due)

    def _settle(self, guild_id: str, batch: List[Item[Future[AwardResult]]]) -> None:
        try:
            results = self._call(self._ops.award_batch(guild_id, [item for item, _ in batch]))
        except Exception as error:
            log.warning("%d awards to server %s were not sent: %s", len(batch), guild_id, error)
            for _, future in batch:
                if future.set_running_or_notify_cancel():
                    future.set_exception(error)
            return
        for (_, future), result in zip(batch, results):
            if future.set_running_or_notify_cancel():
                future.set_result(result)

    def _forget(self, future: Future[AwardResult]) -> None:
        with self._changed:
            self._unsettled.discard(future)


def _raise_first(futures: List[Future[AwardResult]]) -> None:
    wait(futures)
    for future in futures:
        error = None if future.cancelled() else future.exception()
        if error is not None:
            raise error
