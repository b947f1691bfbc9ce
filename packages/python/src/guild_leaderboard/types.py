"""The bodies the service sends and takes, as ``TypedDict`` s (plain dicts at run time).

Fields marked "rules on write" are those of the service's award rules (cooldowns, caps,
multipliers by role and channel, boosts, role rewards, XP ranges).
"""

from __future__ import annotations

import enum
from typing import Dict, List, Literal, Optional, TypedDict, Union

from ._ids import Snowflake

Curve = Literal["mee6", "linear", "flat", "custom"]


class Keep(enum.Enum):
    """The default of ``display_name`` and ``avatar_url`` arguments: keep what is stored (None clears it)."""

    KEEP = "keep"


KEEP = Keep.KEEP

#: A member's display name or avatar URL as a write takes it: a value sets it, None clears it, KEEP leaves it.
ProfileValue = Union[str, None, Keep]
Period = Literal["all", "week", "month", "last_week", "last_month"]
Plan = Literal["free", "starter", "professional"]


class XpRange(TypedDict):
    """An award drawn by the service between ``min`` and ``max`` inclusive (15 to 25, MEE6's). Rules on write."""

    min: int
    max: int


#: An award's XP: a whole number (1 to 1,000,000), or a range the service draws from (rules on write).
Xp = Union[int, XpRange]


class RoleChanges(TypedDict):
    """The role ids a bot should add to and remove from the member (role rewards). Rules on write."""

    add: List[str]
    remove: List[str]


class _AwardResultRequired(TypedDict):
    user_id: str
    xp: int
    gained: int
    level: int
    leveled_up: bool
    #: Rules on write: ``False`` when the rules refused the award (nothing of it was applied; see ``reason``).
    applied: bool


class AwardResult(_AwardResultRequired, total=False):
    """What one award did: the member's XP and level after it, and the XP it added."""

    #: ``"xp_limit"`` when the award would have lifted the member past 10**12 XP: not applied.
    refused: str
    #: ``True`` when the award's ``op_id`` was applied by an earlier request: this is that request's
    #: result (level-up included) and nothing was applied now; announce nothing from it again.
    replayed: bool
    #: Rules on write: why the award was not applied (``"cooldown"``, ``"daily_cap"``, ``"xp_limit"``);
    #: ``"daily_cap"`` with ``applied`` true: only the part under the cap was added.
    reason: str
    #: Rules on write: present when the level crossed a role reward's threshold.
    roles: RoleChanges


class _DailyClaimRequired(TypedDict):
    daily_streak: int
    #: ISO 8601 UTC, as ``"2026-11-21T18:04:05.000Z"``.
    last_daily_claim: str
    xp: int
    gained: int


class DailyClaim(_DailyClaimRequired):
    """A claim adds no XP (award XP for it), so it never crosses a role reward's threshold."""


class LevelProgress(TypedDict):
    xp: int
    required: int


class _Member(TypedDict):
    """A member's fields, whichever API answers them (all but ``rank``)."""

    user_id: str
    username: str
    #: The member's display name in the server and its avatar (https), as the bot recorded them, or None.
    display_name: Optional[str]
    avatar_url: Optional[str]
    level: int
    xp: int
    #: Its rank at the end of the previous day minus its rank now (positive: moved up); None with no rank then.
    rank_change: Optional[int]
    daily_streak: int
    last_daily_claim: Optional[str]
    weekly_xp: int
    monthly_xp: int
    level_progress: LevelProgress


class MemberRecord(_Member):
    """A member as the read API answers it (a hidden member is ``MemberNotFound`` there)."""

    rank: int


class _AdminMemberRecordRequired(_Member):
    #: None while the member is hidden.
    rank: Optional[int]
    #: False while the member is hidden (see ``set_visibility``).
    visible: bool


class AdminMemberRecord(_AdminMemberRecordRequired, total=False):
    """A member as the write API answers ``set_member``: hidden members too."""

    #: Rules on write: the role rewards the new XP's level crossed (either way).
    roles: RoleChanges


#: The earlier name of :class:`AdminMemberRecord`.
UpdatedMember = AdminMemberRecord


class LeaderboardEntry(TypedDict):
    rank: int
    user_id: str
    username: str
    display_name: Optional[str]
    avatar_url: Optional[str]
    level: int
    xp: int
    level_progress: LevelProgress
    rank_change: Optional[int]


class LeaderboardPage(TypedDict):
    data: List[LeaderboardEntry]
    total: int
    page: int


class AroundPage(TypedDict):
    data: List[LeaderboardEntry]
    total: int
    rank: int


class MemberList(TypedDict):
    data: List[MemberRecord]
    missing: List[str]


class GuildStats(TypedDict):
    total_members: int
    total_xp: int
    average_level: int
    xp_curve: Curve
    xp_multiplier: float
    #: The server's display name and icon (its settings' ``name`` and ``icon_url``), or None.
    name: Optional[str]
    icon_url: Optional[str]


Stacking = Literal["highest", "multiply", "add"]


class Multipliers(TypedDict, total=False):
    """Rules on write: XP multipliers by role and channel id (0 to 10) and how several stack."""

    roles: Dict[str, float]
    channels: Dict[str, float]
    stacking: Stacking


class MultipliersUpdate(TypedDict, total=False):
    """:class:`Multipliers` to set; role and channel ids may be ints (discord.py's), sent as strings."""

    roles: Dict[Snowflake, float]
    channels: Dict[Snowflake, float]
    stacking: Stacking


class Boost(TypedDict):
    """Rules on write: a server-wide multiplier between two ISO 8601 times."""

    multiplier: float
    starts_at: str
    ends_at: str


class RoleReward(TypedDict):
    """Rules on write: the role a member gets on reaching ``level``."""

    level: int
    role_id: str


class RoleRewardUpdate(TypedDict):
    """A :class:`RoleReward` to set; the role id may be an int (discord.py's), sent as a string."""

    level: int
    role_id: Snowflake


class _Rules(TypedDict, total=False):
    """The rules on write that hold no ids."""

    cooldown_seconds: int
    daily_xp_cap: int
    boosts: List[Boost]
    role_rewards_mode: Literal["stack", "replace"]
    custom_curve: Optional[List[int]]


SeasonSchedule = Literal["none", "week", "month", "quarter"]


class Season(TypedDict):
    """When a season ends by itself (``none``: only when ended by hand), at 00:00 in ``timezone`` (IANA)."""

    every: SeasonSchedule
    timezone: str


class SeasonUpdate(TypedDict, total=False):
    """:class:`Season` fields to change."""

    every: SeasonSchedule
    timezone: str


class Public(TypedDict):
    """The opt-in public board: with ``enabled``, readable with no key at ``/p/{slug}``."""

    enabled: bool
    slug: Optional[str]


class PublicUpdate(TypedDict, total=False):
    """:class:`Public` fields to change."""

    enabled: bool
    slug: Optional[str]


class Settings(TypedDict):
    """A server's settings, every field as the service answers them (``GET``/``PUT settings``)."""

    xp_curve: Curve
    xp_multiplier: float
    #: The XP needed for level 1, 2, …: with ``xp_curve`` ``"custom"``, else None.
    custom_curve: Optional[List[int]]
    season: Season
    #: How many ended seasons are kept.
    season_retention: int
    #: How many closed days of history are kept.
    history_days: int
    cooldown_seconds: int
    daily_xp_cap: int
    multipliers: Multipliers
    boosts: List[Boost]
    role_rewards: List[RoleReward]
    role_rewards_mode: Literal["stack", "replace"]
    #: The server's display name and icon (https), or None.
    name: Optional[str]
    icon_url: Optional[str]
    public: Public


class SettingsUpdate(_Rules, total=False):
    """The settings to change (``PUT settings``): only the fields given are changed."""

    xp_curve: Curve
    xp_multiplier: float
    multipliers: MultipliersUpdate
    role_rewards: List[RoleRewardUpdate]
    season: SeasonUpdate
    season_retention: int
    history_days: int
    name: Optional[str]
    icon_url: Optional[str]
    public: PublicUpdate


class _AwardRequired(TypedDict):
    user_id: Snowflake
    xp: Xp


class Award(_AwardRequired, total=False):
    """One award for ``award_many``: ids may be ints (discord.py's) or strings of digits."""

    username: str
    #: The member's display name in the server (1 to 100 characters) and avatar (an https URL of
    #: at most 512 characters): a key left out keeps what is stored, None clears it.
    display_name: Optional[str]
    avatar_url: Optional[str]
    #: Names the award so that it is applied once however often it is sent (the message id, say).
    op_id: Union[str, int]
    #: Rules on write: the member's role ids and the message's channel, for the multipliers.
    role_ids: List[Snowflake]
    channel_id: Snowflake


class Visibility(TypedDict):
    """A user's visibility after a change: ``reasons`` it is hidden for (empty when shown)."""
    user_id: str
    visible: bool
    reasons: List[str]
    #: ``None`` for a user who is not a member yet (its first write places it hidden or shown).
    xp: Optional[int]


class _VisibilityChangeRequired(TypedDict):
    user_id: Snowflake
    visible: bool


class VisibilityChange(_VisibilityChangeRequired, total=False):
    """One change of ``set_visibility_many``: ``reason`` is ``"left"`` or ``"opted_out"``."""
    reason: str
