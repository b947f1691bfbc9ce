--[[
  Frees an Idempotency-Key claim that will get no answer (its request failed), only if it is
  still that request's own pending claim: a claim another request made since, or an answer
  stored under the key, is left alone (src/pipeline/idempotency.ts).

  KEYS[1] claim  STRING JSON { fingerprint, owner } while pending, then the stored answer

  ARGV[1] the owner named in the claim (a random id per request)

  Returns 1 when the claim was freed, 0 when the key held something else (or nothing).
]]
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, stored = pcall(cjson.decode, raw)
if ok and type(stored) == 'table' and stored.owner == ARGV[1] and stored.status == nil then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
