"""The asyncio client never blocks its event loop: while one of its requests waits on a slow
endpoint, and while it waits out a Retry-After, other tasks on the loop keep running.

No timing is asserted. The endpoint holds its answer until another task on the same loop lets it
go: a client that blocked the loop could never be answered (it times out, failing the test). A
Retry-After wait is checked by a task that counts its turns on the loop during the wait, against
the same count for a client that blocks. The same check is run on a client that does block (the
blocking client called from a coroutine) to show that it catches one.
"""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Awaitable, Callable, List

from guild_leaderboard import AsyncLeaderboardClient, LeaderboardClient, ServerError

from .support import EMPTY_PAGE, Answer, Endpoint, HeldEndpoint


async def tick(counter: List[int]) -> None:
    """A task that counts its turns on the loop."""
    while True:
        counter[0] += 1
        await asyncio.sleep(0.001)


async def release_when_received(endpoint: HeldEndpoint) -> None:
    """Lets the endpoint answer once its request has arrived: only a loop that is free gets here."""
    while not endpoint.received.is_set():
        await asyncio.sleep(0.001)
    endpoint.release.set()


async def while_held(endpoint: HeldEndpoint, request: Callable[[], Awaitable[Any]]) -> Any:
    """``request()`` with a task beside it that lets the endpoint answer once the request is there."""
    releaser = asyncio.ensure_future(release_when_received(endpoint))
    try:
        return await request()
    finally:
        releaser.cancel()


class EventLoopTest(unittest.TestCase):
    def endpoint(self, hold: float = 60.0) -> HeldEndpoint:
        endpoint = HeldEndpoint(hold)
        self.addCleanup(endpoint.close)
        return endpoint

    def test_the_loop_runs_other_tasks_while_a_request_waits_for_a_slow_answer(self) -> None:
        endpoint = self.endpoint()

        async def main() -> Any:
            # No retries: a client that blocked would time out, and its retry find the answer let go.
            async with AsyncLeaderboardClient(api_url=endpoint.url, api_key="lbk_test", retry_for=0) as client:
                return await while_held(endpoint, lambda: client.leaderboard(1))
        # The endpoint answered 200 only because the releaser ran while the request was in flight.
        self.assertEqual(asyncio.run(main()), {"data": [], "total": 0, "page": 1})

    def test_the_loop_runs_other_tasks_while_the_client_waits_out_a_retry_after(self) -> None:
        # A ticker counts its turns (one a millisecond at most) from the 503 to the retry, for the
        # asyncio client and, as the control, for the blocking one called on the loop: that one
        # can tick only during the retry's own connection, the asyncio client all through the wait.
        asynchronous, control = self.ticks_during_retry_after(asynchronous=True), self.ticks_during_retry_after(asynchronous=False)
        self.assertGreater(asynchronous, 10 * max(1, control), f"turns during the wait: {asynchronous}; with a blocking wait: {control}")

    def ticks_during_retry_after(self, *, asynchronous: bool) -> int:
        ticks, at_request = [0], []  # type: List[int], List[int]

        def answer() -> Answer:
            at_request.append(ticks[0])
            if len(at_request) == 1:
                return 503, {"retry-after": "1"}, b'{"statusCode":503,"error":"x","code":"service_unavailable","message":"busy"}'
            return 200, {}, EMPTY_PAGE
        endpoint = Endpoint(answer)
        self.addCleanup(endpoint.close)
        url = endpoint.url

        async def main() -> None:
            ticker = asyncio.ensure_future(tick(ticks))
            try:
                if asynchronous:
                    async with AsyncLeaderboardClient(api_url=url, api_key="k") as client:
                        await client.leaderboard(1)
                else:
                    with LeaderboardClient(api_url=url, api_key="k") as blocking:
                        await asyncio.sleep(0.01)  # the ticker's first turns, as the asyncio client's connection gives it
                        blocking.leaderboard(1)
            finally:
                ticker.cancel()
        asyncio.run(main())
        self.assertEqual(len(at_request), 2, "a 503 with retry-after, then the retry")
        return at_request[1] - at_request[0]

    def test_the_check_catches_a_client_that_blocks_the_loop(self) -> None:
        endpoint = self.endpoint(hold=1.0)

        async def main() -> Any:
            blocking = LeaderboardClient(api_url=endpoint.url, api_key="lbk_test", retry_for=0)

            async def request() -> None:
                blocking.leaderboard(1)  # blocks the loop: the releaser never runs
            try:
                return await while_held(endpoint, request)
            finally:
                blocking.close()
        with self.assertRaises(ServerError) as raised:
            asyncio.run(main())
        self.assertEqual(raised.exception.code, "never_released")


if __name__ == "__main__":
    unittest.main()
