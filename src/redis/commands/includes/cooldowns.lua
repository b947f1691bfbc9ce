-- Cooldowns (issue 29's cooldown_seconds): when each member's last award that added XP was, by
-- Redis's clock. `rules` is includes/rules.lua's load_rules table (cooldown_ms, and in a call of
-- many awards the cooldowns it started).
--- @include "numbers"

-- The longest cooldown the settings allow (SETTINGS_LIMITS.cooldownSeconds.max), in ms: a
-- member's last award older than this can never hold an award off, whatever the setting becomes.
local MAX_COOLDOWN_MS = 3600 * 1000

-- A member's cooldown is the time of its last award that added XP, kept in a hash per hour of
-- Redis's clock (src/writer/calendar-writes.ts names the hours' keys, and calendar_check holds the
-- call to the window they were named for). An hour is as long as the longest cooldown, so that
-- award is in the current hour's hash or the previous one's; a hash goes whole when the hour after
-- next begins (UNLINK: freed outside Redis's main thread), where a sorted set by time had to be
-- trimmed each call and its every update walked a skip list (docs/benchmarks.md, "Cooldowns by
-- the hour"). Versions before kept one sorted set (`legacy`), which is read, and written too,
-- while it exists (an instance not yet upgraded keeps it), and never created.
local COOLDOWN_HOUR_MS = MAX_COOLDOWN_MS

-- A call's cooldown keys: the hashes of the current hour, the one before and the one before that,
-- and the sorted set of earlier versions; the call learns once whether that one exists (legacy_exists).
local function cooldown_keys (hour, prev, old, legacy)
  return { hour = hour, prev = prev, old = old, legacy = legacy }
end

-- Whether the sorted set of earlier versions exists, asked once a call.
local function legacy_cooldowns (c)
  if c.legacy_exists == nil then c.legacy_exists = redis.call('EXISTS', c.legacy) == 1 end
  return c.legacy_exists
end

-- The Unix ms of the member's last award that added XP, or false: the previous hour's is read
-- only while the current hour is younger than the cooldown (older, it holds nothing off), and
-- the earlier versions' sorted set's while it exists (the later of the two counts).
local function last_award (rules, c, member, now)
  local last = redis.call('HGET', c.hour, member)
  if not last and now % COOLDOWN_HOUR_MS < rules.cooldown_ms then last = redis.call('HGET', c.prev, member) end
  last = last and num(last)
  if legacy_cooldowns(c) then
    local kept = redis.call('ZSCORE', c.legacy, member)
    if kept and (not last or num(kept) > last) then last = num(kept) end
  end
  return last
end

-- Whether the member's last award that added XP (by Redis's clock) is too recent. In a call of
-- many awards a cooldown the call started is not in the hash yet (begin_cooldowns).
local function in_cooldown (rules, c, member, now)
  if rules.cooldown_ms == 0 then return false end
  local last = rules.started_at and rules.started_at[member]
  if last == nil then last = last_award(rules, c, member, now) end
  return last ~= false and now - last < rules.cooldown_ms
end

-- For a call of many awards: the cooldowns it starts are kept (started_at, which in_cooldown reads
-- first, so a member awarded twice in the call sees its first award) and added in one HSET at its
-- end (write_cooldowns), not a command an award. The script runs whole: nothing sees the hash in
-- between.
local function begin_cooldowns (rules)
  rules.cooldowns_started, rules.started_at, rules.started = 0, {}, {}
end

-- Records an applied award's time for the cooldown (only while a cooldown is set).
local function start_cooldown (rules, c, member, now)
  if rules.cooldown_ms == 0 then return end
  if rules.started == nil then
    redis.call('HSET', c.hour, member, now)
    if legacy_cooldowns(c) then redis.call('ZADD', c.legacy, now, member) end
    return
  end
  local n = rules.cooldowns_started
  rules.cooldowns_started = n + 1
  rules.started_at[member] = now
  rules.started[2 * n + 1], rules.started[2 * n + 2] = member, now
end

-- Once per call of many awards (begin_cooldowns): writes the cooldowns it started.
local function write_cooldowns (rules, c)
  local n = rules.cooldowns_started
  if rules.started == nil or n == 0 then return end
  local started = rules.started
  redis.call('HSET', c.hour, unpack(started, 1, 2 * n))
  if legacy_cooldowns(c) then
    local scored = {}
    for i = 1, 2 * n, 2 do scored[i], scored[i + 1] = started[i + 1], started[i] end
    redis.call('ZADD', c.legacy, unpack(scored, 1, 2 * n))
  end
end

-- Once per call that awarded with a cooldown set: the hour's hash, new, is given its end (that of
-- the hour after next: read through the next hour, it is deleted by the first write after that,
-- or expires if none comes), and the hash two hours before it is deleted in the background.
local function expire_cooldowns (rules, c, now)
  if rules.cooldown_ms == 0 then return end
  if redis.call('PEXPIREAT', c.hour, int(now - now % COOLDOWN_HOUR_MS + 3 * COOLDOWN_HOUR_MS), 'NX') == 1 then
    redis.call('UNLINK', c.old)
  end
end

-- A removed member's cooldown (a member added again is not held off by its old awards).
local function forget_cooldown (c, member)
  redis.call('HDEL', c.hour, member)
  redis.call('HDEL', c.prev, member)
  redis.call('ZREM', c.legacy, member)
end
