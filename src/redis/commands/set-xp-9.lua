--[[
  Sets a member's XP outright (an administrative act: no multiplier), creating the member if
  needed, and appends the events a rise causes (includes/events.lua).

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] stats    HASH aggregates
  KEYS[4] version  STRING the server's data version
  KEYS[5] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev HASH the same, the previous bucket
  KEYS[7] settings HASH curve (the level of member.leveled_up)
  KEYS[8] event_subscriptions HASH who listens to the server's events
  KEYS[9] events   STREAM the server's events

  ARGV[1] board member
  ARGV[2] xp, an integer from 0 to the XP limit (checked by the caller)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms

  Returns the member's previous XP (0 for a new member); an operation already applied returns
  its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "records"
--- @include "version"
--- @include "operations"
--- @include "events"

local done = replay(KEYS[5], KEYS[6], ARGV[4])
if done then return done[1] end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local old_xp = tonumber(score or '0')
local new_xp = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(new_xp), ARGV[1])
if ARGV[3] ~= '' then set_name(KEYS[2], ARGV[1], ARGV[3]) end
apply_xp_change(KEYS[3], old_xp, new_xp)
bump_version(KEYS[4])
local events = events_context(KEYS[8], KEYS[9])
member_moved(events, { board = KEYS[1], members = KEYS[2], settings = KEYS[7] }, ARGV[1], score ~= false, old_xp, new_xp, nil)
events_done(events)
return remember(KEYS[5], ARGV[4], ARGV[5], { old_xp })[1]
