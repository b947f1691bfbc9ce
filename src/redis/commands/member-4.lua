--[[
  One member's record, read consistently with its rank, the server's curve and data version.

  KEYS[1] board     ZSET board member -> xp
  KEYS[2] members   HASH board member -> record
  KEYS[3] settings  HASH curve, multiplier_hundredths
  KEYS[4] version   STRING the server's data version

  ARGV[1] board member

  Returns { version|false, now_ms, xp|false, rank (0-based)|false, record|false, curve|false }:
  xp is false when the user is not a member.
]]
--- @include "clock"

local xp = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not xp then return { redis.call('GET', KEYS[4]), now_ms(), false } end
return {
  redis.call('GET', KEYS[4]),
  now_ms(),
  xp,
  redis.call('ZREVRANK', KEYS[1], ARGV[1]),
  redis.call('HGET', KEYS[2], ARGV[1]),
  redis.call('HGET', KEYS[3], 'curve')
}
