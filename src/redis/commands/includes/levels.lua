-- Level math, the twin of src/levels/curves.ts (test/levels.test.ts checks that they agree).
local CURVES = { 'mee6', 'linear', 'flat' }
-- A server's curve when its settings name none (DEFAULT_CURVE of curves.ts).
local DEFAULT_CURVE = 'mee6'

-- Total XP needed to reach level l from 0, one function per curve (closed forms of the sums of
-- the per-level XP; (l-1)l(2l-1) is always divisible by 6, so every value is an exact integer).
local function mee6_xp (l) return 5 * ((l - 1) * l * (2 * l - 1) / 6) + 25 * l * (l - 1) + 100 * l end
local function linear_xp (l) return 50 * l * l + 25 * l end
local function flat_xp (l) return 1000 * l end

-- The largest level whose threshold is <= xp: a floating-point estimate from the inverse of the
-- closed form, then exact integer steps to the answer (a step or two), never a search: the bulk
-- write path computes up to six levels per member, so the thresholds are written out inline.
local floor, sqrt = math.floor, math.sqrt

local function mee6_level (xp)
  -- mee6_xp(u - 4.5) = 5/3 u^3 - 25.4 u - 37.5, so the cubic term alone lands within a level or two.
  local l = floor((0.6 * xp) ^ (1 / 3) - 4.5)
  if l < 0 then l = 0 end
  while l > 0 and 5 * ((l - 1) * l * (2 * l - 1) / 6) + 25 * l * (l - 1) + 100 * l > xp do l = l - 1 end
  local m = l + 1
  while 5 * ((m - 1) * m * (2 * m - 1) / 6) + 25 * m * (m - 1) + 100 * m <= xp do
    l = m
    m = m + 1
  end
  return l
end

local function linear_level (xp)
  local l = floor((sqrt(625 + 200 * xp) - 25) / 100)
  if l < 0 then l = 0 end
  while l > 0 and 50 * l * l + 25 * l > xp do l = l - 1 end
  local m = l + 1
  while 50 * m * m + 25 * m <= xp do
    l = m
    m = m + 1
  end
  return l
end

local function flat_level (xp)
  local l = floor(xp / 1000)
  while l > 0 and 1000 * l > xp do l = l - 1 end
  while 1000 * (l + 1) <= xp do l = l + 1 end
  return l
end

-- By curve name, and the levels under every curve at once in the order of CURVES (the bulk
-- write path's hot loop calls this, not the functions by name; a new curve goes in all three,
-- and in new_deltas of aggregates.lua).
local XP_FOR_LEVEL = { mee6 = mee6_xp, linear = linear_xp, flat = flat_xp }
local LEVEL_FOR_XP = { mee6 = mee6_level, linear = linear_level, flat = flat_level }

local function levels_of (xp)
  return mee6_level(xp), linear_level(xp), flat_level(xp)
end

-- levels_of(xp) from a, b, c, the levels at an XP at or below xp: a move that stays within a
-- curve's level (most awards') costs that curve one threshold, not its solution.
local function levels_from (xp, a, b, c)
  if mee6_xp(a + 1) <= xp then a = mee6_level(xp) end
  if linear_xp(b + 1) <= xp then b = linear_level(xp) end
  if flat_xp(c + 1) <= xp then c = flat_level(xp) end
  return a, b, c
end

-- Total XP needed to reach `level` from 0 under `curve` (an unknown name reads as flat, as the
-- reader never stores one).
local function xp_for_level (curve, level)
  return (XP_FOR_LEVEL[curve] or flat_xp)(level)
end

local function level_for_xp (curve, xp)
  return (LEVEL_FOR_XP[curve] or flat_level)(xp)
end

-- A server's custom curve (curve `custom`): the XP needed for level 1, 2, …, strictly increasing,
-- set for the script call by use_custom_curve (includes/rules.lua reads the server's); its last
-- level is the highest. level_for_xp and xp_for_level take the name `custom` once it is set.
local custom_thresholds = {}

local function custom_level (xp)
  -- The largest l with custom_thresholds[l] <= xp (0 when even the first is above it).
  local t = custom_thresholds
  local lo, hi = 0, #t
  while lo < hi do
    local mid = floor((lo + hi + 1) / 2)
    if t[mid] <= xp then lo = mid else hi = mid - 1 end
  end
  return lo
end

local function custom_xp (l)
  if l == 0 then return 0 end
  return custom_thresholds[l]
end

XP_FOR_LEVEL.custom = custom_xp
LEVEL_FOR_XP.custom = custom_level

local function use_custom_curve (thresholds)
  custom_thresholds = thresholds
end
