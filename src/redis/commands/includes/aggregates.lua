--- @include "numbers"
--- @include "levels"

-- The server's aggregates move with each member's XP. The level sum is kept under every curve,
-- so switching curves is one HSET and the next read is exact.

-- Running changes to the aggregates, as plain numbers: the XP total, the members with XP, and the
-- level sum under each curve in the order of CURVES. Every change is an integer far below 2^53
-- (a call moves at most a few thousand members of at most MAX_XP each), so the sums are exact.
local function new_deltas ()
  return { xp_total = 0, members_with_xp = 0, levels = { 0, 0, 0 } }
end

-- Counts one member holding `xp` into `deltas` (sign 1) or out of it (sign -1). A member with
-- 0 XP counts in nothing: it is in no sum and at level 0 under every curve.
local function count_member (deltas, xp, sign)
  if xp > 0 then
    deltas.xp_total = deltas.xp_total + sign * xp
    deltas.members_with_xp = deltas.members_with_xp + sign
    local levels = deltas.levels
    local a, b, c = levels_of(xp)
    levels[1] = levels[1] + sign * a
    levels[2] = levels[2] + sign * b
    levels[3] = levels[3] + sign * c
  end
end

-- Adds one member's move from old_xp to new_xp to `deltas`. A gain of a member that had XP (most
-- awards) takes its new levels from its old ones (levels_from).
local function add_xp_change (deltas, old_xp, new_xp)
  if old_xp == new_xp then return end
  if old_xp > 0 and new_xp > old_xp then
    deltas.xp_total = deltas.xp_total + (new_xp - old_xp)
    local levels = deltas.levels
    local a, b, c = levels_of(old_xp)
    local a2, b2, c2 = levels_from(new_xp, a, b, c)
    levels[1] = levels[1] + (a2 - a)
    levels[2] = levels[2] + (b2 - b)
    levels[3] = levels[3] + (c2 - c)
    return
  end
  count_member(deltas, old_xp, -1)
  count_member(deltas, new_xp, 1)
end

local function apply_deltas (stats_key, deltas)
  if deltas.xp_total ~= 0 then redis.call('HINCRBY', stats_key, 'xp_total', int(deltas.xp_total)) end
  if deltas.members_with_xp ~= 0 then redis.call('HINCRBY', stats_key, 'members_with_xp', int(deltas.members_with_xp)) end
  for c, curve in ipairs(CURVES) do
    local delta = deltas.levels[c]
    if delta ~= 0 then redis.call('HINCRBY', stats_key, 'level_sum:' .. curve, int(delta)) end
  end
end

local function apply_xp_change (stats_key, old_xp, new_xp)
  local deltas = new_deltas()
  add_xp_change(deltas, old_xp, new_xp)
  apply_deltas(stats_key, deltas)
end
