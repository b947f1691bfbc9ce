--[[
  The members ranked around one member (GET /members/{user_id}/around): ranks r-radius ..
  r+radius, clipped to the board, read consistently with the server's curve and data version;
  all time, or in a season (includes/board-reads.lua), with each entry's rank at the end of the
  last closed day (all time only). No per-entry work in Lua but the history index of each
  record: the caller decodes board members and records. A hidden member is not a member here
  (includes/visibility.lua).

  KEYS[1] board          ZSET board member -> xp
  KEYS[2] members        HASH board member -> record
  KEYS[3] settings       HASH curve, season_retention
  KEYS[4] version        STRING the server's data version
  KEYS[5] ranks_latest   STRING the ranks at the end of the last closed day, by history index
  KEYS[6] seasons        HASH the server's seasons (`current`)
  KEYS[7] season_current ZSET board member -> xp gained in the current season
  KEYS[8] season_board   ZSET the same for the season asked, when ARGV[3] is an id

  ARGV[1] board member
  ARGV[2] radius, an integer from 0
  ARGV[3] the season: '' (all time), 'current', or an id
  ARGV[4] season_retention when the settings name none

  Returns { version|false, season id (0: all time), total, curve|false, rank (0-based)|false,
  first (0-based), { board member... }, { xp shown... }, { all-time xp... }, { record|false... },
  { rank at the last closed day's end (0: none)... } } in rank order; rank is false (and nothing
  follows) when the user is not on the board; { version|false, -1 } when the season is not kept.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "board-reads"
--- @include "visibility"
--- @include "shown-curve"

local version = redis.call('GET', KEYS[4])
local ranked, season = ranked_board({ board = KEYS[1], seasons = KEYS[6], settings = KEYS[3], season_current = KEYS[7], season_board = KEYS[8] },
  ARGV[3], ARGV[4])
if not ranked then return { version, -1 } end
local score = redis.call('ZSCORE', ranked, ARGV[1])
if not score or is_hidden(score) then return { version, season, 0, false, false } end
local rank = redis.call('ZREVRANK', ranked, ARGV[1])
local radius = tonumber(ARGV[2])
local first = rank - radius
if first < 0 then first = 0 end
local entries, total = visible_range(ranked, first, rank + radius)
local shown = redis.call('ZMSCORE', ranked, unpack(entries))
local records = redis.call('HMGET', KEYS[2], unpack(entries))
return {
  version,
  season,
  total,
  shown_curve(KEYS[3]),
  rank,
  first,
  entries,
  shown,
  season == 0 and shown or redis.call('ZMSCORE', KEYS[1], unpack(entries)),
  records,
  season == 0 and previous_ranks(KEYS[5], records, #entries) or {}
}
