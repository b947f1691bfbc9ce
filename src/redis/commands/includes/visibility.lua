-- Who is shown. A hidden member (one who left the server, or asked not to be shown) keeps its XP
-- in every board (all-time, period, season, current and archived) as the score -(xp + 1). Every
-- visible score is >= 0, so hidden members sort below every visible one: reverse ranges,
-- ZREVRANK and pages of visible members are unchanged, a board's total is ZCOUNT board 0 +inf
-- (never ZCARD), and a page stops at that total. The server's hidden hash names why (board
-- member -> reasons), also for a user that is not a member yet, so its first write keeps it hidden.
-- Every script that reads or writes a board score goes through these.
--- @include "numbers"

-- The lowest visible score, and the range a visible total counts.
local VISIBLE_MIN = 0

-- The XP a board score stands for, and whether it is hidden.
local function decode_score (score)
  local s = tonumber(score)
  if s < 0 then return -s - 1, true end
  return s, false
end

local function encode_score (xp, hidden)
  if hidden then return -(xp + 1) end
  return xp
end

-- Whether a board score is a hidden member's.
local function is_hidden (score)
  return tonumber(score) < 0
end

-- The number of visible members of a board.
local function visible_total (key)
  return redis.call('ZCOUNT', key, VISIBLE_MIN, '+inf')
end

-- The visible members ranked `start` to `stop` (0-based, from the top) of a board, and the
-- board's visible total. Never a negative stop: ZREVRANGE would read it from the end, where the
-- hidden members are.
local function visible_range (key, start, stop)
  local total = visible_total(key)
  local last = math.min(tonumber(stop), total - 1)
  if tonumber(start) > last then return {}, total end
  return redis.call('ZREVRANGE', key, start, last), total
end

-- Whether a user who is not on a board yet is hidden (its first write places it hidden).
local function hidden_user (hidden_key, member)
  return redis.call('HEXISTS', hidden_key, member) == 1
end

-- Adds `gained` (> 0) XP to a member's score on a board that counts gains (a period's, a
-- season's), where the member is shown or hidden as `hidden` says; `digits` is `gained` as a
-- string when the caller has it (nil: made here). Returns whether the member is new to the board
-- (its first gain there).
local function add_gain (key, member, gained, hidden, digits)
  if not hidden then
    return num(redis.call('ZINCRBY', key, digits or int(gained), member)) == gained
  end
  if redis.call('ZSCORE', key, member) then
    redis.call('ZINCRBY', key, int(-gained), member)
    return false
  end
  redis.call('ZADD', key, int(-(gained + 1)), member)
  return true
end

-- Moves `members` (1..n; at most a few thousand) to hidden (`hide` true) or shown on board `key`,
-- each score that is not so already; a member not on the board is left off it. Returns the XP of
-- each member that moved, by board member.
local function flip_scores (key, members, n, hide)
  local moved = {}
  if n == 0 then return moved end
  local scores = redis.call('ZMSCORE', key, unpack(members, 1, n))
  local args, a = {}, 0
  for i = 1, n do
    local score = scores[i]
    if score then
      local xp, hidden = decode_score(score)
      if hidden ~= hide then
        args[a + 1] = int(encode_score(xp, hide))
        args[a + 2] = members[i]
        a = a + 2
        moved[members[i]] = xp
      end
    end
  end
  if a > 0 then redis.call('ZADD', key, unpack(args, 1, a)) end
  return moved
end
