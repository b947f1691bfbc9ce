"""Both clients against the live service, case by case: the same cases run once with the
blocking client and once with the asyncio one (each calls its client in its own way: ``call``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import re
import signal
import unittest
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Collection, List, Tuple, Union

from guild_leaderboard import (KEEP, AsyncLeaderboardClient, AuthenticationFailed, ClientClosed, ConnectionFailed, DailyAlreadyClaimed,
                               Forbidden, IdempotencyKeyReused, InvalidRequest, LeaderboardClient, MemberNotFound, RateLimited, RetryInfo)
from guild_leaderboard.types import AdminMemberRecord, GuildStats, LeaderboardEntry, MemberRecord, Settings

from .support import HANG_GUARD_SECONDS, Proxy, closed_port, free_key, fresh_guild, live

Client = Union[LeaderboardClient, AsyncLeaderboardClient]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

# discord.py's ids: ints past 2**53, where a float (and many JSON readers) loses the last digits.
USER = 1200000000000000001
assert float(USER) == 1200000000000000000


class Shared:
    # Nested, so that unittest runs the cases only through the two subclasses below.
    class ClientCases(unittest.TestCase):
        def make(self, **options: Any) -> Client:
            raise NotImplementedError

        def call(self, work: Callable[[], Any]) -> Any:
            """``work()`` (a method call of a client) run as its client runs, and its value: a result, or a settled award's."""
            raise NotImplementedError

        def client(self, **options: Any) -> Client:
            """A client of the live service (options override the URLs and secrets), closed after the test."""
            env = live()
            given = {"admin_url": env.admin_url, "token": env.token, "api_url": env.api_url, "api_key": env.api_key, **options}
            return self.make(**given)

        def proxied(self, drop: Collection[int] = (), **options: Any) -> Tuple[Client, Proxy]:
            """A client whose requests to both APIs pass through a recording proxy each (the write API's is returned)."""
            env = live()
            admin, api = Proxy(env.admin_port, drop=drop), Proxy(env.api_port)
            self.addCleanup(admin.close)
            self.addCleanup(api.close)
            return self.client(admin_url=admin.url("/admin/v1"), api_url=api.url("/api/v1"), **options), admin

        def test_an_int_id_past_2_53_lands_on_the_right_member(self) -> None:
            client, guild = self.client(), fresh_guild()
            result = self.call(lambda: client.award(guild, USER, 120, username="Nova"))
            self.assertEqual(result, {"user_id": "1200000000000000001", "xp": 120, "gained": 120, "level": 1, "leveled_up": True, "applied": True})
            record = self.call(lambda: client.member(guild, USER))
            self.assertEqual((record["user_id"], record["username"], record["xp"]), ("1200000000000000001", "Nova", 120))
            self.assertEqual(self.call(lambda: client.member(str(guild), "1200000000000000001"))["xp"], 120, "the same member by string ids")
            with self.assertRaises(MemberNotFound, msg="the id a float would have made is nobody"):
                self.call(lambda: client.member(guild, 1200000000000000000))
            self.assertEqual([e["user_id"] for e in self.call(lambda: client.leaderboard(guild))["data"]], ["1200000000000000001"])

        def test_members_who_left_are_hidden_from_every_read_and_shown_again_with_their_xp(self) -> None:
            client, guild = self.client(), fresh_guild()
            self.call(lambda: client.award_many(guild, [{"user_id": USER, "xp": 300}, {"user_id": 5, "xp": 200}, {"user_id": 6, "xp": 100}]))
            hidden = self.call(lambda: client.set_visibility(guild, USER, visible=False, reason="left"))
            self.assertEqual(hidden, {"user_id": "1200000000000000001", "visible": False, "reasons": ["left"], "xp": 300})
            page = self.call(lambda: client.leaderboard(guild))
            self.assertEqual([(e["rank"], e["user_id"]) for e in page["data"]], [(1, "5"), (2, "6")], "everyone moved up")
            self.assertEqual(page["total"], 2)
            with self.assertRaises(MemberNotFound):
                self.call(lambda: client.member(guild, USER))
            many = self.call(lambda: client.set_visibility_many(guild, [
                {"user_id": USER, "visible": True, "reason": "left"}, {"user_id": 6, "visible": False, "reason": "opted_out"}]))
            self.assertEqual([(v["user_id"], v["visible"], v["reasons"], v["xp"]) for v in many],
                             [("1200000000000000001", True, [], 300), ("6", False, ["opted_out"], 100)])
            self.assertEqual([(e["rank"], e["user_id"], e["xp"]) for e in self.call(lambda: client.leaderboard(guild))["data"]],
                             [(1, "1200000000000000001", 300), (2, "5", 200)], "shown again with its XP")
            with self.assertRaises(ValueError, msg="hiding needs a reason"):
                self.call(lambda: client.set_visibility(guild, 5, visible=False))
            with self.assertRaises(ValueError):
                self.call(lambda: client.set_visibility(guild, 5, visible=False, reason="banned"))

        def test_awards_go_in_batches_of_up_to_1000_full_ones_at_once_the_rest_on_flush(self) -> None:
            client, proxy = self.proxied(flush_interval=HANG_GUARD_SECONDS)
            guild = fresh_guild()
            futures = self.call(lambda: [client.award(guild, 1000 + n, 1 + n % 7) for n in range(2500)])
            self.call(lambda: _all(futures[:2000]))
            self.assertEqual([len(e.json()["awards"]) for e in proxy.exchanges], [1000, 1000], "two full batches, sent without waiting")
            self.assertFalse(any(f.done() for f in futures[2000:]), "the last 500 wait for the flush interval")
            self.call(client.flush)
            self.assertEqual([len(e.json()["awards"]) for e in proxy.exchanges], [1000, 1000, 500])
            sent = [a for e in proxy.exchanges for a in e.json()["awards"]]
            self.assertEqual([a["user_id"] for a in sent], [str(1000 + n) for n in range(2500)], "in the order given, ids as strings")
            self.assertEqual([f.result()["xp"] for f in futures], [1 + n % 7 for n in range(2500)])
            stats = self.call(lambda: client.stats(guild))
            self.assertEqual((stats["total_members"], stats["total_xp"]), (2500, sum(1 + n % 7 for n in range(2500))))

        def test_a_queued_award_is_sent_once_the_flush_interval_has_passed(self) -> None:
            client, proxy = self.proxied(flush_interval=0.2)
            guild = fresh_guild()
            result = self.call(lambda: client.award(guild, 7, 30))  # waits for its batch: no flush, no close
            self.assertEqual((result["xp"], len(proxy.exchanges)), (30, 1))

        def test_close_sends_the_awards_still_queued(self) -> None:
            client, guild = self.client(flush_interval=HANG_GUARD_SECONDS), fresh_guild()
            futures = self.call(lambda: [client.award(guild, 7, 10), client.award(guild, 8, 20)])
            self.assertFalse(any(f.done() for f in futures))
            self.call(client.aclose if isinstance(client, AsyncLeaderboardClient) else client.close)
            self.assertEqual([f.result()["xp"] for f in futures], [10, 20])
            with self.assertRaises(ClientClosed):
                self.call(lambda: client.award(guild, 9, 10))
            with self.assertRaises(ClientClosed):
                self.call(lambda: client.stats(guild))
            reader = self.client()
            self.assertEqual(self.call(lambda: reader.leaderboard(guild))["total"], 2)

        def test_every_write_carries_a_key_of_its_own_and_reads_none(self) -> None:
            client, proxy = self.proxied()
            guild = fresh_guild()
            self.call(lambda: client.award_many(guild, [{"user_id": 5, "xp": 10}]))
            self.call(lambda: client.award(guild, 5, 10))
            self.call(lambda: client.set_member(guild, 5, username="Ada"))
            self.call(lambda: client.claim_daily(guild, 5))
            self.call(lambda: client.update_settings(guild, {"xp_curve": "linear"}))
            self.call(lambda: client.settings(guild))
            self.call(lambda: client.remove_member(guild, 5))
            keys = [e.headers.get("idempotency-key") for e in proxy.exchanges]
            self.assertEqual([e.method for e in proxy.exchanges], ["POST", "POST", "PUT", "POST", "PUT", "GET", "DELETE"])
            writes = [k for k, e in zip(keys, proxy.exchanges) if e.method != "GET"]
            self.assertTrue(all(k is not None and UUID.fullmatch(k) for k in writes), keys)
            self.assertEqual(len(set(writes)), 6, "one key per call")
            self.assertIsNone(keys[5], "a read sends none")

        def test_a_write_whose_answer_was_lost_is_sent_again_with_its_key_and_applied_once(self) -> None:
            retries: List[RetryInfo] = []
            client, proxy = self.proxied(drop={0, 2, 4}, on_retry=retries.append)
            guild = fresh_guild()
            self.assertEqual(self.call(lambda: client.award_many(guild, [{"user_id": 5, "xp": 40}]))[0]["xp"], 40)
            self.assertEqual(self.call(lambda: client.award(guild, 6, 50))["xp"], 50)
            self.assertEqual(self.call(lambda: client.claim_daily(guild, 7))["daily_streak"], 1)
            calls = [proxy.exchanges[i:i + 2] for i in (0, 2, 4)]
            for first, again in calls:
                self.assertTrue(first.dropped and not again.dropped)
                self.assertEqual((again.headers["idempotency-key"], again.body), (first.headers["idempotency-key"], first.body))
                self.assertEqual(first.status, 200, "the service had applied it")
            self.assertEqual([e.response_headers.get("idempotent-replayed") for _, e in calls], ["true"] * 3,
                             "the retries were answered from the first")
            reader = self.client()
            board = self.call(lambda: reader.leaderboard(guild))
            self.assertEqual({e["user_id"]: e["xp"] for e in board["data"]}, {"5": 40, "6": 50, "7": 0}, "each applied once")

        def test_a_429_is_retried_after_its_retry_after_and_a_wait_past_retry_for_raises_at_once(self) -> None:
            env, guild = live(), fresh_guild()
            retries: List[RetryInfo] = []
            proxy = Proxy(env.api_port)
            self.addCleanup(proxy.close)
            patient = self.make(api_url=proxy.url("/api/v1"), api_key=free_key(guild), on_retry=retries.append)
            for _ in range(env.free_limit + 1):
                self.call(lambda: patient.stats(guild))
            refused = [e for e in proxy.exchanges if e.status == 429]
            self.assertTrue(refused, [e.status for e in proxy.exchanges])
            self.assertEqual(proxy.exchanges[-1].status, 200)
            self.assertEqual([(r.status, r.delay) for r in retries], [(429, float(e.response_headers["retry-after"])) for e in refused])

            hasty = self.make(api_url=env.api_url, api_key=free_key(guild), retry_for=0.5)
            for _ in range(env.free_limit):
                self.call(lambda: hasty.stats(guild))
            with self.assertRaises(RateLimited) as raised:
                self.call(lambda: hasty.stats(guild))
            self.assertEqual((raised.exception.status, raised.exception.code), (429, "rate_limited"))
            self.assertGreaterEqual(raised.exception.retry_after or 0, 1)

        def stalled(self, work: Callable[[Client], Any]) -> Tuple[Any, List[RetryInfo], Proxy, Proxy]:
            """``work(client)`` run while the service's Redis is paused (SIGSTOP), resumed at the client's first retry."""
            env = live()
            retries: List[RetryInfo] = []

            def resume(info: RetryInfo) -> None:
                retries.append(info)
                os.kill(env.redis_pid, signal.SIGCONT)
            admin, api = Proxy(env.admin_port), Proxy(env.api_port)
            for proxy in (admin, api):
                self.addCleanup(proxy.close)
            client = self.client(admin_url=admin.url("/admin/v1"), api_url=api.url("/api/v1"), on_retry=resume)
            self.addCleanup(os.kill, env.redis_pid, signal.SIGCONT)
            os.kill(env.redis_pid, signal.SIGSTOP)
            return self.call(lambda: work(client)), retries, admin, api

        def test_a_stalled_redis_gets_a_503_that_is_retried_after_its_retry_after(self) -> None:
            guild = fresh_guild()
            stats, retries, _, api = self.stalled(lambda client: client.stats(guild))
            self.assertEqual(stats["total_members"], 0)
            self.assertEqual(api.exchanges[0].status, 503)
            self.assertEqual((retries[0].status, retries[0].delay), (503, float(api.exchanges[0].response_headers["retry-after"])))
            self.assertEqual(api.exchanges[-1].status, 200)

        def test_a_write_during_a_stalled_redis_is_retried_with_its_key_and_applied_once(self) -> None:
            guild = fresh_guild()
            results, retries, admin, _ = self.stalled(lambda client: client.award_many(guild, [{"user_id": 5, "xp": 40}]))
            self.assertEqual(results[0]["xp"], 40)
            self.assertEqual((admin.exchanges[0].status, retries[0].status), (503, 503))
            self.assertEqual(len({e.headers["idempotency-key"] for e in admin.exchanges}), 1, "every attempt with the call's key")
            self.assertEqual(self.call(lambda: self.client().member(guild, 5))["xp"], 40, "applied once")

        def test_an_unreachable_service_raises_connection_failed_with_the_write_s_key(self) -> None:
            retries: List[RetryInfo] = []
            client = self.client(admin_url=f"http://127.0.0.1:{closed_port()}/admin/v1", retry_for=0.5, on_retry=retries.append)
            with self.assertRaises(ConnectionFailed) as raised:
                self.call(lambda: client.claim_daily(fresh_guild(), 5, idempotency_key="daily-5-2026-11-25"))
            self.assertEqual(raised.exception.idempotency_key, "daily-5-2026-11-25", "what a retry by the caller sends again")
            self.assertTrue(retries and all(r.status is None and r.idempotency_key == "daily-5-2026-11-25" for r in retries))
            future = self.call(lambda: [client.award(fresh_guild(), 5, 10)])[0]
            with self.assertRaises(ConnectionFailed, msg="flush raises what the batch met"), \
                    self.assertLogs("guild_leaderboard", "WARNING") as logged:
                self.call(client.flush)
            self.assertIn("1 awards to server", logged.output[0])
            self.assertIsInstance(future.exception(), ConnectionFailed)
            self.assertIsNotNone(future.exception().idempotency_key)

        def test_error_answers_are_typed_exceptions_carrying_the_service_s_code(self) -> None:
            client, guild = self.client(), fresh_guild()
            with self.assertRaises(MemberNotFound) as not_found:
                self.call(lambda: client.member(guild, 5))
            self.assertEqual((not_found.exception.status, not_found.exception.code), (404, "member_not_found"))
            self.assertTrue(not_found.exception.request_id)

            self.call(lambda: client.claim_daily(guild, 5))
            with self.assertRaises(DailyAlreadyClaimed) as claimed:
                self.call(lambda: client.claim_daily(guild, 5))
            today = datetime.fromisoformat(self.call(lambda: client.member(guild, 5))["last_daily_claim"][:10])
            self.assertEqual(claimed.exception.next_claim_at, (today + timedelta(days=1)).replace(tzinfo=timezone.utc))
            self.assertEqual(claimed.exception.code, "daily_already_claimed")

            key = f"set-{guild}-5"  # keys are kept per token, which the other client's run shares
            with self.assertRaises(IdempotencyKeyReused) as reused:
                self.call(lambda: client.set_member(guild, 5, xp=1, idempotency_key=key))
                self.call(lambda: client.set_member(guild, 5, xp=2, idempotency_key=key))
            self.assertEqual((reused.exception.status, reused.exception.idempotency_key), (422, key))

            with self.assertRaises(InvalidRequest) as invalid:
                self.call(lambda: client.update_settings(guild, {"xp_multiplier": 0.001}))
            self.assertEqual(invalid.exception.code, "invalid_parameter")

            with self.assertRaises(AuthenticationFailed) as bad_token:
                self.call(lambda: self.client(token="lba_0000000000000000_" + "x" * 32).settings(guild))
            self.assertEqual(bad_token.exception.code, "invalid_token")
            with self.assertRaises(AuthenticationFailed) as bad_key:
                self.call(lambda: self.client(api_key="lbk_nope").stats(guild))
            self.assertEqual(bad_key.exception.code, "invalid_api_key")
            with self.assertRaises(Forbidden) as forbidden:
                self.call(lambda: self.client(api_key=free_key(guild)).stats(fresh_guild()))
            self.assertEqual((forbidden.exception.status, forbidden.exception.code), (403, "forbidden"))

        def test_what_is_not_an_id_is_refused_before_anything_is_sent(self) -> None:
            client, proxy = self.proxied()
            guild = fresh_guild()
            for bad in (1.2e18, True, None, b"12", 0, -5, "0123", "12 ", "", "1" * 21, "\uff11\uff12"):
                with self.assertRaises((TypeError, ValueError), msg=repr(bad)) as raised:
                    self.call(lambda: client.award(guild, bad, 10))  # type: ignore[arg-type]
                self.assertIn("user_id", str(raised.exception))
            # What mypy refuses too (the ignores), and what only a check at run time can see.
            refused: List[Callable[[], Any]] = [
                lambda: client.member(float(guild), 5),  # type: ignore[arg-type]
                lambda: client.award(guild, 5, 10, role_ids=[1, 2.5]),  # type: ignore[list-item]
                lambda: client.award_many(guild, [{"user_id": 5.0, "xp": 1}]),  # type: ignore[typeddict-item]
                lambda: client.award(guild, 5, 10, channel_id="general"), lambda: client.award(guild, 5, 10, op_id="a b"),
                lambda: client.award(guild, 5, 0), lambda: client.award(guild, 5, True), lambda: client.award(guild, 5, 10**6 + 1),
                lambda: client.award(guild, 5, 10, username="\n")]
            for call in refused:
                with self.assertRaises((TypeError, ValueError)):
                    self.call(call)
            self.call(client.flush)
            self.assertEqual(proxy.exchanges, [], "nothing was sent")
            self.assertEqual(self.call(lambda: client.award(str(guild), "5", 10))["user_id"], "5", "a string of digits is an id")

        def test_settings_are_read_and_changed_and_the_multiplier_applies(self) -> None:
            client, guild = self.client(), fresh_guild()
            settings = self.call(lambda: client.settings(guild))
            self.assertEqual((settings["xp_curve"], settings["xp_multiplier"], settings["cooldown_seconds"]), ("mee6", 1, 0))
            self.assertEqual(set(settings), set(Settings.__required_keys__), "Settings names every field the service answers, each required")
            self.assertEqual((settings["season"], settings["public"]), ({"every": "none", "timezone": "UTC"}, {"enabled": False, "slug": None}))
            changed = self.call(lambda: client.update_settings(guild, {"xp_curve": "flat", "xp_multiplier": 1.5}))
            self.assertEqual({**settings, "xp_curve": "flat", "xp_multiplier": 1.5}, changed, "the fields given changed, the others kept")
            self.assertEqual(self.call(lambda: client.award(guild, 5, 701))["gained"], 1051, "floor(701 x 1.5)")
            self.assertEqual(self.call(lambda: client.stats(guild))["xp_curve"], "flat")

        def test_members_daily_claims_and_the_reads(self) -> None:
            client, guild = self.client(), fresh_guild()
            self.call(lambda: client.award_many(guild, [{"user_id": n, "xp": 100 * n, "username": f"m{n}"} for n in range(1, 6)]))
            record = self.call(lambda: client.set_member(guild, 3, xp=1000, username="Ada"))
            self.assertEqual((record["xp"], record["username"], record["rank"]), (1000, "Ada", 1))
            claim = self.call(lambda: client.claim_daily(guild, 3, username="Ada L."))
            self.assertEqual((claim["daily_streak"], claim["xp"], claim["gained"]), (1, 1000, 0))
            self.assertEqual(self.call(lambda: client.member(guild, 3))["username"], "Ada L.")
            page = self.call(lambda: client.leaderboard(guild, limit=2, page=2))
            self.assertEqual(([e["user_id"] for e in page["data"]], page["total"], page["page"]), (["4", "2"], 5, 2))
            self.assertEqual(self.call(lambda: client.leaderboard(guild, period="week"))["total"], 5)
            around = self.call(lambda: client.around(guild, 2, radius=1))
            self.assertEqual(([e["user_id"] for e in around["data"]], around["rank"]), (["4", "2", "1"], 4))
            both = self.call(lambda: client.members(guild, [2, "99"]))
            self.assertEqual(([r["user_id"] for r in both["data"]], both["missing"]), (["2"], ["99"]))
            self.call(lambda: client.remove_member(guild, 2))
            with self.assertRaises(MemberNotFound):
                self.call(lambda: client.remove_member(guild, 2))
            self.assertEqual(self.call(lambda: client.stats(guild))["total_members"], 4)

        def test_award_items_carry_the_rule_fields_with_ids_as_strings(self) -> None:
            client, proxy = self.proxied()
            guild = fresh_guild()
            try:
                self.call(lambda: client.award_many(guild, [{"user_id": USER, "xp": {"min": 15, "max": 25}, "role_ids": [USER + 1, "77"],
                                                             "channel_id": USER + 2, "op_id": 1300000000000000001}]))
            except InvalidRequest:
                pass  # a service without the award rules refuses an XP range; the request is what is checked here
            self.assertEqual(proxy.exchanges[0].json(), {"awards": [{
                "user_id": "1200000000000000001", "xp": {"min": 15, "max": 25}, "role_ids": ["1200000000000000002", "77"],
                "channel_id": "1200000000000000003", "op_id": "1300000000000000001"}]})

        def test_display_names_and_avatars_are_set_by_awards_and_set_member_kept_when_left_out_and_cleared_by_none(self) -> None:
            client, proxy = self.proxied()
            guild = fresh_guild()
            avatar = "https://cdn.discordapp.com/avatars/1200000000000000001/a_1f.png?size=64"
            self.call(lambda: client.award(guild, USER, 120, username="nova", display_name="  Nova \u2728 ", avatar_url=avatar))
            self.assertEqual(proxy.exchanges[-1].json()["awards"][0], {"user_id": "1200000000000000001", "xp": 120, "username": "nova",
                                                                      "display_name": "Nova \u2728", "avatar_url": avatar}, "trimmed, as the service keeps it")
            record = self.call(lambda: client.member(guild, USER))
            self.assertEqual((record["display_name"], record["avatar_url"], record["rank_change"]), ("Nova \u2728", avatar, None))
            self.assertEqual(set(record), set(MemberRecord.__required_keys__), "MemberRecord names every field the service answers")
            entry = self.call(lambda: client.leaderboard(guild))["data"][0]
            self.assertEqual((entry["display_name"], entry["avatar_url"]), ("Nova \u2728", avatar))
            self.assertEqual(set(entry), set(LeaderboardEntry.__required_keys__), "so does LeaderboardEntry")
            self.assertEqual(set(self.call(lambda: client.stats(guild))), set(GuildStats.__required_keys__), "and GuildStats")

            self.call(lambda: client.award(guild, USER, 1, display_name=KEEP))
            self.assertNotIn("display_name", proxy.exchanges[-1].json()["awards"][0], "KEEP (the default) sends nothing")
            self.assertNotIn("avatar_url", proxy.exchanges[-1].json()["awards"][0])
            self.call(lambda: client.award_many(guild, [{"user_id": USER, "xp": 1, "display_name": None}]))
            self.assertEqual(proxy.exchanges[-1].json()["awards"][0], {"user_id": "1200000000000000001", "xp": 1, "display_name": None},
                             "None in an award_many item is JSON null")
            record = self.call(lambda: client.member(guild, USER))
            self.assertEqual((record["display_name"], record["avatar_url"], record["xp"]), (None, avatar, 122), "cleared; the avatar kept")

            updated = self.call(lambda: client.set_member(guild, USER, display_name="Ada", avatar_url=None))
            self.assertEqual(proxy.exchanges[-1].json(), {"display_name": "Ada", "avatar_url": None})
            self.assertEqual((updated["display_name"], updated["avatar_url"], updated["rank"], updated["visible"]), ("Ada", None, 1, True))
            self.assertEqual(set(updated), set(AdminMemberRecord.__required_keys__), "AdminMemberRecord names every field set_member answers")
            self.call(lambda: client.set_visibility(guild, USER, visible=False, reason="opted_out"))
            hidden = self.call(lambda: client.set_member(guild, USER, xp=5000, avatar_url=avatar))
            self.assertEqual((hidden["visible"], hidden["rank"], hidden["xp"], hidden["avatar_url"], hidden["display_name"]),
                             (False, None, 5000, avatar, "Ada"), "a hidden member's record: no rank, visible False")
            self.assertEqual(hidden.get("roles"), None)

            sent = len(proxy.exchanges)
            refused: List[Callable[[], Any]] = [
                lambda: client.award(guild, 5, 10, display_name=""), lambda: client.award(guild, 5, 10, display_name="   "),
                lambda: client.award(guild, 5, 10, display_name="\u001f"), lambda: client.award(guild, 5, 10, display_name="a\nb"),
                lambda: client.award(guild, 5, 10, display_name="x" * 101),
                lambda: client.award(guild, 5, 10, display_name=5),  # type: ignore[arg-type]
                lambda: client.award(guild, 5, 10, avatar_url="http://cdn.example/a.png"), lambda: client.award(guild, 5, 10, avatar_url="https://"),
                lambda: client.award(guild, 5, 10, avatar_url="https://user:secret@cdn.example/a.png"),
                lambda: client.award(guild, 5, 10, avatar_url="https://cdn.example/" + "a" * 493),
                lambda: client.award(guild, 5, 10, avatar_url="HTTPS://cdn.example/a.png"),
                lambda: client.award_many(guild, [{"user_id": 5, "xp": 1, "display_name": "\u001f"}]),
                lambda: client.award_many(guild, [{"user_id": 5, "xp": 1, "avatar_url": "ftp://cdn.example/a.png"}]),
                lambda: client.set_member(guild, 5, avatar_url="javascript:alert(1)"), lambda: client.set_member(guild, 5)]
            for call in refused:
                with self.assertRaises((TypeError, ValueError)):
                    self.call(call)
            self.call(client.flush)
            self.assertEqual(len(proxy.exchanges), sent, "nothing was sent")
            at_most = "https://cdn.example/" + "a" * 492
            self.assertEqual(self.call(lambda: client.set_member(guild, USER, display_name="\U0001F680" * 100, avatar_url=at_most))["avatar_url"],
                             at_most, "a URL of 512 characters and a name of 100 code points are taken")



class NamesTest(unittest.TestCase):
    def test_a_name_is_counted_in_code_points(self) -> None:
        env, guild = live(), fresh_guild()
        with LeaderboardClient(admin_url=env.admin_url, token=env.token) as client:
            name = "\U0001F680" * 100
            self.assertEqual(client.award(guild, 5, 10, username=name).result()["xp"], 10)
            self.assertEqual(client.set_member(guild, 5, username=name)["username"], name)
            with self.assertRaises(ValueError):
                client.award(guild, 5, 10, username=name + "x")


class SyncClientTest(Shared.ClientCases):
    def make(self, **options: Any) -> Client:
        client = LeaderboardClient(**options)
        self.addCleanup(client.close)
        return client

    def call(self, work: Callable[[], Any]) -> Any:
        return _settled(work())


class AsyncClientTest(Shared.ClientCases):
    def setUp(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.addCleanup(self.loop.close)

    def make(self, **options: Any) -> Client:
        client = AsyncLeaderboardClient(**options)
        self.addCleanup(lambda: self.loop.run_until_complete(client.aclose()))
        return client

    def call(self, work: Callable[[], Any]) -> Any:
        async def run() -> Any:
            value = work()
            return await asyncio.wait_for(value, HANG_GUARD_SECONDS) if inspect.isawaitable(value) else value
        return self.loop.run_until_complete(run())


def _settled(value: Any) -> Any:
    """A blocking client's award future, waited for; any other value as it is."""
    if isinstance(value, concurrent.futures.Future):
        return value.result(HANG_GUARD_SECONDS)
    return value


def _all(futures: List[Any]) -> Any:
    """Waits for every award future of either client (inside the loop for the asyncio client)."""
    if futures and isinstance(futures[0], concurrent.futures.Future):
        concurrent.futures.wait(futures, HANG_GUARD_SECONDS)
        return None
    return asyncio.wait_for(asyncio.gather(*futures), HANG_GUARD_SECONDS)


if __name__ == "__main__":
    unittest.main()
