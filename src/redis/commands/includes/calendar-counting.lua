-- Counting by the server's calendar (src/calendar/): the current season's board and the server's
-- day, for every write that changes a member's score or visibility.
--
-- The caller computes from the server's settings and current season, which it caches at their
-- epoch (src/settings/settings-store.ts): the window [from, until) of Redis times in which the
-- day and period keys it names are the current ones (src/calendar/server-calendar.ts), and when
-- the current season is due to end. calendar_check is the judge: the epoch moved (settings
-- changed, or a season ended), the season is due, or Redis's clock is outside the window, and
-- the script applies nothing and says which, so Redis's clock decides every boundary.
--- @include "clock"
--- @include "numbers"
--- @include "periods"
--- @include "visibility"

-- Replies, as src/redis/script-status.ts names them (OUTSIDE_PERIOD_WINDOW is periods.lua's).
local SETTINGS_CHANGED, SEASON_DUE = -3, -4

-- Whether a write computed at `epoch`, for the window [from, until) and a season that ends at
-- `season_ends_at` ('' for never), may go on now. `stored` is the settings' epoch when the
-- script has read it already in this call (load_rules's), else nil (it is read here). Returns
-- Redis's time in ms, the reply that refuses it (nil: go on), and the same time in µs (for
-- bump_version, so a write reads Redis's clock once).
local function calendar_check (settings_key, epoch, from, to, season_ends_at, stored)
  stored = stored or redis.call('HGET', settings_key, 'epoch') or '0'
  if stored ~= epoch then return nil, { SETTINGS_CHANGED, tonumber(stored) } end
  local now, now_us = clock_now()
  if season_ends_at ~= '' and now >= num(season_ends_at) then return now, { SEASON_DUE, now } end
  if now < num(from) or now >= num(to) then return now, { OUTSIDE_PERIOD_WINDOW, now } end
  return now, nil, now_us
end

-- Counts `gained` XP into the current season's board, for a member shown or `hidden`
-- (includes/visibility.lua; `digits` as its add_gain takes it).
local function count_in_season (key, member, gained, hidden, digits)
  if gained > 0 then add_gain(key, member, gained, hidden, digits) end
end

-- The day's keys: d = { legacy, gains, day_start, hist, label, expire_at, now }: `gains` the
-- day's gains (HASH, board member -> XP gained; members that gained only), `legacy` the same as a
-- sorted set, as versions before the hash kept it (read, never written: a day begun by one still
-- counts what it gained there), `day_start` the first touches.
-- A member's first touch in the day keeps its visible XP before it (`-`: not on the visible
-- board) in the day-start hash; the first member of the day sets the day-start hash to expire (a
-- day no instance closes still goes) and names the day in the history hash. The day's gains get
-- their expiry from their own first member (touch_day), which may come later.
local function day_started (d)
  redis.call('PEXPIREAT', d.day_start, d.expire_at)
  redis.call('HSET', d.hist, 'latest_day', d.label)
  redis.call('HSETNX', d.hist, 'since', int(d.now))
end

-- The visible XP a board score stands for, as the day-start hash keeps it.
local function visible_xp (score)
  local xp = score and tonumber(score)
  if not xp or xp < 0 then return '-' end
  return int(xp)
end

-- The day's gains of `member` in the hash: in a call of many awards (begin_day_counts), as the call
-- has counted them, read once.
local function hash_gains (d, member)
  local c = d.counts
  local gained = c and c.gains[member]
  if gained == nil then
    gained = tonumber(redis.call('HGET', d.gains, member) or '0')
    if c then c.gains[member] = gained end
  end
  return gained
end

-- The XP `member` gained today so far (the daily cap's count).
local function day_gained (d, member)
  local gained = hash_gains(d, member)
  if d.legacy_exists == nil then d.legacy_exists = redis.call('EXISTS', d.legacy) == 1 end
  if d.legacy_exists then gained = gained + tonumber(redis.call('ZSCORE', d.legacy, member) or '0') end
  return gained
end

-- A write touched `member`: it gained `gained` XP (0 for a write that is not an award); its board
-- score before this write's change was `old_score` (false: not on the board); `digits` is
-- `gained` as a string when the caller has it (nil: made here). Only a gain goes
-- to the day's gains: the members the day touched are the day-start hash's (what the close
-- reads). The gains are a hash, not a sorted set: most members tie on a day's gains, and an
-- update of a sorted set of ties compares member strings at every level.
-- In a call of many awards (begin_day_counts) it counts in Lua what end_day_counts writes.
local function touch_day (d, member, gained, old_score, digits)
  local c = d.counts
  if c then
    if gained > 0 then
      local before = hash_gains(d, member)
      c.gains[member] = before + gained
      if not c.changed[member] then
        c.changed[member] = true
        c.g = c.g + 1
        c.gainers[c.g] = member
      end
      if before > 0 then return end
    end
    c.t = c.t + 1
    c.touched[c.t], c.olds[c.t] = member, old_score
    return
  end
  -- A first gain is the only one whose new score equals it; a first touch is HSETNX's to tell.
  if gained > 0 then
    if redis.call('HINCRBY', d.gains, member, digits or int(gained)) ~= gained then return end
    if redis.call('HLEN', d.gains) == 1 then redis.call('PEXPIREAT', d.gains, d.expire_at) end
  end
  if redis.call('HSETNX', d.day_start, member, visible_xp(old_score)) == 1 and redis.call('HLEN', d.day_start) == 1 then
    day_started(d)
  end
end

-- touch_day for many members at once (bulk writes): members[i] went from board score olds[i]
-- (false: not on the board), gaining nothing. Members given twice keep their first score.
local function touch_day_many (d, members, olds, n)
  if n == 0 then return end
  local starts = redis.call('HMGET', d.day_start, unpack(members, 1, n))
  local fresh, f, seen = {}, 0, {}
  for i = 1, n do
    if not starts[i] and not seen[members[i]] then
      seen[members[i]] = true
      fresh[f + 1] = members[i]
      fresh[f + 2] = visible_xp(olds[i])
      f = f + 2
    end
  end
  if f > 0 then
    redis.call('HSET', d.day_start, unpack(fresh, 1, f))
    day_started(d)
  end
end

-- For a call of many awards (award-batch): touch_day then counts each award's gain and first
-- touch in Lua (each member's gains read once, by hash_gains, which day_gained reads too, so a
-- member awarded twice in the call sees its first award), and end_day_counts writes them: an HSET
-- of the gains and touch_day_many's two commands a call, where each award that gained cost an
-- HINCRBY and an HSETNX, and a member new to the day two HLENs. The script runs whole, so nothing
-- outside it sees the hashes between the two.
local function begin_day_counts (d)
  d.counts = { gains = {}, changed = {}, gainers = {}, g = 0, touched = {}, olds = {}, t = 0 }
end

-- Writes what touch_day counted since begin_day_counts. The day's gains get their expiry when this
-- call gave the hash its first fields (its length is then the fields the call added).
local function end_day_counts (d)
  local c = d.counts
  d.counts = nil
  if c.g > 0 then
    local args = {}
    for i = 1, c.g do
      local member = c.gainers[i]
      args[2 * i - 1], args[2 * i] = member, int(c.gains[member])
    end
    local added = redis.call('HSET', d.gains, unpack(args, 1, 2 * c.g))
    if added > 0 and redis.call('HLEN', d.gains) == added then redis.call('PEXPIREAT', d.gains, d.expire_at) end
  end
  touch_day_many(d, c.touched, c.olds, c.t)
end
