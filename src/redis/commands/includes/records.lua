-- A member's record in the server's members hash (field: the board member):
-- "<daily streak>:<last claim, Unix ms>:<username>", each part empty when unknown. One hash
-- entry per member keeps memory low; readers split it outside Redis (src/redis/records.ts).

local function read_record (members_key, member)
  local record = redis.call('HGET', members_key, member)
  if not record then return '', '', '' end
  local streak, claim, name = string.match(record, '^(%d*):(%d*):(.*)$')
  return streak, claim, name
end

local function write_record (members_key, member, streak, claim, name)
  redis.call('HSET', members_key, member, streak .. ':' .. claim .. ':' .. name)
end

-- Records `name` as the member's username, keeping its daily claim.
local function set_name (members_key, member, name)
  local streak, claim, old = read_record(members_key, member)
  if old ~= name then write_record(members_key, member, streak, claim, name) end
end
