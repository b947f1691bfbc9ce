-- Level math, the twin of src/levels/curves.ts (test/levels.test.ts checks that they agree).
local CURVES = { 'mee6', 'linear', 'flat' }

-- Total XP needed to reach `level` from 0 under `curve`.
local function xp_for_level (curve, level)
  local l = level
  if curve == 'mee6' then
    return 5 * ((l - 1) * l * (2 * l - 1) / 6) + 25 * l * (l - 1) + 100 * l
  elseif curve == 'linear' then
    return 50 * l * l + 25 * l
  end
  return 1000 * l
end

-- The largest level whose threshold is <= xp.
local function level_for_xp (curve, xp)
  local hi = 1
  while xp_for_level(curve, hi) <= xp do hi = hi * 2 end
  local lo = math.floor(hi / 2)
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if xp_for_level(curve, mid) <= xp then lo = mid else hi = mid end
  end
  return lo
end
