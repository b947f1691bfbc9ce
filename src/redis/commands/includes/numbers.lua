-- Integers go back to Redis through string.format('%d'): a Lua number passed as-is may be
-- written in exponent form, which INCRBY-style commands refuse.
local function int (n)
  return string.format('%d', n)
end
