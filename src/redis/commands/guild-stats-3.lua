--[[
  A server's aggregates with the settings they are read under and its data version, in one
  consistent read.

  KEYS[1] stats     HASH xp_total, members_with_xp, level_sum:<curve>
  KEYS[2] settings  HASH curve, multiplier_hundredths
  KEYS[3] version   STRING the server's data version

  ARGV[1] the curve of a server that has configured none

  Returns { version|false, curve, multiplier_hundredths|false, xp_total|false,
            members_with_xp|false, level sum under that curve|false }.
]]
local curve = redis.call('HGET', KEYS[2], 'curve') or ARGV[1]
local stats = redis.call('HMGET', KEYS[1], 'xp_total', 'members_with_xp', 'level_sum:' .. curve)
return {
  redis.call('GET', KEYS[3]),
  curve,
  redis.call('HGET', KEYS[2], 'multiplier_hundredths'),
  stats[1],
  stats[2],
  stats[3]
}
