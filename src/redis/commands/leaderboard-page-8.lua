--[[
  One page of the leaderboard, all time or of a season (XP gained in it: includes/board-reads.lua),
  read consistently with the server's curve and data version, with each entry's rank at the end of
  the last closed day (all time only: rank_change). No per-entry work in Lua but the history
  index of each record: the caller decodes board members and records. Hidden members are
  neither counted nor listed (includes/visibility.lua).

  KEYS[1] board          ZSET board member -> xp
  KEYS[2] members        HASH board member -> record
  KEYS[3] settings       HASH curve, season_retention
  KEYS[4] version        STRING the server's data version
  KEYS[5] ranks_latest   STRING the ranks at the end of the last closed day, by history index
  KEYS[6] seasons        HASH the server's seasons (`current`)
  KEYS[7] season_current ZSET board member -> xp gained in the current season
  KEYS[8] season_board   ZSET the same for the season asked, when ARGV[3] is an id

  ARGV[1] first 0-based rank of the page
  ARGV[2] last 0-based rank of the page
  ARGV[3] the season: '' (all time), 'current', or an id
  ARGV[4] season_retention when the settings name none

  Returns { version|false, season id (0: all time), total, curve|false, { board member... },
  { xp shown (the season's, or all time)... }, { all-time xp... }, { record|false... },
  { rank at the last closed day's end (0: none)... } } in rank order; or { version|false, -1 }
  when the season is not kept.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "board-reads"
--- @include "visibility"
--- @include "shown-curve"

local version = redis.call('GET', KEYS[4])
local ranked, season = ranked_board({ board = KEYS[1], seasons = KEYS[6], settings = KEYS[3], season_current = KEYS[7], season_board = KEYS[8] },
  ARGV[3], ARGV[4])
if not ranked then return { version, -1 } end
local entries, total = visible_range(ranked, ARGV[1], ARGV[2])
local result = {
  version,
  season,
  total,
  shown_curve(KEYS[3]),
  entries
}
local n = #entries
if n > 0 then
  result[6] = redis.call('ZMSCORE', ranked, unpack(entries))
  result[7] = season == 0 and result[6] or redis.call('ZMSCORE', KEYS[1], unpack(entries))
  result[8] = redis.call('HMGET', KEYS[2], unpack(entries))
  result[9] = season == 0 and previous_ranks(KEYS[5], result[8], n) or {}
else
  result[6], result[7], result[8], result[9] = {}, {}, {}, {}
end
return result
