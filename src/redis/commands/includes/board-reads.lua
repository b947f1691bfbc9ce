-- What the leaderboard's reads (page, member, members, around) share for seasons and history:
-- the board a read ranks by (all time, or a season: the current one or an ended one still
-- kept), and the ranks at the end of the last closed day (rank_change).

-- The board to rank by for `season` ('' all time, 'current', or a season's id): its key and the
-- season's id (0 for all time), or nil when that season is not kept (never was, or is past
-- season_retention). k: { board, seasons, settings, season_current, season_board (the key of
-- season `season`'s archive, when a number) }.
local function ranked_board (k, season, default_retention)
  if season == '' then return k.board, 0 end
  local current = tonumber(redis.call('HGET', k.seasons, 'current') or '1')
  local id = current
  if season ~= 'current' then id = tonumber(season) end
  if id == current then return k.season_current, id end
  if id > current or id < 1 then return nil, id end
  local retention = tonumber(redis.call('HGET', k.settings, 'season_retention') or default_retention)
  if id < current - retention then return nil, id end
  return k.season_board, id
end

-- The 1-based ranks of the members whose records are given at the end of the last closed day
-- (0: no rank then: not a member, or no day closed since it had an index), in order. One
-- BITFIELD_RO for all of them.
local function previous_ranks (ranks_key, records, n)
  local ops, at, o = {}, {}, 0
  local ranks = {}
  for i = 1, n do
    ranks[i] = 0
    local index = records[i] and string.match(records[i], '^%d*:%d*:[^\31]*\31(%d+)')
    if index then
      ops[o + 1] = 'GET'
      ops[o + 2] = 'u24'
      ops[o + 3] = '#' .. index
      o = o + 3
      at[#at + 1] = i
    end
  end
  if o > 0 then
    local got = redis.call('BITFIELD_RO', ranks_key, unpack(ops, 1, o))
    for j, i in ipairs(at) do ranks[i] = got[j] end
  end
  return ranks
end
