"""Awards waiting to be sent, for both clients: per server, in the order given, each with the
future its caller holds. The clients decide when to send (a full batch, the flush interval, a
flush or close) and settle the futures with what the service answers.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, Deque, Dict, Generic, List, Optional, Tuple, TypeVar

from .errors import AwardQueueFull

F = TypeVar("F")

Item = Tuple[Dict[str, Any], F]


class PendingAwards(Generic[F]):
    def __init__(self, max_batch: int, max_pending: int) -> None:
        self.max_batch = max_batch
        self.max_pending = max_pending
        self._queues: "OrderedDict[str, Deque[Item[F]]]" = OrderedDict()
        self._count = 0
        #: When the oldest award still waiting was queued (the caller's clock), or None when none waits.
        self.oldest: Optional[float] = None

    def __len__(self) -> int:
        return self._count

    def add(self, guild_id: str, item: Dict[str, Any], future: F, now: float) -> bool:
        """Queues an award; True when it completes a batch of the server's, which should be sent now."""
        if self._count >= self.max_pending:
            raise AwardQueueFull(f"{self._count} awards are waiting to be sent (max_pending); is the service reachable?")
        queue = self._queues.setdefault(guild_id, deque())
        queue.append((item, future))
        self._count += 1
        if self.oldest is None:
            self.oldest = now
        return len(queue) % self.max_batch == 0

    def has_full_batch(self) -> bool:
        return any(len(queue) >= self.max_batch for queue in self._queues.values())

    def guild_ids(self) -> List[str]:
        return list(self._queues)

    def batches_waiting(self, guild_id: str) -> int:
        """How many batches the server's waiting awards make."""
        return -(-len(self._queues.get(guild_id, ())) // self.max_batch)

    def take(self, guild_id: str) -> List[Item[F]]:
        """The server's next batch (its oldest awards, up to max_batch); empty when none waits."""
        queue = self._queues.get(guild_id)
        if queue is None:
            return []
        batch = [queue.popleft() for _ in range(min(self.max_batch, len(queue)))]
        if not queue:
            del self._queues[guild_id]
        self._count -= len(batch)
        if self._count == 0:
            self.oldest = None
        return batch

    def take_full(self) -> List[Tuple[str, List[Item[F]]]]:
        """The full batches waiting (max_batch awards each); the rest waits for its time."""
        return [(guild_id, self.take(guild_id)) for guild_id, queue in list(self._queues.items())
                for _ in range(len(queue) // self.max_batch)]

    def take_all(self) -> List[Tuple[str, List[Item[F]]]]:
        """Every award waiting, as batches of at most max_batch, each server's in order."""
        batches = []
        while self._queues:
            guild_id = next(iter(self._queues))
            batches.append((guild_id, self.take(guild_id)))
        return batches
