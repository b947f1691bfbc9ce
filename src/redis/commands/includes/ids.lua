-- The inverse of boardMember() in src/redis/keys.ts: undo the nine's complement, drop the padding.
local function user_id_from_member (member)
  local digits = string.gsub(member, '%d', function (d) return tostring(9 - tonumber(d)) end)
  local id = string.gsub(digits, '^0+(%d)', '%1')
  return id
end
