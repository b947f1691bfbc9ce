// The API key store against a real redis-server: keys shown once and stored only as SHA-256,
// checked by Redis's clock, revoked, expiring, listed per server.
import t from 'tap'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { monitorOf, redisFixture } from './helpers/redis-server.js'
import { allKeys, snapshot } from './helpers/redis-snapshot.js'
import { redisNow } from '../src/redis/client.js'
import { ApiKeyStore, apiKeyId, hashApiKey } from '../src/api-keys/api-keys.js'
import { PLANS } from '../src/plans.js'
import { ApiKeyInactiveError, ApiKeyNotFoundError, InvalidParameterError } from '../src/errors.js'

const { redis, raw, keys } = await redisFixture(t, 'ak')
const store = new ApiKeyStore(redis, keys)
const KEY_SHAPE = /^lbk_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/

let lastGuild = 3000
const newGuild = (): string => String(++lastGuild)

/** Every key name and every stored value (field names too) in the whole Redis. */
async function everythingStored (): Promise<string[]> {
  const out: string[] = []
  for (const key of await allKeys(raw)) {
    out.push(key)
    const type = await raw.type(key)
    if (type === 'hash') out.push(...Object.entries(await raw.hgetall(key)).flat())
    else if (type === 'set') out.push(...await raw.smembers(key))
    else if (type === 'string') out.push(await raw.get(key) ?? '')
    else if (type === 'zset') out.push(...await raw.zrange(key, 0, '-1', 'WITHSCORES'))
    else if (type === 'list') out.push(...await raw.lrange(key, 0, -1))
    else out.push(`<${type}>`)
  }
  return out
}

t.test('a created key reads lbk_<16 hex id>_<32 base64url>, and is different every time', async (t) => {
  const g = newGuild()
  const created = await Promise.all(Array.from({ length: 20 }, async () => await store.create({ guildId: g, plan: 'free' })))
  for (const c of created) {
    t.match(c.key, KEY_SHAPE)
    t.equal(apiKeyId(c.key), c.id, 'the id is embedded in the key')
    t.equal(c.key.slice(4, 20), c.id)
  }
  t.equal(new Set(created.map((c) => c.key)).size, 20, 'all keys differ')
  t.equal(new Set(created.map((c) => c.id)).size, 20, 'all ids differ')
})

t.test('only the SHA-256 of a key is stored: the plaintext (or its secret) appears nowhere in Redis', async (t) => {
  const g = newGuild()
  const before = await redisNow(raw)
  const created = await store.create({ guildId: g, plan: 'starter', name: 'dashboard', expiresInSeconds: 3600 })
  t.equal(created.guildId, g)
  t.equal(created.plan, 'starter')
  t.equal(created.name, 'dashboard')
  t.ok(created.createdAt.getTime() >= before, 'created_at by Redis\'s clock')
  t.equal(created.expiresAt?.getTime(), created.createdAt.getTime() + 3_600_000)

  const secret = created.key.slice(21)
  t.equal(secret.length, 32)
  const sha = createHash('sha256').update(created.key).digest('hex')
  t.equal(hashApiKey(created.key), sha)
  const record = await raw.hgetall(keys.apiKey(created.id))
  t.equal(record.hash, sha, 'the record holds the SHA-256 (hex) of the key')
  t.same(Object.keys(record).sort(), ['created_at', 'expires_at', 'guild_id', 'hash', 'name', 'plan'])
  t.same(await raw.smembers(keys.guild(g).apiKeys), [created.id], 'the server lists the id')

  // A check stamps last_used_at; scan again afterwards, in case that writes more.
  t.equal((await store.check(created.key)).status, 'ok')
  const stored = await everythingStored()
  t.ok(stored.includes(sha), 'the scan sees the stored hash (so it would see a plaintext too)')
  t.notOk(stored.some((s) => s.includes(created.key)), 'the plaintext key is stored nowhere')
  t.notOk(stored.some((s) => s.includes(secret)), 'the secret part is stored nowhere')
})

t.test('check() of a valid key is ok, with its server and plan', async (t) => {
  for (const plan of PLANS) {
    const g = newGuild()
    const created = await store.create({ guildId: g, plan })
    const result = await store.check(created.key)
    t.match(result, { status: 'ok', id: created.id, guildId: g, plan, expiresAt: null })
    t.ok(typeof result.redisNow === 'number' && Math.abs(result.redisNow - await redisNow(raw)) < 2000, 'redisNow is Redis\'s clock')
  }
})

t.test('check() of a key with the right id but a wrong secret is unknown, and stamps nothing', async (t) => {
  const created = await store.create({ guildId: newGuild(), plan: 'free' })
  const last = created.key.at(-1) === 'A' ? 'B' : 'A'
  const forged = created.key.slice(0, -1) + last
  t.match(forged, KEY_SHAPE, 'the forged key is well formed')
  t.equal((await store.check(forged)).status, 'unknown')
  t.equal(await raw.hget(keys.apiKey(created.id), 'last_used_at'), null, 'last_used_at not stamped')
  const otherId = `lbk_${'0'.repeat(16)}_${created.key.slice(21)}`
  t.equal((await store.check(otherId)).status, 'unknown', 'an id with no record')
})

t.test('check() of a malformed key is unknown and never reaches Redis', async (t) => {
  const created = await store.create({ guildId: newGuild(), plan: 'free' })
  const malformed = [
    '', 'lbk_', 'abc', created.key.toUpperCase(), created.key.slice(0, -1), `${created.key}x`, ` ${created.key}`,
    created.key.replace('lbk_', 'lbx_'), created.key.replace('lbk_', ''), `lbk_${'g'.repeat(16)}_${created.key.slice(21)}`,
    created.key.slice(0, 20) + '-' + created.key.slice(21), `${created.key}\n`
  ]
  // The marker's connection is opened before MONITOR starts, so its handshake is not seen.
  const markerClient = raw.duplicate()
  t.teardown(() => { markerClient.disconnect() })
  await markerClient.ping()
  await redis.ping()
  const monitor = await monitorOf(raw)
  t.teardown(() => { monitor.disconnect() })
  const seen: string[][] = []
  monitor.on('monitor', (_time: string, args: string[]) => { seen.push(args) })
  const results = []
  for (const key of malformed) results.push(await store.check(key))
  // A marker sent after the checks: once MONITOR has shown it, it has shown everything before it.
  async function drain (): Promise<string[][]> {
    const marker = `marker-${Math.random()}`
    await markerClient.echo(marker)
    while (!seen.some((args) => args.includes(marker))) await sleep(10)
    return seen.splice(0).filter((args) => !args.includes(marker))
  }
  t.same(await drain(), [], 'no command reached Redis during the checks')
  t.same(results, malformed.map(() => ({ status: 'unknown', redisNow: null })))
  // The control: a well-formed key does reach Redis, and MONITOR shows it.
  await store.check(created.key)
  t.ok((await drain()).some((args) => /^eval/i.test(args[0] ?? '')), 'a well-formed key is looked up by a script')
})

t.test('a revoked key checks as revoked, is listed with revokedAt, and revoke is idempotent', async (t) => {
  const g = newGuild()
  const created = await store.create({ guildId: g, plan: 'professional' })
  t.equal((await store.check(created.key)).status, 'ok')
  const before = await redisNow(raw)
  const revoked = await store.revoke(created.id)
  const after = await redisNow(raw)
  t.ok(revoked.revokedAt !== null && revoked.revokedAt.getTime() >= before && revoked.revokedAt.getTime() <= after, 'revokedAt by Redis\'s clock')
  t.equal((await store.check(created.key)).status, 'revoked')
  const listed = await store.list(g)
  t.equal(listed.length, 1)
  t.equal(listed[0]?.id, created.id)
  t.same(listed[0]?.revokedAt, revoked.revokedAt, 'listed with its revokedAt')
  const again = await store.revoke(created.id)
  t.same(again.revokedAt, revoked.revokedAt, 'a second revoke keeps the first date')
  const forged = created.key.slice(0, -1) + (created.key.at(-1) === 'A' ? 'B' : 'A')
  t.equal((await store.check(forged)).status, 'unknown', 'a wrong secret for a revoked id is still unknown')
})

t.test('revoke of an unknown or malformed id is ApiKeyNotFoundError and writes nothing', async (t) => {
  await store.create({ guildId: newGuild(), plan: 'free' })
  for (const id of ['0123456789abcdef', 'nope', '', '../x']) {
    const before = await snapshot(raw)
    await t.rejects(store.revoke(id), ApiKeyNotFoundError, JSON.stringify(id))
    t.same(await snapshot(raw), before, `${JSON.stringify(id)}: Redis unchanged`)
  }
})

t.test('a key created with expiresInSeconds 1 is ok at once and expired after ~1.1 s', async (t) => {
  const created = await store.create({ guildId: newGuild(), plan: 'free', expiresInSeconds: 1 })
  t.equal(created.expiresAt?.getTime(), created.createdAt.getTime() + 1000)
  const first = await store.check(created.key)
  t.equal(first.status, 'ok')
  t.equal(first.status === 'ok' ? first.expiresAt : null, created.createdAt.getTime() + 1000, 'check reports the expiry')
  await sleep(1100)
  const second = await store.check(created.key)
  t.equal(second.status, 'expired')
  t.ok(second.redisNow !== null && second.redisNow >= created.createdAt.getTime() + 1000)
})

t.test('check() stamps last_used_at by Redis\'s clock', async (t) => {
  const created = await store.create({ guildId: newGuild(), plan: 'free' })
  t.equal((await store.get(created.id))?.lastUsedAt, null, 'never used')
  const result = await store.check(created.key)
  const info = await store.get(created.id)
  t.equal(info?.lastUsedAt?.getTime(), result.redisNow, 'stamped with the time of the check')
  await sleep(5)
  const later = await store.check(created.key)
  t.equal((await store.get(created.id))?.lastUsedAt?.getTime(), later.redisNow, 'moves with each check')
  t.ok((later.redisNow ?? 0) > (result.redisNow ?? 0))
})

t.test('list() is per server, newest first, and never holds the key or its hash', async (t) => {
  const g = newGuild()
  const other = newGuild()
  const mine = []
  for (let i = 0; i < 4; i++) {
    mine.push(await store.create({ guildId: g, plan: 'free', name: `key ${i}` }))
    await sleep(3) // distinct creation times
  }
  const theirs = await store.create({ guildId: other, plan: 'starter' })
  const listed = await store.list(g)
  t.same(listed.map((k) => k.id), mine.map((k) => k.id).reverse(), 'newest first')
  t.same(listed.map((k) => k.name), ['key 3', 'key 2', 'key 1', 'key 0'])
  t.notOk(listed.some((k) => k.id === theirs.id), 'no key of another server')
  t.same((await store.list(other)).map((k) => k.id), [theirs.id])
  t.same(await store.list(newGuild()), [], 'a server without keys lists none')
  const text = JSON.stringify(listed)
  for (const k of mine) {
    t.notOk(text.includes(k.key), 'the plaintext is not listed')
    t.notOk(text.includes(hashApiKey(k.key)), 'the hash is not listed')
  }
  for (const k of listed) t.notOk('key' in k || 'hash' in k, 'no key or hash property')
})

t.test('create() validates plan, guild id, name and expiry, and writes nothing when refused', async (t) => {
  const bad: Array<[string, Parameters<ApiKeyStore['create']>[0]]> = [
    ['unknown plan', { guildId: '1', plan: 'enterprise' }],
    ['capitalised plan', { guildId: '1', plan: 'Free' }],
    ['empty plan', { guildId: '1', plan: '' }],
    ['guild with a leading zero', { guildId: '01', plan: 'free' }],
    ['guild of 21 digits', { guildId: '1'.repeat(21), plan: 'free' }],
    ['guild with letters', { guildId: '12ab', plan: 'free' }],
    ['blank name', { guildId: '1', plan: 'free', name: '  ' }],
    ['name of 101 characters', { guildId: '1', plan: 'free', name: 'n'.repeat(101) }],
    ['expiry 0', { guildId: '1', plan: 'free', expiresInSeconds: 0 }],
    ['negative expiry', { guildId: '1', plan: 'free', expiresInSeconds: -5 }],
    ['fractional expiry', { guildId: '1', plan: 'free', expiresInSeconds: 1.5 }]
  ]
  await store.create({ guildId: newGuild(), plan: 'free' })
  for (const [what, input] of bad) {
    const before = await snapshot(raw)
    await t.rejects(store.create(input), InvalidParameterError, what)
    t.same(await snapshot(raw), before, `${what}: Redis unchanged`)
  }
  for (const plan of PLANS) {
    t.equal((await store.create({ guildId: newGuild(), plan })).plan, plan, `plan ${plan} accepted`)
  }
})

t.test('rotate() gives a key a new secret: the old key is unknown at once, the new one checks ok with everything else kept', async (t) => {
  const g = newGuild()
  const created = await store.create({ guildId: g, plan: 'starter', name: 'bot', expiresInSeconds: 3600 })
  await store.check(created.key)
  const before = await redisNow(raw)
  const rotated = await store.rotate(created.id)
  t.match(rotated.key, KEY_SHAPE)
  t.not(rotated.key, created.key, 'a new key')
  t.equal(rotated.id, created.id, 'the id is kept')
  t.equal(apiKeyId(rotated.key), created.id, 'and embedded in the new key')
  t.match(rotated, { guildId: g, plan: 'starter', name: 'bot', expiresAt: created.expiresAt, createdAt: created.createdAt, revokedAt: null })
  t.ok(rotated.rotatedAt !== null && rotated.rotatedAt.getTime() >= before, 'rotatedAt by Redis\'s clock')

  t.equal((await store.check(created.key)).status, 'unknown', 'the old key stops working')
  t.match(await store.check(rotated.key), { status: 'ok', id: created.id, guildId: g, plan: 'starter', expiresAt: created.expiresAt?.getTime() })
  t.same((await store.list(g)).map((k) => [k.id, k.rotatedAt?.getTime()]), [[created.id, rotated.rotatedAt?.getTime()]], 'still one key, listed with rotatedAt')

  const record = await raw.hgetall(keys.apiKey(created.id))
  t.equal(record.hash, hashApiKey(rotated.key), 'the new key is stored as its SHA-256')
  const stored = await everythingStored()
  t.notOk(stored.some((value) => value.includes(rotated.key.slice(21))), 'its secret is stored nowhere')
  t.notOk(stored.includes(hashApiKey(created.key)), 'the old hash is gone')

  const again = await store.rotate(created.id)
  t.equal((await store.check(rotated.key)).status, 'unknown', 'each rotation retires the key before it')
  t.equal((await store.check(again.key)).status, 'ok')
})

t.test('setPlan() moves a key to another plan and keeps its secret; a bad plan writes nothing', async (t) => {
  const g = newGuild()
  const created = await store.create({ guildId: g, plan: 'free', name: 'dash' })
  const changed = await store.setPlan(created.id, 'professional')
  t.match(changed, { id: created.id, plan: 'professional', name: 'dash', guildId: g })
  t.match(await store.check(created.key), { status: 'ok', plan: 'professional' }, 'the same key, on the new plan')
  t.equal((await store.get(created.id))?.plan, 'professional')
  for (const plan of ['enterprise', 'Free', '']) {
    const before = await snapshot(raw)
    await t.rejects(store.setPlan(created.id, plan), InvalidParameterError, JSON.stringify(plan))
    t.same(await snapshot(raw), before, `${JSON.stringify(plan)}: Redis unchanged`)
  }
})

t.test('rotate() and setPlan() refuse a revoked, an expired or an unknown key, and write nothing', async (t) => {
  const g = newGuild()
  const revoked = await store.create({ guildId: g, plan: 'free' })
  await store.revoke(revoked.id)
  const expired = await store.create({ guildId: g, plan: 'free', expiresInSeconds: 1 })
  await sleep(1100)
  const cases: Array<[string, () => Promise<unknown>, new (...args: never[]) => Error, RegExp]> = [
    ['rotate a revoked key', async () => await store.rotate(revoked.id), ApiKeyInactiveError, /cannot rotate API key \w+: it was revoked/],
    ['set the plan of a revoked key', async () => await store.setPlan(revoked.id, 'starter'), ApiKeyInactiveError, /it was revoked/],
    ['rotate an expired key', async () => await store.rotate(expired.id), ApiKeyInactiveError, /it has expired/],
    ['set the plan of an expired key', async () => await store.setPlan(expired.id, 'starter'), ApiKeyInactiveError, /it has expired/],
    ['rotate an unknown id', async () => await store.rotate('0123456789abcdef'), ApiKeyNotFoundError, /no API key with id/],
    ['set the plan of a malformed id', async () => await store.setPlan('../x', 'free'), ApiKeyNotFoundError, /no API key with id/]
  ]
  for (const [what, run, type, message] of cases) {
    const before = await snapshot(raw)
    await t.rejects(run(), type, what)
    await t.rejects(run(), { message }, what)
    t.same(await snapshot(raw), before, `${what}: Redis unchanged`)
  }
  t.equal((await store.check(revoked.key)).status, 'revoked', 'the revoked key stays revoked')
})
