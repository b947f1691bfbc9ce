--[[
  One member's record, read consistently with its rank, its XP in the current periods, the
  server's curve and data version; all time, or in a season (its XP and rank there:
  includes/board-reads.lua), with its rank at the end of the last closed day (all time only).

  KEYS[1] board          ZSET board member -> xp
  KEYS[2] members        HASH board member -> record
  KEYS[3] settings       HASH curve, season_retention
  KEYS[4] version        STRING the server's data version
  KEYS[5] week           ZSET the current ISO week's period board
  KEYS[6] month          ZSET the current UTC month's period board
  KEYS[7] ranks_latest   STRING the ranks at the end of the last closed day, by history index
  KEYS[8] seasons        HASH the server's seasons (`current`)
  KEYS[9] season_current ZSET board member -> xp gained in the current season
  KEYS[10] season_board  ZSET the same for the season asked, when ARGV[4] is an id

  ARGV[1] board member
  ARGV[2] ARGV[3] the window [from, until), Unix ms, in which KEYS[5] and KEYS[6] are current
          (includes/periods.lua)
  ARGV[4] the season: '' (all time), 'current', or an id
  ARGV[5] season_retention when the settings name none
  ARGV[6] '1' to read a hidden member too (the write API, the CLI), '' not to: a hidden member
          (includes/visibility.lua) is not a member to public reads

  Returns { version|false, now_ms, current, season id (0: all time; -1: not kept), xp|false,
  rank (0-based)|false (false: hidden), record|false, curve|false, week_xp|false, month_xp|false, all-time xp,
  rank at the last closed day's end (0: none) }: current is 0 (and nothing follows) when Redis's
  clock is outside the window, so the caller reads again with the periods of now_ms; the season
  is -1, or xp false, and nothing follows, when the season is not kept or the user is not on its
  board.
  The curve is its name, or custom:<settings epoch> for a custom one (includes/shown-curve.lua).
]]
--- @include "periods"
--- @include "board-reads"
--- @include "visibility"
--- @include "shown-curve"

local version = redis.call('GET', KEYS[4])
local now, current = period_clock(ARGV[2], ARGV[3])
if not current then return { version, now, 0 } end
local ranked, season = ranked_board({ board = KEYS[1], seasons = KEYS[8], settings = KEYS[3], season_current = KEYS[9], season_board = KEYS[10] },
  ARGV[4], ARGV[5])
if not ranked then return { version, now, 1, -1 } end
local score = redis.call('ZSCORE', ranked, ARGV[1])
if not score then return { version, now, 1, season, false } end
local xp, hidden = decode_score(score)
if hidden and ARGV[6] ~= '1' then return { version, now, 1, season, false } end
local record = redis.call('HGET', KEYS[2], ARGV[1])
-- A score of a board (a period's, all time) as the XP it stands for, shown or hidden.
local function xp_of (key)
  local s = redis.call('ZSCORE', key, ARGV[1])
  return s and int(decode_score(s))
end
return {
  version,
  now,
  1,
  season,
  int(xp),
  not hidden and redis.call('ZREVRANK', ranked, ARGV[1]),
  record,
  shown_curve(KEYS[3]),
  xp_of(KEYS[5]),
  xp_of(KEYS[6]),
  season == 0 and int(xp) or xp_of(KEYS[1]),
  (season == 0 and not hidden) and previous_ranks(KEYS[7], { record }, 1)[1] or 0
}
