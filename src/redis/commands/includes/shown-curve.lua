-- The curve a read script hands the reader with the levels it reads: the curve's name, or for a
-- server's custom curve `custom:<settings epoch>` (the reader reads the list itself, once per
-- epoch, outside the script: src/reader/level-curves.ts).
local function shown_curve (settings_key)
  local curve = redis.call('HGET', settings_key, 'curve')
  if curve == 'custom' then return 'custom:' .. (redis.call('HGET', settings_key, 'epoch') or '0') end
  return curve
end
