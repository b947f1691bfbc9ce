"""Checks that a webhook request came from the service, as the Standard Webhooks specification
says (the service signs its events that way).

The request carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature``: one or more space-separated ``v1,<base64 HMAC-SHA256>`` of
``"{id}.{timestamp}.{body}"`` under the webhook's secret (``whsec_<base64>``, shown once when the
webhook is made). Verify the body exactly as received, before parsing it::

    webhook = Webhook(os.environ["LEADERBOARD_WEBHOOK_SECRET"])
    event = webhook.verify(await request.read(), request.headers)   # raises WebhookVerificationError
    if event["type"] == "member.leveled_up": ...
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Dict, Mapping, Optional, TypedDict, Union, cast

from .errors import LeaderboardError

#: How far a request's timestamp may be from the receiver's clock, either way, in seconds.
TOLERANCE_SECONDS = 5 * 60
_PREFIX = "whsec_"


class WebhookVerificationError(LeaderboardError):
    """The request is not one the service signed with this secret (or it is too old, or too new): refuse it."""


class WebhookEvent(TypedDict):
    """An event the service sends: ``type`` is ``member.leveled_up``, ``member.rank_entered_top``, ``season.ended`` or ``ping``."""

    id: str
    type: str
    created_at: str
    server_id: str
    data: Dict[str, Any]


class Webhook:
    """A webhook's secret, to verify (and, for tests of a receiver, sign) its requests."""

    def __init__(self, secret: Union[str, bytes]) -> None:
        if isinstance(secret, str):
            text = secret[len(_PREFIX):] if secret.startswith(_PREFIX) else secret
            try:
                secret = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError) as error:
                raise ValueError("a webhook secret is whsec_ followed by base64") from error
        if not secret:
            raise ValueError("a webhook secret cannot be empty")
        self._key = bytes(secret)

    def verify(self, body: Union[bytes, str], headers: Mapping[str, str], *, tolerance: int = TOLERANCE_SECONDS,
               now: Optional[float] = None) -> WebhookEvent:
        """The event, once the headers prove that the service sent this body recently; else WebhookVerificationError."""
        found = {name.lower(): value for name, value in headers.items()}
        msg_id, timestamp, signatures = (found.get(name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
        if not msg_id or not timestamp or not signatures:
            raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
        if not (timestamp.isascii() and timestamp.isdigit()):
            raise WebhookVerificationError(f"webhook-timestamp is not a number of seconds: {timestamp[:32]!r}")
        seconds = int(timestamp)
        clock = time.time() if now is None else now
        if clock - seconds > tolerance:
            raise WebhookVerificationError("the message is too old (webhook-timestamp more than 5 minutes ago)")
        if seconds - clock > tolerance:
            raise WebhookVerificationError("the message is from the future (webhook-timestamp more than 5 minutes ahead)")
        expected = self.sign(msg_id, seconds, body).encode()
        # Every v1 signature is compared, in constant time, so that a rotated secret's old one may sit beside the new.
        if not any(hmac.compare_digest(given.encode(), expected) for given in signatures.split(" ") if given.startswith("v1,")):
            raise WebhookVerificationError("no signature matches: wrong secret, or the body was changed")
        try:
            event = json.loads(body)
        except ValueError as error:
            raise WebhookVerificationError("the signed body is not JSON") from error
        if not isinstance(event, dict):
            raise WebhookVerificationError("the signed body is not a JSON object")
        return cast(WebhookEvent, event)

    def sign(self, msg_id: str, timestamp: int, body: Union[bytes, str]) -> str:
        """The ``webhook-signature`` the service would send: ``v1,<base64>``."""
        payload = body.encode() if isinstance(body, str) else body
        digest = hmac.new(self._key, f"{msg_id}.{timestamp}.".encode() + payload, hashlib.sha256).digest()
        return "v1," + base64.b64encode(digest).decode()


def verify_webhook(secret: Union[str, bytes], body: Union[bytes, str], headers: Mapping[str, str]) -> WebhookEvent:
    """``Webhook(secret).verify(body, headers)``."""
    return Webhook(secret).verify(body, headers)
