--[[
  Moves one server from schema 1 to schema 2, atomically: the per-user names, streaks and claims
  hashes (keyed by user_id) become one members hash keyed by board member, whose record is
  "<streak>:<last claim>:<username>". Running it again finds nothing to move.

  KEYS[1] names    HASH user_id -> username        (schema 1; deleted)
  KEYS[2] streaks  HASH user_id -> daily streak    (schema 1; deleted)
  KEYS[3] claims   HASH user_id -> last claim, ms  (schema 1; deleted)
  KEYS[4] members  HASH board member -> record     (schema 2)
  KEYS[5] board    ZSET board member -> xp
  KEYS[6] version  STRING the server's data version

  Returns the number of members whose record moved.
]]
--- @include "records"
--- @include "version"

local NINES = { ['0'] = '9', ['1'] = '8', ['2'] = '7', ['3'] = '6', ['4'] = '5',
                ['5'] = '4', ['6'] = '3', ['7'] = '2', ['8'] = '1', ['9'] = '0' }

-- boardMember() of src/redis/keys.ts: zero-padded to 20 digits, then nine's-complemented.
local function board_member (user_id)
  local padded = string.rep('0', 20 - #user_id) .. user_id
  local complemented = string.gsub(padded, '%d', NINES)
  return complemented
end

local records = {}   -- user_id -> { streak, claim, name }
local function record_of (user_id)
  local r = records[user_id]
  if not r then
    r = { '', '', '' }
    records[user_id] = r
  end
  return r
end
local function collect (key, part)
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do record_of(fields[i])[part] = fields[i + 1] end
end
collect(KEYS[2], 1)
collect(KEYS[3], 2)
collect(KEYS[1], 3)

local moved = 0
for user_id, r in pairs(records) do
  local member = board_member(user_id)
  -- Only members on the board are members; schema 1 never left a record without one.
  if redis.call('ZSCORE', KEYS[5], member) then
    write_record(KEYS[4], member, r[1], r[2], r[3])
    moved = moved + 1
  end
end
if moved > 0 or redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3]) > 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  bump_version(KEYS[6])
end
return moved
