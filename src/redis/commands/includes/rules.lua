-- Rules applied on write (issue 29): a server's cooldown, daily cap, curve and role rewards, read
-- from its settings hash once per script call. The gain itself (multipliers, boosts, an XP range's
-- draw) is computed by the caller from the settings of a given epoch (src/rules/gain.ts): a script
-- that takes such a gain checks the epoch first (includes/calendar-counting.lua's calendar_check),
-- and applies nothing when it moved.
--- @include "levels"
--- @include "calendar-counting"
--- @include "cooldowns"

-- The rules' rewards and their XP when the settings set none: one table for every call (read only).
local NO_REWARDS = {}

-- The server's rules for this call, and the settings' epoch they were read at (the caller checks
-- it: calendar_check takes it, so a write reads the settings hash once). Sets the custom curve
-- for level_for_xp('custom').
--   { curve, cooldown_ms, cap (0: none), rewards = { { level, roleId }, … } by level, mode,
--     reward_xp = the XP that reaches each reward's level, in the same order (math.huge for a
--     level past a custom curve's last), epoch (as stored, '0' for none), and in a call of many
--     awards (begin_cooldowns) the cooldowns it has started: cooldowns_started (how many),
--     started_at (board member -> its award's ms) and started (member, ms, … for write_cooldowns) }
local function load_rules (settings_key)
  local f = redis.call('HMGET', settings_key, 'curve', 'cooldown_seconds', 'daily_xp_cap', 'role_rewards', 'epoch')
  local curve = f[1] or 'mee6'
  local with_rewards = f[4] and f[4] ~= '[]'
  -- A custom curve's thresholds and the rewards' mode are read only by a server that uses them:
  -- each field an HMGET names costs every call, found or not.
  local custom_curve, mode
  if curve == 'custom' or with_rewards then
    local more = redis.call('HMGET', settings_key, 'custom_curve', 'role_rewards_mode')
    custom_curve, mode = more[1], more[2]
  end
  local last_level = math.huge
  if curve == 'custom' then
    if custom_curve then
      local thresholds = cjson.decode(custom_curve)
      use_custom_curve(thresholds)
      last_level = #thresholds
    else
      curve = 'mee6'
    end
  end
  local rewards, reward_xp = NO_REWARDS, NO_REWARDS
  if with_rewards then
    rewards, reward_xp = cjson.decode(f[4]), {}
    for i, reward in ipairs(rewards) do
      reward_xp[i] = reward.level > last_level and math.huge or xp_for_level(curve, reward.level)
    end
  end
  return {
    curve = curve,
    cooldown_ms = 1000 * (tonumber(f[2]) or 0),
    cap = tonumber(f[3]) or 0,
    rewards = rewards,
    reward_xp = reward_xp,
    mode = mode or 'stack',
    epoch = f[5] or '0'
  }
end

-- The XP the member may still gain today, or nil for no cap. The day's gains (board member ->
-- the XP its awards gained in the server's day, includes/calendar-counting.lua) are the cap's
-- count: the history's, one count. `day` is calendar-counting's day context.
local function cap_room (rules, day, member)
  if rules.cap == 0 then return nil end
  return rules.cap - day_gained(day, member)
end

-- How many rewards a member holding `xp` has reached: a reward's level is reached at its XP, so
-- the rewards need no level of the member (binary search of reward_xp, which follows the levels).
local function rewards_reached (rules, xp)
  local t = rules.reward_xp
  local lo, hi = 0, #t
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if t[mid] <= xp then lo = mid else hi = mid - 1 end
  end
  return lo
end

-- The reward roles of a member that reached the first `k` rewards, in the settings' order: with
-- `stack` all of them, with `replace` those of the highest reward level among them (role-rewards.ts).
local function roles_at (rules, k)
  local out = {}
  if k == 0 then return out end
  local first = 1
  if rules.mode == 'replace' then
    local top = rules.rewards[k].level
    first = k
    while first > 1 and rules.rewards[first - 1].level == top do first = first - 1 end
  end
  for i = first, k do out[#out + 1] = rules.rewards[i].roleId end
  return out
end

-- What a move from old_xp to new_xp asks the bot to change: { add = {…}, remove = {…} }, or nil
-- when no reward's level lies between them.
local function role_changes (rules, old_xp, new_xp)
  if #rules.rewards == 0 then return nil end
  local from, to = rewards_reached(rules, old_xp), rewards_reached(rules, new_xp)
  if from == to then return nil end
  local before, after = roles_at(rules, from), roles_at(rules, to)
  local had, has = {}, {}
  for _, role in ipairs(before) do had[role] = true end
  for _, role in ipairs(after) do has[role] = true end
  local add, remove = {}, {}
  for _, role in ipairs(after) do if not had[role] then add[#add + 1] = role end end
  for _, role in ipairs(before) do if not has[role] then remove[#remove + 1] = role end end
  return { add = add, remove = remove }
end
