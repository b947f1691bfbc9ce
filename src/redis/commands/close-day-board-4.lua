--[[
  Close, the snapshot of the day's end: a chunk of the board (ZSCAN returns every member on it
  throughout the scan). A member changed since the day's end has its value there in a later
  day-start hash: the earlier ones are in the snapshot already, and today's, which writes still
  fill, is read here for the chunk's members. Any other member holds its value at the day's end
  on the board. Members hidden (a negative score) are not on the visible board.

  KEYS[1] lease     STRING the closing lease
  KEYS[2] board     ZSET board member -> xp
  KEYS[3] day_start HASH today's day-start hash
  KEYS[4] snapshot  ZSET the board at the day's end, being built

  ARGV[1] the caller's lease token
  ARGV[2] the lease's length, ms
  ARGV[3] the ZSCAN cursor ('0' to start)
  ARGV[4] how many members to read

  Returns { 1, next cursor ('0': done) }, or { -6 } when the lease was lost.
]]
--- @include "history"

if not hold_lease(KEYS[1], ARGV[1], ARGV[2]) then return { LEASE_LOST } end
local scan = redis.call('ZSCAN', KEYS[2], ARGV[3], 'COUNT', ARGV[4])
local flat = scan[2]
local members, m = {}, 0
for i = 1, #flat, 2 do
  m = m + 1
  members[m] = flat[i]
end
local pairs, n = {}, 0
if m > 0 then
  local later = redis.call('HMGET', KEYS[3], unpack(members, 1, m))
  for i = 1, m do
    local score = later[i] and start_score(later[i]) or flat[2 * i]
    if later[i] or tonumber(score) >= 0 then
      pairs[n + 1] = score
      pairs[n + 2] = members[i]
      n = n + 2
    end
  end
end
add_new(KEYS[4], pairs, n)
return { CLOSE_DONE, scan[1] }
