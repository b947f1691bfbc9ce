--- @include "numbers"
--- @include "levels"

-- Moves one member's share of the server's aggregates from old_xp to new_xp. The level sum is
-- kept under every curve, so switching curves is one HSET and the next read is exact.
local function apply_xp_change (stats_key, old_xp, new_xp)
  if old_xp == new_xp then return end
  redis.call('HINCRBY', stats_key, 'xp_total', int(new_xp - old_xp))
  local had = old_xp > 0 and 1 or 0
  local has = new_xp > 0 and 1 or 0
  if had ~= has then
    redis.call('HINCRBY', stats_key, 'members_with_xp', has - had)
  end
  for _, curve in ipairs(CURVES) do
    local delta = level_for_xp(curve, new_xp) - level_for_xp(curve, old_xp)
    if delta ~= 0 then
      redis.call('HINCRBY', stats_key, 'level_sum:' .. curve, int(delta))
    end
  end
end
