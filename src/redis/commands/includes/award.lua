-- One XP award, shared by award-xp (one award) and award-batch (many), for an operation not
-- applied before (the caller checks with replay first, and remembers the reply): judged by the
-- server's rules (includes/rules.lua: cooldown, daily cap), then applied (board, name, period and
-- day boards, cooldown) with its change to the aggregates added to `deltas`, which the caller
-- applies (once per call: a batch moves the stats hash with a handful of HINCRBYs, not a handful
-- per award).
--- @include "aggregates"
--- @include "records"
--- @include "operations"
--- @include "periods"
--- @include "rules"

-- Statuses, as src/redis/script-status.ts names them: applied (whole, or in part up to the daily
-- cap), or not applied and why.
local AWARDED, CAPPED, OVER_XP_LIMIT, COOLDOWN, DAILY_CAP = 1, 3, -1, -4, -5

-- The reply of an award not applied: the member's XP and level as they stand, nothing gained.
local function refused (rules, status, xp)
  local level = level_of(rules, xp)
  return { status, xp, 0, level, level, '', '' }
end

-- k: { board, members, week, month, day, cooldowns }; a: { member, gained (the caller's gain,
-- src/rules/gain.ts), username ('' keeps it) }; s: { rules, now, max_xp, week_expire_at,
-- month_expire_at, day_expire_at }.
-- Returns the reply { status, xp, gained, level before, level after, roles to add, roles to
-- remove } (includes/rules.lua's level_reply) and whether anything changed. An award that adds
-- nothing (a role or channel at 0, a gain rounded down to 0) is applied (the member and its name
-- are recorded) but is not judged by the rules and starts no cooldown.
local function award_one (k, a, s, deltas)
  local gained = tonumber(a.gained)
  local old_xp = tonumber(redis.call('ZSCORE', k.board, a.member) or '0')
  local status = AWARDED
  if gained > 0 then
    if in_cooldown(s.rules, k.cooldowns, a.member, s.now) then return refused(s.rules, COOLDOWN, old_xp), false end
    local room = cap_room(s.rules, k.day, a.member)
    if room ~= nil and gained > room then
      if room <= 0 then return refused(s.rules, DAILY_CAP, old_xp), false end
      gained, status = room, CAPPED
    end
  end
  local new_xp = old_xp + gained
  if new_xp > s.max_xp then return refused(s.rules, OVER_XP_LIMIT, old_xp), false end
  redis.call('ZADD', k.board, int(new_xp), a.member)
  if a.username ~= '' then set_name(k.members, a.member, a.username) end
  add_xp_change(deltas, old_xp, new_xp)
  if gained > 0 then
    count_in_period(k.week, a.member, gained, s.week_expire_at)
    count_in_period(k.month, a.member, gained, s.month_expire_at)
    count_in_period(k.day, a.member, gained, s.day_expire_at)
    start_cooldown(s.rules, k.cooldowns, a.member, s.now)
  end
  local from, to, add, remove = level_reply(s.rules, old_xp, new_xp)
  return { status, new_xp, gained, from, to, add, remove }, true
end

-- A reply remembered before awards carried levels and roles ({ status, xp, gained }), completed
-- with them under the current curve (no roles: they were not asked of the bot then).
local function full_reply (rules, reply)
  if #reply >= 7 then return reply end
  local xp, gained = reply[2], reply[1] > 0 and reply[3] or 0
  return { reply[1], xp, gained, level_of(rules, xp - gained), level_of(rules, xp), '', '' }
end
