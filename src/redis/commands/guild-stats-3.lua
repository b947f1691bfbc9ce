--[[
  A server's aggregates with the settings they are read under and its data version, in one
  consistent read.

  KEYS[1] stats     HASH xp_total, members_with_xp, level_sum:<curve>
  KEYS[2] settings  HASH curve, multiplier_hundredths, name, icon_url
  KEYS[3] version   STRING the server's data version

  ARGV[1] the curve of a server that has configured none

  Returns { version|false, curve, multiplier_hundredths|false, xp_total|false,
            members_with_xp|false, level sum under that curve|false, name|false, icon_url|false }.
  The aggregates count shown members only (includes/visibility.lua).
]]
local curve = redis.call('HGET', KEYS[2], 'curve') or ARGV[1]
local stats = redis.call('HMGET', KEYS[1], 'xp_total', 'members_with_xp', 'level_sum:' .. curve)
local settings = redis.call('HMGET', KEYS[2], 'multiplier_hundredths', 'name', 'icon_url')
return {
  redis.call('GET', KEYS[3]),
  curve,
  settings[1],
  stats[1],
  stats[2],
  stats[3],
  settings[2],
  settings[3]
}
