-- Integers go back to Redis through string.format('%d'): a Lua number passed as-is may be
-- written in exponent form, which INCRBY-style commands refuse.
local function int (n)
  return string.format('%d', n)
end

-- A decimal string that is a number by contract (a reply's score or time, a caller's argument)
-- as a number. Lua 5.1's tonumber converts a string twice (lua_isnumber, then lua_tonumber), each
-- a strtod; arithmetic converts it once. Unlike tonumber, a string that is no number raises an
-- error: keep tonumber where one may come.
local function num (s)
  return s + 0
end
