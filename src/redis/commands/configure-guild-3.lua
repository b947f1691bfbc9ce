--[[
  Changes a server's settings: sets some fields of its settings hash and clears others (the
  caller validated them: src/settings/settings.ts), moves the settings' epoch and the data
  version. A change of the season schedule (`season_every`, `timezone`) moves the seasons'
  anchor to Redis's clock: the current season then ends at the end of the new schedule's span
  that holds the change (src/seasons/season-state.ts). A change computed from the settings as
  they were (a map merged with the stored one) is applied only if the epoch is still the one it
  was computed at. The aggregates keep a level sum under every built-in curve, so the very next
  read shows every level under the new settings.

  KEYS[1] settings  HASH the settings, one field each, and `epoch`
  KEYS[2] version   STRING the server's data version
  KEYS[3] seasons   HASH the server's seasons (`anchor`)

  ARGV[1] the epoch the change was computed at, or '' to apply it whatever the epoch
  ARGV[2] the number of fields set, n
  then the n fields set, as field, value pairs, then the fields to clear

  Returns { 1, new epoch }, or { -1, current epoch } (nothing changed) when the epoch moved.
]]
--- @include "version"
--- @include "clock"

local CHANGED, EPOCH_MOVED = 1, -1

local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= epoch then return { EPOCH_MOVED, epoch } end
local n = tonumber(ARGV[2])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 3, 2 + 2 * n)) end
for i = 3, 1 + 2 * n, 2 do
  if ARGV[i] == 'season_every' or ARGV[i] == 'timezone' then
    redis.call('HSET', KEYS[3], 'anchor', string.format('%d', now_ms()))
    break
  end
end
if #ARGV > 2 + 2 * n then redis.call('HDEL', KEYS[1], unpack(ARGV, 3 + 2 * n)) end
epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
bump_version(KEYS[2])
return { CHANGED, epoch }
