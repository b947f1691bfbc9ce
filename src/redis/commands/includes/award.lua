-- One XP award, shared by award-xp (one award) and award-batch (many), for an operation not
-- applied before (the caller checks with replay first, and remembers the reply): judged by the
-- server's rules (includes/rules.lua: cooldown, daily cap), then applied (board, name, period
-- boards, the season's board, the day's, the cooldown) with its change to the aggregates added
-- to `deltas`, which the caller applies (once per call: a batch moves the stats hash with a
-- handful of HINCRBYs, not a handful per award), and the events it causes appended.
--- @include "aggregates"
--- @include "profile"
--- @include "operations"
--- @include "periods"
--- @include "events"
--- @include "calendar-counting"
--- @include "visibility"
--- @include "rules"

-- Statuses, as src/redis/script-status.ts names them: applied (whole, or in part up to the daily
-- cap), or not applied and why.
local AWARDED, CAPPED, OVER_XP_LIMIT, COOLDOWN, DAILY_CAP = 1, 3, -1, -4, -5

-- A member's XP as it stands (0 when not on the board), for the reply of an award not applied.
local function xp_now (board, member)
  local score = redis.call('ZSCORE', board, member)
  if not score then return 0 end
  return (decode_score(score))
end

-- Roles as a reply carries them: comma-separated ids, '' for none.
local function role_lists (changes)
  if changes == nil then return '', '' end
  return table.concat(changes.add, ','), table.concat(changes.remove, ',')
end

-- k: { board, members, settings, hidden, week, month, season, cooldowns (includes/cooldowns.lua's
-- cooldown_keys) }; member, gain (the
-- caller's, src/rules/gain.ts, as its digits), username, display, avatar (includes/profile.lua:
-- '' keeps each); s: { rules, now, max_xp, events (includes/events.lua's context, or nil), day
-- (calendar-counting's day keys, whose gains are the daily cap's count), periods_grew (set here
-- when the award added a member to the week's or the month's board) }.
-- Returns the reply's values: status, xp, gained, roles to add, roles to remove (the caller
-- computes levels from the XP under the settings whose epoch the script checked); then whether
-- anything changed. Values, not a table: a batch applies hundreds of awards a call, and each
-- table is garbage for Lua's collector, a fifth of Redis's time under awards. The week's and
-- month's boards get their expiry from the caller, once per call that added a member to them
-- (expire_periods). An award that adds nothing (a role or channel at 0, a gain rounded down to
-- 0) is applied (the member and its name are recorded, the day touched) but is not judged by
-- the rules and starts no cooldown.
-- A hidden member's award is judged by the same rules (its cooldown and its day's count are
-- plain values: a cap is a cap), counts into its encoded scores (includes/visibility.lua), not
-- into the aggregates, and causes no public event; its reply still carries its roles.
local function award_one (k, member, gain, username, display, avatar, s, deltas)
  local gained = num(gain)
  local status = AWARDED
  if gained > 0 then
    if in_cooldown(s.rules, k.cooldowns, member, s.now) then return COOLDOWN, xp_now(k.board, member), 0, '', '', false end
    local room = cap_room(s.rules, s.day, member)
    if room ~= nil and gained > room then
      if room <= 0 then return DAILY_CAP, xp_now(k.board, member), 0, '', '', false end
      gained, status, gain = room, CAPPED, int(room)
    end
  end
  -- A member on the board (most awards) takes the gain in one command, which gives the score
  -- before it too; the rare cases it does not fit (a hidden member, whose score counts down, and
  -- an award past the XP limit) are put right at once, inside the same script.
  local score, old_xp, hidden, new_xp
  local moved = redis.call('ZADD', k.board, 'XX', 'INCR', gain, member)
  if moved then
    score = num(moved) - gained
    old_xp, hidden = decode_score(score)
    new_xp = old_xp + gained
    if new_xp > s.max_xp then
      redis.call('ZADD', k.board, int(score), member)
      return OVER_XP_LIMIT, old_xp, 0, '', '', false
    end
    if hidden and gained > 0 then redis.call('ZADD', k.board, int(encode_score(new_xp, true)), member) end
  else
    score, old_xp, hidden, new_xp = false, 0, hidden_user(k.hidden, member), gained
    if new_xp > s.max_xp then return OVER_XP_LIMIT, old_xp, 0, '', '', false end
    redis.call('ZADD', k.board, int(encode_score(new_xp, hidden)), member)
  end
  set_names(k.members, member, username, display, avatar)
  if not hidden then add_xp_change(deltas, old_xp, new_xp) end
  if gained > 0 then
    local new_in_week = count_in_period(k.week, member, gained, hidden, gain)
    if count_in_period(k.month, member, gained, hidden, gain) or new_in_week then s.periods_grew = true end
    start_cooldown(s.rules, k.cooldowns, member, s.now)
  end
  count_in_season(k.season, member, gained, hidden, gain)
  touch_day(s.day, member, gained, score, gain)
  local changes = role_changes(s.rules, old_xp, new_xp)
  if not hidden then member_moved(s.events, k, member, score ~= false, old_xp, new_xp, changes) end
  local add, remove = role_lists(changes)
  return status, new_xp, gained, add, remove, true
end

-- Once per call whose awards added a member to the week's or the month's board (s.periods_grew
-- of award_one): when the boards may go (the same time for every call of the period). A key's
-- first member is new to it, so every board gets its expiry; an award to members already on
-- both (most of them) pays no PEXPIREAT.
local function expire_periods (k, week_expire_at, month_expire_at)
  redis.call('PEXPIREAT', k.week, week_expire_at)
  redis.call('PEXPIREAT', k.month, month_expire_at)
end

-- An award's reply as remember keeps it, the JSON cjson.encode makes of { status, xp, gained,
-- add, remove }, in one string.format, not a table cjson walks: the numbers are integers and the
-- role lists ids and commas (the settings take decimal ids only), so nothing needs escaping.
local function award_reply_json (status, xp, gained, add, remove)
  return string.format('[%d,%d,%d,"%s","%s"]', status, xp, gained, add, remove)
end

-- An award's reply remembered before replies carried roles ({ status, xp, gained }), as one of
-- today's: no roles were asked of the bot then.
local function full_reply (reply)
  if #reply >= 5 then return reply end
  return { reply[1], reply[2], reply[1] > 0 and reply[3] or 0, '', '' }
end
