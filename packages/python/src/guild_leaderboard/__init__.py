"""A client of the guild leaderboard service for bots: the write API (XP awards, batched; daily
claims; settings), the read API (leaderboard, members, stats), and a verifier of the service's
webhooks. Standard library only; a blocking client and an asyncio one with the same methods.
"""

from ._ids import Snowflake
from ._protocol import RetryInfo
from ._version import __version__
from .aio import AsyncLeaderboardClient
from .client import LeaderboardClient
from .errors import (ApiError, AuthenticationFailed, AwardQueueFull, ClientClosed, Conflict, ConnectionFailed,
                     DailyAlreadyClaimed, Forbidden, IdempotencyKeyReused, InvalidRequest, LeaderboardError, MemberNotFound,
                     NotFound, RateLimited, ServerError, ServiceUnavailable, UnexpectedAnswer, Unprocessable)
from .types import KEEP
from .webhooks import Webhook, WebhookEvent, WebhookVerificationError, verify_webhook

__all__ = [
    "ApiError", "AsyncLeaderboardClient", "AuthenticationFailed", "AwardQueueFull", "ClientClosed", "Conflict",
    "ConnectionFailed", "DailyAlreadyClaimed", "Forbidden", "IdempotencyKeyReused", "InvalidRequest", "KEEP", "LeaderboardClient",
    "LeaderboardError", "MemberNotFound", "NotFound", "RateLimited", "RetryInfo", "ServerError", "ServiceUnavailable",
    "Snowflake", "UnexpectedAnswer", "Unprocessable", "Webhook", "WebhookEvent", "WebhookVerificationError", "__version__",
    "verify_webhook",
]
