--[[
  A server's aggregates with the settings they are read under and its data version, in one
  consistent read. The level sum of a built-in curve is kept by the writes (includes/aggregates.lua);
  under a custom curve it is counted here from the board: a member at level L passes L
  thresholds, so the sum of the levels is, over the thresholds, the members at or above each
  (one ZCOUNT each, up to the first threshold nobody reaches). The aggregates count shown members
  only, and so do these counts: a hidden member's score is below every visible one
  (includes/visibility.lua), so no count starts below the lowest visible score.

  KEYS[1] stats     HASH xp_total, members_with_xp, level_sum:<curve>
  KEYS[2] settings  HASH curve, custom_curve, multiplier_hundredths, name, icon_url
  KEYS[3] version   STRING the server's data version
  KEYS[4] board     ZSET board member -> xp

  ARGV[1] the curve of a server that has configured none

  Returns { version|false, curve, multiplier_hundredths|false, xp_total|false,
            members_with_xp|false, level sum under that curve|false, name|false, icon_url|false }.
]]
--- @include "visibility"

local settings = redis.call('HMGET', KEYS[2], 'curve', 'custom_curve', 'multiplier_hundredths', 'name', 'icon_url')
local curve = settings[1] or ARGV[1]
local stats = redis.call('HMGET', KEYS[1], 'xp_total', 'members_with_xp', 'level_sum:' .. curve)
local level_sum = stats[3]
if curve == 'custom' then
  if settings[2] then
    local sum = 0
    for _, xp in ipairs(cjson.decode(settings[2])) do
      local reached = redis.call('ZCOUNT', KEYS[4], string.format('%d', math.max(xp, VISIBLE_MIN)), '+inf')
      if reached == 0 then break end
      sum = sum + reached
    end
    level_sum = string.format('%d', sum)
  else
    curve = ARGV[1] -- as the settings read a custom curve without its list
    level_sum = redis.call('HGET', KEYS[1], 'level_sum:' .. curve)
  end
end
return {
  redis.call('GET', KEYS[3]),
  curve,
  settings[3],
  stats[1],
  stats[2],
  level_sum,
  settings[4],
  settings[5]
}
