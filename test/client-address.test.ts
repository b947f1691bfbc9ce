// Client addresses and the failed-authentication limit, row by row of CONTRACT.md part 2
// "Client addresses": X-Forwarded-For is believed only as far as TRUST_PROXY trusts it, the
// address is a parsed IP (IPv6 by its /64) before it names anything, no header text reaches a
// Redis key, and a key in use is never locked out by its address's failures.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { allKeys } from './helpers/redis-snapshot.js'
import { Random } from '../src/random.js'
import { normalizeAddress } from '../src/client-address.js'
import { KeyBuilder } from '../src/redis/keys.js'
import type { ClientAddress } from '../src/client-address.js'
import type { Config } from '../src/config.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })
const raw = new Redis(server.url)
t.teardown(() => { raw.disconnect() })

// The tests run side by side: each app counts failures under a key prefix of its own, only the
// second draws from `random`, and the one that weighs Redis's memory (INFO, server-wide) has a
// server of its own. Apps are built one at a time (oneAtATime).
t.jobs = 6

const GUILD = '1400000000000000001'
const STATS = `/api/v1/servers/${GUILD}/stats`
const LIMIT = 5
const BAD_KEY = `lbk_0123456789abcdef_${'A'.repeat(32)}`
const random = new Random(8)

async function setup (t: Test, overrides: Partial<Config> = {}, redisUrl = server.url): Promise<TestApp> {
  return await buildTestApp(t, redisUrl, { authFailureLimit: LIMIT, authFailureWindowMs: 60_000, ...overrides })
}

interface From {
  /** The TCP peer: the client itself, or the proxy in front of the service. */
  socket: string
  xff?: string
}

async function get (app: TestApp['app'], key: string | undefined, from: From) {
  const headers: Record<string, string> = {}
  if (key !== undefined) headers['x-api-key'] = key
  if (from.xff !== undefined) headers['x-forwarded-for'] = from.xff
  const res = await app.inject({ url: STATS, headers, remoteAddress: from.socket })
  return { status: res.statusCode, body: res.json() as Record<string, unknown> }
}

const randomIpv4 = () => Array.from({ length: 4 }, () => random.int(1, 254)).join('.')

/** How many bad keys are answered 401 before the first 429 (null: never refused). */
async function failuresBeforeRefusal (app: TestApp['app'], from: () => From, max = 3 * LIMIT): Promise<number | null> {
  for (let i = 0; i < max; i++) {
    const res = await get(app, BAD_KEY, from())
    if (res.status === 429) return i
    if (res.status !== 401) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`)
  }
  return null
}

async function authFailureKeys (app: TestApp['app'], on = raw): Promise<string[]> {
  return await allKeys(on, `${app.config.redisPrefix}:*auth-failures`)
}

t.test('addresses are parsed IPs: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64, anything else null', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::1', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['127.1', null],
    ['010.0.0.1', null],
    [' 203.0.113.9', null],
    ['203.0.113.9:443', null],
    ['hello}{world:*?[x]', null],
    ['', null],
    ['1'.repeat(12_000), null]
  ]
  for (const [text, expected] of cases) t.equal(normalizeAddress(text), expected, JSON.stringify(text.slice(0, 40)))
  t.throws(() => new KeyBuilder('lb').authFailures('hello}{world' as ClientAddress), /not a normalized client address/,
    'the key builder refuses anything else')
})

t.test('random X-Forwarded-For values do not bypass the limit: untrusted, or beyond the trusted hops', async (t) => {
  const cases: Array<{ name: string, trustProxy: Config['trustProxy'], from: () => From }> = [
    { name: 'TRUST_PROXY=false', trustProxy: false, from: () => ({ socket: '198.51.100.7', xff: randomIpv4() }) },
    { name: 'a client that is not one of the trusted proxies', trustProxy: ['127.0.0.1'], from: () => ({ socket: '198.51.100.8', xff: randomIpv4() }) },
    // The proxy appends the address it saw; what the client wrote before it is not believed.
    { name: 'TRUST_PROXY=1 behind a proxy that appends the client address', trustProxy: 1, from: () => ({ socket: '127.0.0.1', xff: `${randomIpv4()}, ${randomIpv4()}, 198.51.100.9` }) },
    { name: 'trusted proxies by CIDR, a client rotating through its IPv6 /64', trustProxy: ['127.0.0.0/8'], from: () => ({ socket: '127.0.0.1', xff: `2001:db8:7:7:${random.int(0, 0xffff).toString(16)}::${random.int(1, 0xffff).toString(16)}` }) }
  ]
  for (const { name, trustProxy, from } of cases) {
    const { app } = await setup(t, { trustProxy })
    t.equal(await failuresBeforeRefusal(app, from), LIMIT, `${name}: ${LIMIT} failures, then 429`)
    t.equal((await authFailureKeys(app)).length, 1, `${name}: one address counted in Redis`)
  }
})

t.test("a trusted proxy's client address is used: two clients behind one proxy are limited separately", async (t) => {
  const { app } = await setup(t, { trustProxy: ['127.0.0.1'] })
  t.equal(await failuresBeforeRefusal(app, () => ({ socket: '127.0.0.1', xff: '203.0.113.1' })), LIMIT, 'the first client is refused after the limit')
  const other = await get(app, BAD_KEY, { socket: '127.0.0.1', xff: '203.0.113.2' })
  t.equal(other.status, 401, 'the second client, through the same proxy, is not')
})

t.test("bad keys sent with a victim's address in an untrusted X-Forwarded-For do not lock the victim out", async (t) => {
  const { app, apiKeys } = await setup(t, { trustProxy: ['127.0.0.1'] })
  const victimKey = (await apiKeys.create({ guildId: GUILD, plan: 'professional' })).key
  const victim = '203.0.113.50'
  const attacker = { socket: '198.51.100.66', xff: victim }
  t.equal(await failuresBeforeRefusal(app, () => attacker), LIMIT, 'the attacker is refused after the limit')
  t.equal((await get(app, victimKey, { socket: victim })).status, 200, 'the victim, connecting directly, is served')
  t.equal((await get(app, victimKey, { socket: '127.0.0.1', xff: victim })).status, 200, 'and through the trusted proxy too')
})

t.test('a key in active use keeps working from an address past the limit; unknown keys from it are refused unseen; revocation still applies', async (t) => {
  const { app, apiKeys } = await setup(t, { apiKeyCacheTtlMs: 200 })
  const inUse = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const unseen = (await apiKeys.create({ guildId: GUILD, plan: 'professional' })).key
  const office = { socket: '203.0.113.77' }
  t.equal((await get(app, inUse.key, office)).status, 200, 'the key is used from the office')
  t.equal(await failuresBeforeRefusal(app, () => office), LIMIT, 'someone at the same address sends bad keys: refused after the limit')

  const statuses: number[] = []
  for (let i = 0; i < 4; i++) {
    await sleep(250) // past the key cache's 200 ms: every request looks the key up again
    statuses.push((await get(app, inUse.key, office)).status)
  }
  t.same(statuses, [200, 200, 200, 200], 'the key in use is still served, each time after a fresh lookup')
  const refused = await get(app, unseen, office)
  t.same([refused.status, refused.body.code], [429, 'rate_limited'], 'a key this instance never saw valid is refused without a lookup')

  await apiKeys.revoke(inUse.id)
  await sleep(250)
  const revoked = await get(app, inUse.key, office)
  t.ok(revoked.status === 401 || revoked.status === 429, `the revoked key is refused within the cache time (${revoked.status})`)
})

t.test('X-Forwarded-For floods leave Redis bounded: one counter per address, no header text in key names', async (t) => {
  // A server of its own: its used_memory would count the other tests' keys and connections.
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const raw = new Redis(own.url)
  t.teardown(() => { raw.disconnect() })
  const { app } = await setup(t, { trustProxy: 1, authFailureLimit: 10_000 }, own.url)
  const before = Number(/used_memory:(\d+)/.exec(await raw.info('memory'))?.[1])
  const hostile = ['hello}{world:*?[x]', '{a}', '*', '1.2.3.4}{', '::ffff:1.2.3.4]', '\u00e9t\u00e9']
  for (let i = 0; i < 300; i++) {
    const xff = i % 3 === 0 ? 'x'.repeat(12_000) : `${hostile[i % hostile.length] ?? ''}${i}`
    t.equal((await get(app, BAD_KEY, { socket: '127.0.0.1', xff })).status, 401)
  }
  const keys = await authFailureKeys(app, raw)
  t.same(keys, [`${app.config.redisPrefix}:{a:127.0.0.1}:auth-failures`], 'unparseable addresses fall back to the socket: one key')
  const after = Number(/used_memory:(\d+)/.exec(await raw.info('memory'))?.[1])
  t.ok(after - before < 512 * 1024, `Redis grew by ${after - before} bytes for 300 requests with up to 12 KB of X-Forwarded-For`)
  const all = await allKeys(raw, `${app.config.redisPrefix}:*`)
  t.same(all.filter((k) => /hello|\*|\[|x{20}/.test(k)), [], 'no header text in any key name')
  t.ok(await raw.pttl(keys[0] ?? '') > 0, 'the counter expires')
})
