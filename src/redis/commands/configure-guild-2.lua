--[[
  Sets a server's curve and/or multiplier. The aggregates keep a level sum under every curve, so
  the very next read shows every level and aggregate under the new settings.

  KEYS[1] settings  HASH curve, multiplier_hundredths
  KEYS[2] version   STRING the server's data version

  ARGV[1] curve, or '' to leave it
  ARGV[2] multiplier in hundredths, or '' to leave it

  Returns 1.
]]
--- @include "version"

if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'curve', ARGV[1]) end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'multiplier_hundredths', ARGV[2]) end
bump_version(KEYS[2])
return 1
