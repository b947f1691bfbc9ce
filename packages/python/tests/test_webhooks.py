"""The webhook verifier agrees with the npm ``standardwebhooks`` package, the Standard Webhooks
reference the service signs with: test/python-package.test.ts signs requests with it (good ones,
and ones with a wrong secret, a changed body, an old or future timestamp, several signatures),
records its own verifier's verdict on each at a fixed time, and this file checks ours gives the
same verdict at that time.
"""

from __future__ import annotations

import json
import os
import time
import unittest
from typing import Any, Dict, List, Union

from guild_leaderboard import Webhook, WebhookVerificationError, verify_webhook


def vectors() -> Dict[str, Any]:
    path = os.environ.get("LEADERBOARD_WEBHOOK_VECTORS")
    if not path:
        raise RuntimeError("LEADERBOARD_WEBHOOK_VECTORS unset: test/python-package.test.ts makes them with the npm standardwebhooks package")
    with open(path, encoding="utf-8") as file:
        return dict(json.load(file))


class WebhookTest(unittest.TestCase):
    def test_every_verdict_of_the_npm_verifier_is_ours(self) -> None:
        given = vectors()
        cases: List[Dict[str, Any]] = given["cases"]
        names = {case["name"] for case in cases}
        self.assertTrue({"valid", "wrong secret", "tampered body", "old timestamp", "future timestamp",
                         "one of several signatures"} <= names, names)
        for case in cases:
            with self.subTest(case["name"]):
                webhook = Webhook(case["secret"])
                if case["npm"] == "ok":
                    event = webhook.verify(case["body"].encode(), case["headers"], now=given["now"])
                    self.assertEqual(event, json.loads(case["body"]))
                else:
                    with self.assertRaises(WebhookVerificationError, msg=f"npm refused it: {case['npm']}"):
                        webhook.verify(case["body"].encode(), case["headers"], now=given["now"])

    def test_signatures_match_the_npm_signer(self) -> None:
        for signed in vectors()["signatures"]:
            with self.subTest(signed["body"][:40]):
                ours = Webhook(signed["secret"]).sign(signed["id"], signed["timestamp"], signed["body"])
                self.assertEqual(ours, signed["signature"])

    def test_a_current_request_is_verified_with_the_clock_and_headers_in_any_case(self) -> None:
        secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        webhook = Webhook(secret)
        timestamp = int(time.time())
        body = '{"id":"evt_1","type":"ping","created_at":"2026-11-25T10:00:00.000Z","server_id":"1","data":{}}'
        headers = {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(timestamp), "Webhook-Signature": webhook.sign("msg_1", timestamp, body)}
        self.assertEqual(verify_webhook(secret, body, headers)["type"], "ping")
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(secret, body, {**headers, "Webhook-Timestamp": "12e3"})
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(secret, body, {"webhook-id": "msg_1"})

    def test_a_secret_that_is_not_base64_is_refused(self) -> None:
        secrets: List[Union[str, bytes]] = ["whsec_not base64!", "whsec_", b"", "whsec_" + "x" * 5]
        for bad in secrets:
            with self.assertRaises(ValueError, msg=repr(bad)):
                Webhook(bad)


if __name__ == "__main__":
    unittest.main()
