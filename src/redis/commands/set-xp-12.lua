--[[
  Sets a member's XP outright (an administrative act: no multiplier, no rule), creating the
  member if needed, says what the role rewards ask of the bot for the move (includes/rules.lua),
  and appends the events a rise causes (includes/events.lua). The change is kept in the server's
  day (includes/calendar-counting.lua), not in any period's or season's board.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] stats     HASH aggregates
  KEYS[4] version   STRING the server's data version
  KEYS[5] ops       HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev  HASH the same, the previous bucket
  KEYS[7] settings  HASH the settings, and their `epoch` (the curve and the role rewards)
  KEYS[8] event_subscriptions HASH who listens to the server's events
  KEYS[9] events    STREAM the server's events
  KEYS[10] day_start HASH board member -> visible xp before its first change in the day
  KEYS[11] hist     HASH the server's history (`latest_day`, `since`)
  KEYS[12] hidden   HASH board member -> why the user is hidden (includes/visibility.lua)

  ARGV[1] board member
  ARGV[2] xp, an integer from 0 to the XP limit (checked by the caller)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms
  ARGV[6] ARGV[7] the window [from, until), Unix ms, in which KEYS[10] is current
  ARGV[8] the settings' epoch the caller computed with
  ARGV[9] the day's label (YYYY-MM-DD)
  ARGV[10] when the day's keys expire, Unix ms
  ARGV[11] display name, '' to leave it as it is, or "\31" to clear it (includes/profile.lua)
  ARGV[12] avatar URL, the same way

  Returns { 1, the member's previous XP (0 for a new member), roles to add, roles to remove
  (comma-separated ids, '' for none), the level after it }, or, with nothing changed,
  { -2, now_ms } when Redis's clock is outside the window, { -3, epoch } when the settings' epoch
  moved. An operation already applied returns its first reply and changes nothing (one
  remembered before roles were given holds the previous XP alone after the 1).
]]
--- @include "aggregates"
--- @include "profile"
--- @include "version"
--- @include "operations"
--- @include "events"
--- @include "calendar-counting"
--- @include "visibility"
--- @include "rules"

local SET = 1

local done = replay(KEYS[5], KEYS[6], ARGV[4])
if done then return { SET, unpack(done) } end

local rules = load_rules(KEYS[7])
local now, refusal = calendar_check(KEYS[7], ARGV[8], ARGV[6], ARGV[7], '', rules.epoch)
if refusal then return refusal end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local old_xp, hidden = 0, false
if score then old_xp, hidden = decode_score(score) else hidden = hidden_user(KEYS[12], ARGV[1]) end
local new_xp = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(encode_score(new_xp, hidden)), ARGV[1])
set_names(KEYS[2], ARGV[1], ARGV[3], ARGV[11], ARGV[12])
if not hidden then apply_xp_change(KEYS[3], old_xp, new_xp) end
touch_day({ day_start = KEYS[10], hist = KEYS[11], label = ARGV[9], expire_at = ARGV[10], now = now }, ARGV[1], 0, score)
bump_version(KEYS[4])
local changes = role_changes(rules, old_xp, new_xp)
local events = events_context(KEYS[8], KEYS[9])
if events then events.curve = rules.curve end
if not hidden then
  member_moved(events, { board = KEYS[1], members = KEYS[2], settings = KEYS[7] }, ARGV[1], score ~= false, old_xp, new_xp, changes)
end
events_done(events)
local add, remove = '', ''
if changes then add, remove = table.concat(changes.add, ','), table.concat(changes.remove, ',') end
return { SET, unpack(remember(KEYS[5], ARGV[4], ARGV[5], { old_xp, add, remove, level_for_xp(rules.curve, new_xp) })) }
