--[[
  Many members' records at once (GET /members?ids=…), read consistently with one data version;
  all time, or in a season (includes/board-reads.lua). No per-entry work in Lua beyond the rank
  of each member found and the history index of each record: the caller decodes records. A
  hidden member is not a member here (includes/visibility.lua).

  KEYS[1] board          ZSET board member -> xp
  KEYS[2] members        HASH board member -> record
  KEYS[3] settings       HASH curve, season_retention
  KEYS[4] version        STRING the server's data version
  KEYS[5] week           ZSET the current ISO week's period board
  KEYS[6] month          ZSET the current UTC month's period board
  KEYS[7] ranks_latest   STRING the ranks at the end of the last closed day, by history index
  KEYS[8] seasons        HASH the server's seasons (`current`)
  KEYS[9] season_current ZSET board member -> xp gained in the current season
  KEYS[10] season_board  ZSET the same for the season asked, when ARGV[3] is an id

  ARGV[1] ARGV[2] the window [from, until), Unix ms, in which KEYS[5] and KEYS[6] are current
          (includes/periods.lua)
  ARGV[3] the season: '' (all time), 'current', or an id
  ARGV[4] season_retention when the settings name none
  ARGV[5..] board members (at least one)

  Returns { version|false, now_ms, current, season id (0: all time; -1: not kept), curve|false,
  { xp|false... }, { rank (0-based)|false... }, { record|false... }, { week_xp|false... },
  { month_xp|false... }, { all-time xp|false... }, { rank at the last closed day's end (0: none)... } },
  each list in the order of the board members given (false: not a member, or not on the season's
  board); current is 0 (and nothing follows) when Redis's clock is outside the window, so the
  caller reads again with the periods of now_ms; nothing follows a season of -1.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "periods"
--- @include "board-reads"
--- @include "visibility"
--- @include "shown-curve"

local FIRST = 5
local version = redis.call('GET', KEYS[4])
local now, current = period_clock(ARGV[1], ARGV[2])
if not current then return { version, now, 0 } end
local ranked, season = ranked_board({ board = KEYS[1], seasons = KEYS[8], settings = KEYS[3], season_current = KEYS[9], season_board = KEYS[10] },
  ARGV[3], ARGV[4])
if not ranked then return { version, now, 1, -1 } end
local n = #ARGV - FIRST + 1
local xps = redis.call('ZMSCORE', ranked, unpack(ARGV, FIRST))
local ranks = {}
for i = 1, n do
  if xps[i] and is_hidden(xps[i]) then xps[i] = false end
  ranks[i] = xps[i] and redis.call('ZREVRANK', ranked, ARGV[i + FIRST - 1])
end
local records = redis.call('HMGET', KEYS[2], unpack(ARGV, FIRST))
return {
  version,
  now,
  1,
  season,
  shown_curve(KEYS[3]),
  xps,
  ranks,
  records,
  redis.call('ZMSCORE', KEYS[5], unpack(ARGV, FIRST)),
  redis.call('ZMSCORE', KEYS[6], unpack(ARGV, FIRST)),
  season == 0 and xps or redis.call('ZMSCORE', KEYS[1], unpack(ARGV, FIRST)),
  season == 0 and previous_ranks(KEYS[7], records, n) or {}
}
