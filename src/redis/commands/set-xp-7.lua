--[[
  Sets a member's XP outright (an administrative act: no multiplier, no rule), creating the
  member if needed, and says what the role rewards ask of the bot for the move (includes/rules.lua).

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] stats    HASH aggregates
  KEYS[4] version  STRING the server's data version
  KEYS[5] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev HASH the same, the previous bucket
  KEYS[7] settings HASH the server's settings (its curve and role rewards)

  ARGV[1] board member
  ARGV[2] xp, an integer from 0 to the XP limit (checked by the caller)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms

  Returns { previous XP (0 for a new member), roles to add, roles to remove (comma-separated ids,
  '' for none), the level after it }; an operation already applied returns its first reply and
  changes nothing (one remembered before roles were given holds the previous XP alone).
]]
--- @include "aggregates"
--- @include "records"
--- @include "version"
--- @include "operations"
--- @include "rules"

local done = replay(KEYS[5], KEYS[6], ARGV[4])
if done then return done end

local rules = load_rules(KEYS[7], nil)
local old_xp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
local new_xp = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(new_xp), ARGV[1])
if ARGV[3] ~= '' then set_name(KEYS[2], ARGV[1], ARGV[3]) end
apply_xp_change(KEYS[3], old_xp, new_xp)
bump_version(KEYS[4])
local changes = role_changes(rules, old_xp, new_xp)
local add, remove = '', ''
if changes then add, remove = table.concat(changes.add, ','), table.concat(changes.remove, ',') end
return remember(KEYS[5], ARGV[4], ARGV[5], { old_xp, add, remove, level_for_xp(rules.curve, new_xp) })
