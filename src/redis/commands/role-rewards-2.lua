--[[
  A server's role rewards (GET /role-rewards), read consistently with its curve and data version.

  KEYS[1] settings  HASH role_rewards (JSON, by level), role_rewards_mode, curve
  KEYS[2] version   STRING the server's data version

  Returns { version|false, role_rewards|false, role_rewards_mode|false, curve|false }; the curve
  is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "shown-curve"

local fields = redis.call('HMGET', KEYS[1], 'role_rewards', 'role_rewards_mode')
return { redis.call('GET', KEYS[2]), fields[1], fields[2], shown_curve(KEYS[1]) }
