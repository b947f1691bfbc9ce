"""The asyncio client, for bots on an event loop (discord.py): every wait is ``asyncio.sleep``
and every request goes over asyncio streams, so a call never blocks the loop.

::

    async with AsyncLeaderboardClient(admin_url=..., token=..., api_url=..., api_key=...) as client:
        result = await client.award(message.guild.id, message.author.id, 20, op_id=message.id)
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, TypeVar, cast

from ._async_http import AsyncTransport
from ._base import ClientBase, award_items, queued_award
from ._batch import Item
from ._ids import Snowflake
from ._protocol import Call, Request, TransportError, Wait, attempts
from .errors import ClientClosed
from .types import (KEEP, AdminMemberRecord, AroundPage, Award, AwardResult, DailyClaim, GuildStats, LeaderboardPage, MemberList,
                    MemberRecord, Period, ProfileValue, Settings, SettingsUpdate, Visibility, VisibilityChange, Xp)

T = TypeVar("T")
log = logging.getLogger("guild_leaderboard")


class AsyncLeaderboardClient(ClientBase[asyncio.Future[AwardResult]]):
    """The asyncio client: every method is a coroutine, except :meth:`award`, which returns a
    future at once and whose batches tasks of the running loop send; :meth:`aclose` sends what is
    queued. Nothing it does blocks the loop. Options: see ClientBase.
    """

    def _start(self, timeout: float, ssl_context: Optional[ssl.SSLContext]) -> None:
        self._transport = AsyncTransport(timeout, ssl_context)
        self._locks: Dict[str, asyncio.Lock] = {}
        self._tasks: Set[asyncio.Task[None]] = set()
        self._timer: Optional[asyncio.TimerHandle] = None
        self._closing = False

    async def __aenter__(self) -> AsyncLeaderboardClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    # Awards, batched

    def award(self, guild_id: Snowflake, user_id: Snowflake, xp: Xp, *, username: Optional[str] = None,
              op_id: Optional[Snowflake] = None, role_ids: Optional[Iterable[Snowflake]] = None,
              channel_id: Optional[Snowflake] = None,
              display_name: ProfileValue = KEEP, avatar_url: ProfileValue = KEEP) -> asyncio.Future[AwardResult]:
        """Queues an award; the future settles with its result once its batch is sent.

        Await it for the result (a level-up to announce), or leave it: it is sent all the same.
        ``op_id`` (the message id) makes the award apply once however often it is sent. A bad
        argument raises here, so that it never sinks the batch it would have joined.
        """
        if self._closing:
            raise ClientClosed("this client was closed")
        guild, item = queued_award(guild_id, user_id, xp, username, op_id, role_ids, channel_id, display_name, avatar_url)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AwardResult] = loop.create_future()
        if self._pending.add(guild, item, future, loop.time()):
            self._spawn(self._send_batch(guild))
        elif self._timer is None:
            self._timer = loop.call_later(self._flush_interval, self._flush_due)
        self._unsettled.add(future)
        future.add_done_callback(self._unsettled.discard)
        return future

    async def award_many(self, guild_id: Snowflake, awards: Sequence[Award], *, idempotency_key: Optional[str] = None) -> List[AwardResult]:
        """Sends up to 1,000 awards in one request now, without the queue; their results in order."""
        return await self._call(self._ops.award_batch(guild_id, award_items(awards), idempotency_key))

    async def flush(self) -> None:
        """Sends every queued award now and waits for all of them; raises the first batch's error, if any failed."""
        waiting = list(self._unsettled)
        for guild_id in self._pending.guild_ids():
            for _ in range(self._pending.batches_waiting(guild_id)):
                self._spawn(self._send_batch(guild_id))
        outcomes = await asyncio.gather(*waiting, return_exceptions=True)
        for result in outcomes:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result

    async def aclose(self) -> None:
        """Sends what is queued, then closes the connections. Raises the first batch's error, after closing, if any failed."""
        if self._closing:
            return
        self._closing = True  # no award may join the queue now: it would never be sent
        try:
            await self.flush()
        finally:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            self._transport.close()

    # The write API, one request each

    async def set_member(self, guild_id: Snowflake, user_id: Snowflake, *, xp: Optional[int] = None,
                         username: Optional[str] = None, display_name: ProfileValue = KEEP, avatar_url: ProfileValue = KEEP,
                         idempotency_key: Optional[str] = None) -> AdminMemberRecord:
        """Sets a member's XP outright (not multiplied), its names or its avatar (None clears a display name or an avatar);
        the member's record after it, hidden or not."""
        return await self._call(self._ops.set_member(guild_id, user_id, xp, username, display_name, avatar_url, idempotency_key))

    async def remove_member(self, guild_id: Snowflake, user_id: Snowflake, *, idempotency_key: Optional[str] = None) -> None:
        """Removes a member and all its data; :class:`~guild_leaderboard.errors.MemberNotFound` for a non-member."""
        await self._call(self._ops.remove_member(guild_id, user_id, idempotency_key))

    async def claim_daily(self, guild_id: Snowflake, user_id: Snowflake, *, username: Optional[str] = None,
                          idempotency_key: Optional[str] = None) -> DailyClaim:
        """Records today's claim (UTC); :class:`~guild_leaderboard.errors.DailyAlreadyClaimed` if already made today."""
        return await self._call(self._ops.claim_daily(guild_id, user_id, username, idempotency_key))

    async def set_visibility(self, guild_id: Snowflake, user_id: Snowflake, *, visible: bool, reason: Optional[str] = None,
                       idempotency_key: Optional[str] = None) -> Visibility:
        """Hides (``visible=False`` with ``reason`` ``"left"`` or ``"opted_out"``) or shows a user on every public read;
        its XP is kept. Showing with a reason takes only that reason away."""
        return await self._call(self._ops.set_visibility(guild_id, user_id, visible, reason, idempotency_key))

    async def set_visibility_many(self, guild_id: Snowflake, changes: Sequence[VisibilityChange], *,
                            idempotency_key: Optional[str] = None) -> List[Visibility]:
        """1 to 10,000 changes at once (a join and leave sync); each user's visibility after them, in order."""
        return await self._call(self._ops.set_visibility_many(guild_id, changes, idempotency_key))

    async def settings(self, guild_id: Snowflake) -> Settings:
        return await self._call(self._ops.settings(guild_id))

    async def update_settings(self, guild_id: Snowflake, update: SettingsUpdate, *, idempotency_key: Optional[str] = None) -> Settings:
        """Changes the fields given; the settings after the change."""
        return await self._call(self._ops.update_settings(guild_id, update, idempotency_key))

    # The read API

    async def leaderboard(self, guild_id: Snowflake, *, limit: Optional[int] = None, page: Optional[int] = None,
                          period: Optional[Period] = None) -> LeaderboardPage:
        return await self._call(self._ops.leaderboard(guild_id, limit, page, period))

    async def member(self, guild_id: Snowflake, user_id: Snowflake) -> MemberRecord:
        return await self._call(self._ops.member(guild_id, user_id))

    async def around(self, guild_id: Snowflake, user_id: Snowflake, *, radius: Optional[int] = None) -> AroundPage:
        return await self._call(self._ops.around(guild_id, user_id, radius))

    async def members(self, guild_id: Snowflake, user_ids: Sequence[Snowflake]) -> MemberList:
        return await self._call(self._ops.members(guild_id, user_ids))

    async def stats(self, guild_id: Snowflake) -> GuildStats:
        return await self._call(self._ops.stats(guild_id))

    # The machinery

    async def _call(self, call: Call[T]) -> T:
        self._check_open()
        loop = asyncio.get_running_loop()
        steps = attempts(call, self._policy, self._on_retry, loop.time)
        step = next(steps)
        while True:
            try:
                if isinstance(step, Wait):
                    await asyncio.sleep(step.seconds)
                    step = steps.send(None)
                else:
                    step = steps.send(await self._send(step))
            except StopIteration as done:
                return cast(T, done.value)

    async def _send(self, request: Request) -> Any:
        try:
            return await self._transport.send(request)
        except TransportError as error:
            return error

    def _flush_due(self) -> None:
        self._timer = None
        for guild_id in self._pending.guild_ids():
            self._spawn(self._send_batch(guild_id))

    async def _send_batch(self, guild_id: str) -> None:
        # One batch of a server at a time, so that its awards reach the service in the order given.
        lock = self._locks.setdefault(guild_id, asyncio.Lock())
        async with lock:
            batch = self._pending.take(guild_id)
            if batch:
                await self._settle(guild_id, batch)
        if not lock.locked() and guild_id not in self._pending.guild_ids():
            self._locks.pop(guild_id, None)
        if len(self._pending) and self._timer is None and not self._closed:
            self._timer = asyncio.get_running_loop().call_later(self._flush_interval, self._flush_due)

    async def _settle(self, guild_id: str, batch: List[Item[asyncio.Future[AwardResult]]]) -> None:
        try:
            results = await self._call(self._ops.award_batch(guild_id, [item for item, _ in batch]))
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as error:
            log.warning("%d awards to server %s were not sent: %s", len(batch), guild_id, error)
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosed("this client was closed")
