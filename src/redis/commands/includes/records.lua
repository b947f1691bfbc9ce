-- A member's record in the server's members hash (field: the board member):
-- "<daily streak>:<last claim, Unix ms>:<username>", each part empty when unknown, then, once the
-- member has any of them, its extension: "\31<history index>\31<display name>\31<avatar url>"
-- (each part may be empty; names never hold control characters, so \31 cannot occur in one).
-- One hash entry per member keeps memory low; readers split it outside Redis (src/redis/records.ts).

local function read_record (members_key, member)
  local record = redis.call('HGET', members_key, member)
  if not record then return '', '', '', '' end
  local streak, claim, rest = string.match(record, '^(%d*):(%d*):(.*)$')
  local cut = string.find(rest, '\31', 1, true)
  if cut then return streak, claim, string.sub(rest, 1, cut - 1), string.sub(rest, cut) end
  return streak, claim, rest, ''
end

-- `extension` is as read_record gave it ('' or starting with \31): written back unchanged.
local function write_record (members_key, member, streak, claim, name, extension)
  redis.call('HSET', members_key, member, streak .. ':' .. claim .. ':' .. name .. (extension or ''))
end

-- Records `name` as the member's username, keeping its daily claim and extension.
local function set_name (members_key, member, name)
  local streak, claim, old, extension = read_record(members_key, member)
  if old ~= name then write_record(members_key, member, streak, claim, name, extension) end
end

-- The extension's parts: history index (a number, or nil), display name, avatar url ('' when unset).
local function extension_parts (extension)
  if extension == '' then return nil, '', '' end
  local index, display, avatar = string.match(extension, '^\31(%d*)\31?([^\31]*)\31?([^\31]*)')
  return tonumber(index), display or '', avatar or ''
end

local function make_extension (index, display, avatar)
  if index == nil and display == '' and avatar == '' then return '' end
  return '\31' .. (index and string.format('%d', index) or '') .. '\31' .. display .. '\31' .. avatar
end
