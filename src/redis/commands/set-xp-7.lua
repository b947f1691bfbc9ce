--[[
  Sets a member's XP outright (an administrative act: no multiplier), creating the member if
  needed; a hidden member stays hidden (includes/visibility.lua).

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] stats    HASH aggregates
  KEYS[4] version  STRING the server's data version
  KEYS[5] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[6] ops_prev HASH the same, the previous bucket
  KEYS[7] hidden   HASH board member -> why the user is hidden

  ARGV[1] board member
  ARGV[2] xp, an integer from 0 to the XP limit (checked by the caller)
  ARGV[3] username, or '' to leave it as it is
  ARGV[4] operation id
  ARGV[5] how long a bucket's hash lives, ms
  ARGV[6] display name, '' to leave it as it is, or "\31" to clear it (includes/profile.lua)
  ARGV[7] avatar URL, the same way

  Returns the member's previous XP (0 for a new member); an operation already applied returns
  its first reply and changes nothing.
]]
--- @include "aggregates"
--- @include "profile"
--- @include "version"
--- @include "operations"
--- @include "visibility"

local done = replay(KEYS[5], KEYS[6], ARGV[4])
if done then return done[1] end

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local old_xp, hidden = 0, false
if score then old_xp, hidden = decode_score(score) else hidden = hidden_user(KEYS[7], ARGV[1]) end
local new_xp = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(encode_score(new_xp, hidden)), ARGV[1])
set_names(KEYS[2], ARGV[1], ARGV[3], ARGV[6], ARGV[7])
if not hidden then apply_xp_change(KEYS[3], old_xp, new_xp) end
bump_version(KEYS[4])
return remember(KEYS[5], ARGV[4], ARGV[5], { old_xp })[1]
