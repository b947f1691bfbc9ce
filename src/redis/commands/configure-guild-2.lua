--[[
  Changes a server's settings: sets some fields of its settings hash and clears others (the
  caller validated them: src/settings/settings.ts), moves the settings' epoch and the data
  version. A change computed from the settings as they were (a map merged with the stored one) is
  applied only if the epoch is still the one it was computed at. The aggregates keep a level sum
  under every built-in curve, so the very next read shows every level under the new settings.

  KEYS[1] settings  HASH the settings, one field each, and `epoch`
  KEYS[2] version   STRING the server's data version

  ARGV[1] the epoch the change was computed at, or '' to apply it whatever the epoch
  ARGV[2] the number of fields set, n
  then the n fields set, as field, value pairs, then the fields to clear

  Returns { 1, new epoch }, or { -1, current epoch } (nothing changed) when the epoch moved.
]]
--- @include "version"

local CHANGED, EPOCH_MOVED = 1, -1

local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= epoch then return { EPOCH_MOVED, epoch } end
local n = tonumber(ARGV[2])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 3, 2 + 2 * n)) end
if #ARGV > 2 + 2 * n then redis.call('HDEL', KEYS[1], unpack(ARGV, 3 + 2 * n)) end
epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
bump_version(KEYS[2])
return { CHANGED, epoch }
