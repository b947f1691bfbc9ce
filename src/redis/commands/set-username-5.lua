--[[
  Records a member's names (username, display name, avatar URL: includes/profile.lua); only for
  a member that exists.

  KEYS[1] board    ZSET board member -> xp
  KEYS[2] members  HASH board member -> record
  KEYS[3] version  STRING the server's data version
  KEYS[4] ops      HASH operation id -> reply, this time bucket (includes/operations.lua)
  KEYS[5] ops_prev HASH the same, the previous bucket

  ARGV[1] board member
  ARGV[2] username, or '' to leave it as it is
  ARGV[3] operation id
  ARGV[4] how long a bucket's hash lives, ms
  ARGV[5] display name, '' to leave it as it is, or "\31" to clear it
  ARGV[6] avatar URL, the same way

  Returns 1 when recorded, 0 when the user is not a member (nothing changed); an operation
  already applied returns its first reply and changes nothing.
]]
--- @include "profile"
--- @include "version"
--- @include "operations"

local done = replay(KEYS[4], KEYS[5], ARGV[3])
if done then return done[1] end

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return remember(KEYS[4], ARGV[3], ARGV[4], { 0 })[1]
end
set_names(KEYS[2], ARGV[1], ARGV[2], ARGV[5], ARGV[6])
bump_version(KEYS[3])
return remember(KEYS[4], ARGV[3], ARGV[4], { 1 })[1]
