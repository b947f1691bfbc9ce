// Conditional requests, caching and compression on the read endpoints: strong ETags that move
// with every kind of write and agree across instances, 304s that cost no quota within the
// per-instance bound, bodies served from the instance's cache that stay exact, gzip and br.
import t, { type Test } from 'tap'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { Redis } from 'ioredis'
import { RedisServer, scriptCalls, scriptSha } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { COMPRESSED_FORM_OVERHEAD, ENTRY_OVERHEAD, ResponseCache } from '../src/http/response-cache.js'
import { entityTag, matchingTag } from '../src/http/etag.js'
import { dailyRecord } from '../src/seed/daily-claims.js'

// The subtests run side by side: each fleet works under a key prefix of its own, and the three
// that count a whole server's commands (MONITOR, INFO stats) have a redis-server of their own.
t.jobs = 6

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

/** A redis-server for one subtest alone: for counts of the whole server's commands. */
async function ownServer (t: Test): Promise<RedisServer> {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  return own
}

const GUILD = '1200000000000000001'
const API = `/api/v1/servers/${GUILD}`
const READS = [
  `${API}/leaderboard`, `${API}/leaderboard?limit=100`, `${API}/members/11`, `${API}/stats`,
  `${API}/leaderboard?period=week`, `${API}/members/11/around`, `${API}/members?ids=11,12,99`
]
let prefixes = 0

interface Fixture extends TestApp { key: string }

/** `count` app instances sharing one Redis prefix (as a fleet shares a Redis), and a key. */
async function fleet (t: Test, count: number, overrides: Record<string, unknown> = {}, redisUrl = server.url): Promise<{ apps: Fixture[], key: string }> {
  const redisPrefix = `cond${process.pid}-${prefixes++}`
  const apps: TestApp[] = []
  for (let i = 0; i < count; i++) apps.push(await buildTestApp(t, redisUrl, { redisPrefix, ...overrides }))
  const first = apps[0] as TestApp
  const { key } = await first.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 40; i++) {
    await first.writer.awardXp({ guildId: GUILD, userId: String(10 + i), xp: 100 * i, username: `member number ${i}` })
  }
  return { apps: apps.map((a) => ({ ...a, key })), key }
}

async function get (app: TestApp['app'], url: string, headers: Record<string, string>) {
  return await app.inject({ url, headers })
}

t.test('every 200 of a read endpoint carries a strong ETag and Cache-Control: private, no-cache', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  for (const url of READS) {
    const res = await get(a!.app, url, { 'x-api-key': key })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers.etag, /^"[^"]+"$/, `${url}: a strong tag (no W/)`)
    t.equal(res.headers['cache-control'], 'private, no-cache')
    t.equal(res.headers.vary, 'accept-encoding')
  }
})

t.test('with no write the ETag stays the same, on every instance; the same tag revalidates anywhere', async (t) => {
  const { apps: [a, b], key } = await fleet(t, 2)
  for (const url of READS) {
    const first = await get(a!.app, url, { 'x-api-key': key })
    const again = await get(a!.app, url, { 'x-api-key': key })
    const other = await get(b!.app, url, { 'x-api-key': key })
    t.equal(again.headers.etag, first.headers.etag, `${url}: same instance`)
    t.equal(other.headers.etag, first.headers.etag, `${url}: another instance`)
    t.equal(other.body, first.body)
    const revalidated = await get(b!.app, url, { 'x-api-key': key, 'if-none-match': String(first.headers.etag) })
    t.equal(revalidated.statusCode, 304, `${url}: 304 on the other instance`)
  }
})

t.test('the ETag changes after every kind of write, and the body (cached or not) shows the write', async (t) => {
  const { apps: [a, b], key } = await fleet(t, 2)
  const writes: Array<[string, () => Promise<unknown>]> = [
    ['award', async () => await a!.writer.awardXp({ guildId: GUILD, userId: '11', xp: 5 })],
    ['set xp', async () => await a!.writer.setXp({ guildId: GUILD, userId: '12', xp: 7 })],
    ['rename', async () => await a!.writer.setUsername({ guildId: GUILD, userId: '13', username: 'renamed' })],
    ['daily claim', async () => await a!.writer.claimDaily({ guildId: GUILD, userId: '14' })],
    ['remove', async () => await a!.writer.removeMember({ guildId: GUILD, userId: '15' })],
    ['curve', async () => { await a!.writer.configureGuild(GUILD, { curve: 'flat' }) }],
    ['multiplier', async () => { await a!.writer.configureGuild(GUILD, { multiplier: '1.5' }) }],
    ['bulk set', async () => await a!.writer.bulkSetMembers(GUILD, [{ userId: '16', xp: 1, username: 'bulk', daily: dailyRecord([Date.now() - 1000]) }])]
  ]
  let before = new Map<string, { etag: string, body: string }>()
  const read = async (): Promise<Map<string, { etag: string, body: string }>> => {
    const seen = new Map<string, { etag: string, body: string }>()
    for (const url of READS) {
      const res = await get(a!.app, url, { 'x-api-key': key })
      t.equal(res.statusCode, 200)
      seen.set(url, { etag: String(res.headers.etag), body: res.body })
      // Another instance, which has not cached this version, reads the same body.
      t.equal((await get(b!.app, url, { 'x-api-key': key })).body, res.body, `${url}: instances agree`)
    }
    return seen
  }
  before = await read()
  for (const [what, write] of writes) {
    await write()
    const after = await read()
    for (const url of READS) {
      t.not(after.get(url)?.etag, before.get(url)?.etag, `${what}: ${url} has a new ETag`)
      const conditional = await get(a!.app, url, { 'x-api-key': key, 'if-none-match': before.get(url)?.etag ?? '' })
      t.equal(conditional.statusCode, 200, `${what}: ${url}, the old tag no longer matches`)
    }
    before = after
  }
  const board = JSON.parse(before.get(`${API}/leaderboard?limit=100`)?.body ?? '{}') as { data: Array<{ user_id: string, username: string, xp: number }> }
  t.notOk(board.data.some((e) => e.user_id === '15'), 'the removed member is gone from the cached page')
  t.match(board.data.find((e) => e.user_id === '13'), { username: 'renamed' })
  t.match(board.data.find((e) => e.user_id === '16'), { username: 'bulk', xp: 1 })
  t.match(JSON.parse(before.get(`${API}/stats`)?.body ?? '{}'), { xp_curve: 'flat', xp_multiplier: 1.5 })
})

t.test('a URL served before is served again from the cache (before validation and the handler): the same answer, to its own server only', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  const other = await a!.apiKeys.create({ guildId: '1200000000000000002', plan: 'professional' })
  const varying = new Set(['x-request-id', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
  const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !varying.has(name)))
  for (const url of READS) {
    for (const encoding of ['identity', 'gzip', 'br']) {
      const headers = { 'x-api-key': key, 'accept-encoding': encoding }
      const [first, second, third] = [await get(a!.app, url, headers), await get(a!.app, url, headers), await get(a!.app, url, headers)]
      t.equal(first.statusCode, 200, url)
      for (const again of [second, third]) {
        t.equal(again.statusCode, 200)
        t.ok(again.rawPayload.equals(first.rawPayload), `${url} (${encoding}): the same bytes`)
        t.same(stable(again.headers), stable(first.headers), `${url} (${encoding}): the same headers`)
      }
      const revalidated = await get(a!.app, url, { ...headers, 'if-none-match': String(first.headers.etag) })
      t.equal(revalidated.statusCode, 304, `${url}: a 304 for the tag`)
    }
    const foreign = await get(a!.app, url, { 'x-api-key': other.key })
    t.equal(foreign.statusCode, 403, `${url}: another server's key is still refused`)
    t.equal(foreign.json().code, 'forbidden')
  }
  const spelled = await get(a!.app, `${API}/leaderboard?page=1&limit=10`, { 'x-api-key': key })
  t.equal(spelled.body, (await get(a!.app, `${API}/leaderboard`, { 'x-api-key': key })).body, 'another spelling of a served read: the same body')
  const invalid = await get(a!.app, `${API}/leaderboard?limit=abc`, { 'x-api-key': key })
  t.equal(invalid.statusCode, 400, 'an invalid URL is still refused')
  await a!.writer.awardXp({ guildId: GUILD, userId: '11', xp: 100_000 })
  const after = await get(a!.app, `${API}/leaderboard`, { 'x-api-key': key })
  t.equal(after.json().data[0].user_id, '11', 'after a write, the served URL shows it')
})

/** The read script behind one of READS. */
function readScriptOf (url: string): string {
  const byPath: Array<[RegExp, string]> = [[/around/, 'around'], [/ids=/, 'memberBatch'], [/members\//, 'member'], [/stats/, 'guildStats'], [/period=/, 'periodPage']]
  return byPath.find(([pattern]) => pattern.test(url))?.[1] ?? 'leaderboardPage'
}

t.test('a repeated request takes the cached answer: validated, then no read script', async (t) => {
  const own = await ownServer(t) // MONITOR sees the whole server's commands
  const a = await buildTestApp(t, own.url, { redisPrefix: `cond${process.pid}-fast` })
  const { key } = await a.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  for (let i = 1; i <= 20; i++) await a.writer.awardXp({ guildId: GUILD, userId: String(10 + i), xp: 100 * i })
  for (const url of READS) {
    const first = await get(a.app, url, { 'x-api-key': key })
    t.equal(first.statusCode, 200)
    const reads = await scriptCalls(own.url, scriptSha(readScriptOf(url)), async () => {
      for (let i = 0; i < 3; i++) {
        const again = await get(a.app, url, { 'x-api-key': key })
        t.equal(again.statusCode, 200)
        t.equal(again.body, first.body)
      }
    })
    t.equal(reads, 0, `${url}: the next three read nothing from Redis but the limiter and the version`)
  }
})

t.test('the cache key is derived from every validated parameter: each variant of a read gets its own body', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  const uncached = await buildTestApp(t, server.url, { redisPrefix: a!.config.redisPrefix, responseCacheMb: 0 })
  const variants = ['', '?limit=5', '?limit=5&page=2', '?page=2&limit=5', '?period=week', '?period=month', '?period=last_week', '?limit=3&period=week']
  for (let round = 0; round < 2; round++) {
    for (const query of variants) {
      const url = `${API}/leaderboard${query}`
      const cached = await get(a!.app, url, { 'x-api-key': key })
      t.equal(cached.body, (await get(uncached.app, url, { 'x-api-key': key })).body, `${url} (round ${round + 1}): the body a read without a cache gives`)
    }
  }
  for (const radius of ['1', '2']) {
    const url = `${API}/members/15/around?radius=${radius}`
    t.equal((await get(a!.app, url, { 'x-api-key': key })).body, (await get(uncached.app, url, { 'x-api-key': key })).body, url)
  }
})

t.test('after a write, concurrent requests for one URL on an instance share one read of Redis (not with the cache off)', async (t) => {
  const page = scriptSha('leaderboardPage')
  const own = await ownServer(t) // MONITOR sees the whole server's commands
  for (const [responseCacheMb, expected] of [[64, 1], [0, 10]] as const) {
    const { apps: [a], key } = await fleet(t, 1, { responseCacheMb }, own.url)
    const url = `${API}/leaderboard?limit=20`
    await get(a!.app, url, { 'x-api-key': key })
    await a!.writer.awardXp({ guildId: GUILD, userId: '12', xp: 1_000_000 })
    let answers: Awaited<ReturnType<typeof get>>[] = []
    const calls = await scriptCalls(own.url, page, async () => {
      answers = await Promise.all(Array.from({ length: 10 }, async () => await get(a!.app, url, { 'x-api-key': key })))
    })
    t.equal(calls, expected, `cache ${responseCacheMb} MB: ${expected} page script call(s) for 10 requests`)
    t.ok(answers.every((r) => r.statusCode === 200 && r.body === answers[0]?.body), 'the same answer to each')
    t.equal(answers[0]?.json().data[0].user_id, '12', 'and it shows the write')
  }
})

t.test('If-None-Match: lists, weak forms and * match; other tags do not; a 304 has no body and the headers', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  const url = `${API}/stats`
  const etag = String((await get(a!.app, url, { 'x-api-key': key })).headers.etag)
  for (const header of [etag, `"nope", ${etag}`, `W/${etag}`, '*']) {
    const res = await get(a!.app, url, { 'x-api-key': key, 'if-none-match': header })
    t.equal(res.statusCode, 304, header)
    t.equal(res.body, '')
    t.equal(res.headers.etag, header === '*' ? etag : etag, 'the current tag')
    t.equal(res.headers['cache-control'], 'private, no-cache')
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) t.ok(res.headers[name] !== undefined, name)
  }
  for (const header of ['"nope"', etag.slice(0, -2) + '"', 'garbage', '']) {
    const res = await get(a!.app, url, { 'x-api-key': key, 'if-none-match': header })
    t.equal(res.statusCode, 200, `${JSON.stringify(header)} does not match`)
  }
})

t.test('HEAD: a 200 carries the GET\'s length; a 304 (answered from the limiter or from the cache) carries no content-length', async (t) => {
  const { apps: [a, b], key } = await fleet(t, 2)
  const url = `${API}/leaderboard?limit=100`
  const full = await get(a!.app, url, { 'x-api-key': key })
  const head = await a!.app.inject({ method: 'HEAD', url, headers: { 'x-api-key': key } })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-length'], String(full.rawPayload.length), 'the 200\'s length')
  t.equal(head.body, '', 'and no body')
  const etag = String(full.headers.etag)
  // On a, the URL is cached (its answer comes before the route); on b, it was never served.
  for (const [name, app] of [['cached', a], ['not cached', b]] as const) {
    for (let i = 0; i < 2; i++) {
      const res = await app!.app.inject({ method: 'HEAD', url, headers: { 'x-api-key': key, 'if-none-match': etag } })
      t.equal(res.statusCode, 304, `${name}, HEAD #${i + 1}`)
      t.equal(res.headers['content-length'], undefined, `${name}, HEAD #${i + 1}: no content-length`)
      t.equal(res.headers.etag, etag)
    }
  }
})

t.test('a 304 does not count against the quota; a 200 does', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  const url = `${API}/leaderboard`
  const first = await get(a!.app, url, { 'x-api-key': key })
  const remaining = Number(first.headers['x-ratelimit-remaining'])
  for (let i = 0; i < 5; i++) {
    const res = await get(a!.app, url, { 'x-api-key': key, 'if-none-match': String(first.headers.etag) })
    t.equal(res.statusCode, 304)
    t.equal(Number(res.headers['x-ratelimit-remaining']), remaining, 'nothing counted')
  }
  const counted = await get(a!.app, url, { 'x-api-key': key })
  t.equal(Number(counted.headers['x-ratelimit-remaining']), remaining - 1)
})

t.test('past REVALIDATIONS_PER_SECOND per key on an instance, conditional requests are counted (and still 304)', async (t) => {
  for (const bound of [0, 3]) {
    const { apps: [a], key } = await fleet(t, 1, { revalidationsPerSecond: bound })
    const url = `${API}/leaderboard`
    const first = await get(a!.app, url, { 'x-api-key': key })
    const remaining = Number(first.headers['x-ratelimit-remaining'])
    const started = Date.now()
    let last = first
    for (let i = 0; i < 10; i++) {
      last = await get(a!.app, url, { 'x-api-key': key, 'if-none-match': String(first.headers.etag) })
      t.equal(last.statusCode, 304)
    }
    // The bound is per second: the requests may have spanned more than one.
    const seconds = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1
    const free = 10 - (remaining - Number(last.headers['x-ratelimit-remaining']))
    t.ok(free >= Math.min(bound, 10) && free <= bound * seconds, `bound ${bound}: ${free} free revalidations in ${seconds} s`)
  }
})

t.test('bodies of 1 KiB or more are compressed (gzip, br) when accepted; smaller ones never', async (t) => {
  const { apps: [a], key } = await fleet(t, 1)
  const big = `${API}/leaderboard?limit=100`
  const plain = await get(a!.app, big, { 'x-api-key': key })
  t.ok(plain.rawPayload.length >= 1024, `the page is ${plain.rawPayload.length} bytes`)
  t.equal(plain.headers['content-encoding'], undefined)
  const decoders = { gzip: gunzipSync, br: brotliDecompressSync }
  for (const encoding of ['gzip', 'br'] as const) {
    const res = await get(a!.app, big, { 'x-api-key': key, 'accept-encoding': encoding })
    t.equal(res.headers['content-encoding'], encoding)
    t.ok(res.rawPayload.length < plain.rawPayload.length / 3, `${encoding}: ${res.rawPayload.length} bytes`)
    t.equal(decoders[encoding](res.rawPayload).toString(), plain.body, `${encoding} decodes to the same body`)
    t.equal(res.headers.etag, String(plain.headers.etag).replace(/"$/, `-${encoding}"`), 'a strong tag per encoding')
    const revalidated = await get(a!.app, big, { 'x-api-key': key, 'accept-encoding': encoding, 'if-none-match': String(plain.headers.etag) })
    t.equal(revalidated.statusCode, 304, 'the identity tag revalidates the compressed body')
  }
  t.equal((await get(a!.app, big, { 'x-api-key': key, 'accept-encoding': 'gzip;q=1, br;q=0.5' })).headers['content-encoding'], 'gzip', 'q-values are honoured')
  t.equal((await get(a!.app, big, { 'x-api-key': key, 'accept-encoding': 'identity' })).headers['content-encoding'], undefined)
  const small = await get(a!.app, `${API}/stats`, { 'x-api-key': key, 'accept-encoding': 'gzip, br' })
  t.ok(small.rawPayload.length < 1024)
  t.equal(small.headers['content-encoding'], undefined, 'under 1 KiB: sent as it is')
})

t.test('a key refused for its rate limit is refused again on this instance without asking Redis, until its reset', async (t) => {
  const own = await ownServer(t) // INFO stats counts the whole server's commands
  const { apps: [a], key } = await fleet(t, 1, { planLimits: { professional: 2 }, rateLimitWindowMs: 60_000 }, own.url)
  const url = `${API}/stats`
  for (let i = 0; i < 2; i++) t.equal((await get(a!.app, url, { 'x-api-key': key })).statusCode, 200)
  const refused = await get(a!.app, url, { 'x-api-key': key })
  t.equal(refused.statusCode, 429)
  const stats = new Redis(own.url)
  t.teardown(() => { stats.disconnect() })
  const processed = async (): Promise<number> => Number(/total_commands_processed:(\d+)/.exec(await stats.info('stats'))?.[1])
  const before = await processed()
  for (let i = 0; i < 5; i++) {
    const again = await get(a!.app, url, { 'x-api-key': key })
    t.equal(again.statusCode, 429)
    t.equal(again.headers['x-ratelimit-remaining'], '0')
    t.ok(Number(again.headers['retry-after']) >= 1 && Number(again.headers['retry-after']) <= Number(refused.headers['retry-after']))
  }
  t.equal(await processed() - before, 1, 'only the INFO call itself reached Redis')
})

t.test('ETags: the day is part of a day-dependent tag; weak comparison in any encoding', async (t) => {
  const day = 86_400_000
  t.equal(entityTag('42'), entityTag('42'))
  t.not(entityTag('42'), entityTag('43'))
  t.equal(entityTag('42', 5 * day), entityTag('42', 6 * day - 1), 'the same UTC day')
  t.not(entityTag('42', 5 * day), entityTag('42', 6 * day), 'the next UTC day')
  const tag = entityTag('42')
  t.equal(matchingTag(`W/"${tag}-gzip"`, tag), `"${tag}-gzip"`)
  t.equal(matchingTag(`"${tag}-deflate"`, tag), null)
  t.equal(matchingTag(`${tag}`, tag), null, 'an unquoted tag is not a tag')
  t.equal(matchingTag(undefined, tag), null)
})

t.test('the response cache serves an entry only at its version and, for a day-dependent body, on its day', async (t) => {
  const day = 86_400_000
  const cache = new ResponseCache(1024 * 1024)
  cache.put('a', '7', undefined, '{"a":1}')
  t.equal(cache.get('a', '7')?.identity.toString(), '{"a":1}')
  t.equal(cache.get('a', '8'), undefined, 'another version misses')
  t.equal(cache.get('a', undefined), undefined, 'an unknown version misses')
  cache.put('m', '7', 10 * day + 5, '{"m":1}')
  t.ok(cache.get('m', '7', 11 * day - 1))
  t.equal(cache.get('m', '7', 11 * day), undefined, 'the next UTC day misses')
  const off = new ResponseCache(0)
  off.put('a', '7', undefined, '{}')
  t.equal(off.get('a', '7'), undefined, 'size 0: no cache')
  const tiny = new ResponseCache(3 * (ENTRY_OVERHEAD + 400)) // room for three entries of 300 bytes
  for (let i = 0; i < 10; i++) tiny.put(`k${i}`, '1', undefined, 'x'.repeat(300))
  t.equal(tiny.get('k0', '1'), undefined, 'bounded by bytes: the oldest entries go')
  t.ok(tiny.get('k9', '1'))
})

t.test('the response cache counts each compressed form with its length and its overhead, in a Buffer of its own', async (t) => {
  const cache = new ResponseCache(1024 * 1024)
  const entry = cache.put('a', '7', undefined, JSON.stringify({ data: 'x'.repeat(3000) }))
  const identityOnly = cache.size
  t.equal(identityOnly, ENTRY_OVERHEAD + 'a'.length + '7'.length + entry.tag.length + entry.identity.length)
  const gzip = cache.body('a', entry, 'gzip')
  t.equal(cache.size, identityOnly + COMPRESSED_FORM_OVERHEAD + gzip.length)
  t.equal(cache.body('a', entry, 'gzip'), gzip, 'made once')
  const br = cache.body('a', entry, 'br')
  t.equal(cache.size, identityOnly + 2 * COMPRESSED_FORM_OVERHEAD + gzip.length + br.length)
  t.same([gzip.buffer.byteLength, br.buffer.byteLength], [gzip.length, br.length], 'each form owns exactly its bytes')
})
