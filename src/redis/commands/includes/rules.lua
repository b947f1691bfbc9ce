-- Rules applied on write (issue 29): a server's cooldown, daily cap, curve and role rewards, read
-- from its settings hash once per script call. The gain itself (multipliers, boosts, an XP range's
-- draw) is computed by the caller from the settings of a given epoch (src/rules/gain.ts): a script
-- that takes such a gain checks the epoch first, and applies nothing when it moved.
--- @include "levels"

-- A write script's reply when the settings' epoch is not the one its caller computed at
-- (src/redis/script-status.ts): nothing changed, and the caller reads the settings again.
local SETTINGS_CHANGED = -8

-- The longest cooldown the settings allow (SETTINGS_LIMITS.cooldownSeconds.max), in ms: a
-- member's last award older than this can never hold an award off, whatever the setting becomes.
local MAX_COOLDOWN_MS = 3600 * 1000

-- The server's rules for this call, or nil and the stored epoch when `expected_epoch` (a string,
-- or nil to take any) is not the stored one. Sets the custom curve for level_for_xp('custom').
--   { epoch, curve, cooldown_ms, cap (0: none), rewards = { { level, roleId }, … } by level, mode }
local function load_rules (settings_key, expected_epoch)
  local f = redis.call('HMGET', settings_key, 'epoch', 'curve', 'custom_curve', 'cooldown_seconds', 'daily_xp_cap',
                       'role_rewards', 'role_rewards_mode')
  local epoch = f[1] or '0'
  if expected_epoch ~= nil and expected_epoch ~= epoch then return nil, epoch end
  local curve = f[2] or 'mee6'
  if curve == 'custom' then
    if f[3] then use_custom_curve(cjson.decode(f[3])) else curve = 'mee6' end
  end
  local rewards = {}
  if f[6] and f[6] ~= '[]' then rewards = cjson.decode(f[6]) end
  return {
    epoch = epoch,
    curve = curve,
    cooldown_ms = 1000 * (tonumber(f[4]) or 0),
    cap = tonumber(f[5]) or 0,
    rewards = rewards,
    mode = f[7] or 'stack'
  }
end

local function level_of (rules, xp)
  return level_for_xp(rules.curve, xp)
end

-- Whether the member's last applied award (the cooldowns board, by Redis's clock) is too recent.
local function in_cooldown (rules, cooldowns_key, member, now)
  if rules.cooldown_ms == 0 then return false end
  local last = redis.call('ZSCORE', cooldowns_key, member)
  return last ~= false and now - tonumber(last) < rules.cooldown_ms
end

-- Records an applied award's time for the cooldown (only while a cooldown is set).
local function start_cooldown (rules, cooldowns_key, member, now)
  if rules.cooldown_ms > 0 then redis.call('ZADD', cooldowns_key, now, member) end
end

-- Once per call that awarded with a cooldown set: members whose last award is past any cooldown
-- leave the board, which lives as long as the longest cooldown after its last award.
local function trim_cooldowns (rules, cooldowns_key, now)
  if rules.cooldown_ms == 0 then return end
  redis.call('ZREMRANGEBYSCORE', cooldowns_key, '-inf', '(' .. string.format('%d', now - MAX_COOLDOWN_MS))
  redis.call('PEXPIRE', cooldowns_key, MAX_COOLDOWN_MS)
end

-- The XP the member may still gain today (the day board counts its gains), or nil for no cap.
local function cap_room (rules, day_key, member)
  if rules.cap == 0 then return nil end
  return rules.cap - tonumber(redis.call('ZSCORE', day_key, member) or '0')
end

-- The reward roles of a member at `level`, in the settings' order: with `stack` every reward of
-- its level or below, with `replace` those of the highest reward level reached (role-rewards.ts).
local function roles_at (rules, level)
  local out, top = {}, nil
  for _, reward in ipairs(rules.rewards) do
    if reward.level > level then break end
    if rules.mode == 'replace' and reward.level ~= top then
      out = {}
      top = reward.level
    end
    out[#out + 1] = reward.roleId
  end
  return out
end

-- What a move from level `from` to `to` asks the bot to change: { add = {…}, remove = {…} }, or
-- nil when nothing changes.
local function role_changes (rules, from, to)
  if from == to or #rules.rewards == 0 then return nil end
  local before, after = roles_at(rules, from), roles_at(rules, to)
  local had, has = {}, {}
  for _, role in ipairs(before) do had[role] = true end
  for _, role in ipairs(after) do has[role] = true end
  local add, remove = {}, {}
  for _, role in ipairs(after) do if not had[role] then add[#add + 1] = role end end
  for _, role in ipairs(before) do if not has[role] then remove[#remove + 1] = role end end
  if #add == 0 and #remove == 0 then return nil end
  return { add = add, remove = remove }
end

-- A move's levels and roles as a reply carries them: old level, new level, the roles to add and
-- to remove as comma-separated ids ('' for none); and the changes (or nil) for the event.
local function level_reply (rules, old_xp, new_xp)
  local from, to = level_of(rules, old_xp), level_of(rules, new_xp)
  local changes = role_changes(rules, from, to)
  if changes == nil then return from, to, '', '', nil end
  return from, to, table.concat(changes.add, ','), table.concat(changes.remove, ','), changes
end
