-- The inverse of boardMember() in src/redis/keys.ts: undo the nine's complement, drop the padding.
-- A lookup table, not a function per digit: on a page of 100 this is most of the script's time.
local NINES = { ['0'] = '9', ['1'] = '8', ['2'] = '7', ['3'] = '6', ['4'] = '5',
                ['5'] = '4', ['6'] = '3', ['7'] = '2', ['8'] = '1', ['9'] = '0' }

local function user_id_from_member (member)
  local digits = string.gsub(member, '%d', NINES)
  local id = string.gsub(digits, '^0+(%d)', '%1')
  return id
end
