"""The award rules the service applies on write (cooldowns, daily caps, multipliers by role and
channel, role rewards, XP ranges), end to end through the client against the live service, with
ids given as Python ints (as discord.py gives them): the client sends them as strings.
"""

from __future__ import annotations

import unittest

from guild_leaderboard import LeaderboardClient

from .support import fresh_guild, live

ROLE, OTHER_ROLE, CHANNEL = 1200000000000000011, 1200000000000000012, 1200000000000000013


class RulesOnWriteTest(unittest.TestCase):
    def setUp(self) -> None:
        env = live()
        self.client = LeaderboardClient(admin_url=env.admin_url, token=env.token, api_url=env.api_url, api_key=env.api_key)
        self.addCleanup(self.client.close)
        self.guild = fresh_guild()

    def test_an_xp_range_is_drawn_between_its_bounds(self) -> None:
        results = self.client.award_many(self.guild, [{"user_id": n, "xp": {"min": 15, "max": 25}} for n in range(1, 51)])
        self.assertTrue(all(15 <= r["gained"] <= 25 and r.get("applied") is True for r in results), results)

    def test_an_award_within_the_cooldown_is_not_applied_and_says_why(self) -> None:
        self.client.update_settings(self.guild, {"cooldown_seconds": 60})
        first, second = self.client.award_many(self.guild, [{"user_id": 5, "xp": 20}, {"user_id": 5, "xp": 20}])
        self.assertEqual((first.get("applied"), first["xp"]), (True, 20))
        self.assertEqual((second.get("applied"), second.get("reason"), second["xp"]), (False, "cooldown", 20))

    def test_the_daily_cap_applies_the_part_under_it(self) -> None:
        self.client.update_settings(self.guild, {"daily_xp_cap": 100})
        result = self.client.award(self.guild, 5, 150).result()
        self.assertEqual((result["gained"], result.get("reason")), (100, "daily_cap"))

    def test_role_and_channel_multipliers_with_int_ids(self) -> None:
        settings = self.client.update_settings(self.guild, {"multipliers": {
            "roles": {ROLE: 2, OTHER_ROLE: 3}, "channels": {CHANNEL: 0}, "stacking": "highest"}})
        self.assertEqual(settings.get("multipliers", {}).get("roles"), {str(ROLE): 2, str(OTHER_ROLE): 3}, "ids read back as strings")
        self.assertEqual(self.client.award(self.guild, 5, 10, role_ids=[ROLE, OTHER_ROLE]).result()["gained"], 30)
        self.assertEqual(self.client.award(self.guild, 6, 10, role_ids=[ROLE], channel_id=CHANNEL).result()["gained"], 0)

    def test_role_rewards_say_which_roles_to_add_and_remove(self) -> None:
        self.client.update_settings(self.guild, {"role_rewards": [{"level": 1, "role_id": ROLE}, {"level": 2, "role_id": OTHER_ROLE}],
                                                 "role_rewards_mode": "replace"})
        jump = self.client.award(self.guild, 5, 300).result()  # mee6: level 2 from 255 XP
        self.assertEqual(jump.get("roles"), {"add": [str(OTHER_ROLE)], "remove": []})
        lowered = self.client.set_member(self.guild, 5, xp=120)
        self.assertEqual(lowered.get("roles"), {"add": [str(ROLE)], "remove": [str(OTHER_ROLE)]})


if __name__ == "__main__":
    unittest.main()
