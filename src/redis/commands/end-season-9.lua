--[[
  Ends the server's current season and starts the next: the season's board becomes its archive
  (a RENAME: O(1) whatever its size), its record { name, started_at, ended_at } is kept in the
  seasons hash, and the settings' epoch moves, so every writer that cached the season learns of
  the end at its next write. Exactly once across instances: the caller names the season it ends
  (and the epoch it read it at); a season another caller ended first is refused.

  Two ways: `due` ends a season whose scheduled end (ARGV[4]) Redis's clock has reached; it
  ended then, and the next starts at ARGV[5], the start of the schedule's span that holds now
  (the end itself, unless no instance and no writer ran through whole spans: no empty season is
  made for them). `now` ends it at Redis's time, by hand, and the next starts then.

  KEYS[1] seasons        HASH the server's seasons (src/seasons/season-state.ts)
  KEYS[2] settings       HASH the settings, and their `epoch`
  KEYS[3] version        STRING the server's data version
  KEYS[4] season_current ZSET the current season's board
  KEYS[5] season_ended   ZSET the archive the board becomes (the season's id)
  KEYS[6] members        HASH board member -> record
  KEYS[7] hist           HASH the server's history (`since`: when the first season began, if none was recorded)
  KEYS[8] event_subscriptions HASH who listens to the server's events (includes/events.lua)
  KEYS[9] events         STREAM the server's events

  ARGV[1] 'due' or 'now'
  ARGV[2] the id of the season to end
  ARGV[3] the settings' epoch the caller read it at
  ARGV[4] due: the season's scheduled end, Unix ms
  ARGV[5] due: when the next season starts, Unix ms
  ARGV[6] ARGV[7] due: the window [from, until), Unix ms, in which ARGV[5] is the start of the span holding now
  ARGV[8] the next season's name, or '' for its default

  Returns { 1, new id, its start, the ended season's end } once ended, or, with nothing changed,
  { -3, epoch } when the epoch moved (another caller ended it, or the settings changed),
  { -2, now_ms } when Redis's clock is outside the window, { -5, now_ms } when the season is not due.
]]
--- @include "calendar-counting"
--- @include "version"
--- @include "events"

local ENDED, NOT_DUE = 1, -5

local epoch = redis.call('HGET', KEYS[2], 'epoch') or '0'
local id = tonumber(redis.call('HGET', KEYS[1], 'current') or '1')
if epoch ~= ARGV[3] or id ~= tonumber(ARGV[2]) then return { SETTINGS_CHANGED, tonumber(epoch) } end

local now = now_ms()
local ended_at, next_start = now, now
if ARGV[1] == 'due' then
  ended_at = tonumber(ARGV[4])
  if now < ended_at then return { NOT_DUE, now } end
  if now < tonumber(ARGV[6]) or now >= tonumber(ARGV[7]) then return { OUTSIDE_PERIOD_WINDOW, now } end
  next_start = tonumber(ARGV[5])
end

local started_at = redis.call('HGET', KEYS[1], 'current_started_at') or redis.call('HGET', KEYS[7], 'since')
local record = { name = redis.call('HGET', KEYS[1], 'name:' .. id) or ('Season ' .. id), ended_at = ended_at }
if started_at then record.started_at = tonumber(started_at) end
redis.call('HSET', KEYS[1], id, cjson.encode(record), 'current', id + 1, 'current_started_at', int(next_start))
redis.call('HDEL', KEYS[1], 'name:' .. id)
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'name:' .. (id + 1), ARGV[8]) end
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('RENAME', KEYS[4], KEYS[5]) end
redis.call('HINCRBY', KEYS[2], 'epoch', 1)
bump_version(KEYS[3])

local events = events_context(KEYS[8], KEYS[9])
if wants(events, 'season.ended') then
  -- The final top: the first ranks among the members shown (a hidden member's score is negative).
  local flat = redis.call('ZREVRANGEBYSCORE', KEYS[5], '+inf', 0, 'WITHSCORES', 'LIMIT', 0, TOP)
  local top = {}
  for i = 1, #flat, 2 do
    local _, _, name = read_record(KEYS[6], flat[i])
    top[#top + 1] = { member = flat[i], xp = tonumber(flat[i + 1]), name = name }
  end
  season_ended(events, { id = id, name = record.name, started_at = record.started_at or ended_at, ended_at = ended_at }, top)
  events_done(events)
end
return { ENDED, id + 1, next_start, ended_at }
