// Public boards: a server that opts in (settings `public`: enabled, with a slug unique in the
// installation) is read with no key at /public/v1/{slug}/leaderboard, …/members/{u} and …/stats,
// with the same bodies and ETags as the keyed reads, 304s, live streams, and a sliding-window
// limit per client address (PUBLIC_LIMIT_PER_MINUTE). An unknown slug, or a server that is not
// public, is 404.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { buildTestAdmin } from './helpers/admin.js'
import { SseReader } from './helpers/sse.js'
import type { Config } from '../src/config.js'
import { SlugTakenError } from '../src/errors.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0
const nextGuild = (): string => String(1_720_000_000_000_000_000n + BigInt(++guilds))

async function fixture (t: Test, overrides: Partial<Config> = {}) {
  // No slug cache: a settings change shows at the next request.
  const ctx = await buildTestApp(t, server.url, { apiKeyCacheTtlMs: 0, ...overrides })
  const guildId = nextGuild()
  const slug = `board-${guilds}`
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  for (let i = 1; i <= 12; i++) {
    await ctx.writer.awardXp({ guildId, userId: String(i), xp: 50 * i, username: `user ${i}`, displayName: `User <${i}>`, avatarUrl: `https://cdn.example/${i}.png` })
  }
  await ctx.writer.configureGuild(guildId, { name: 'Cozy Café', iconUrl: 'https://cdn.example/icon.png', public: { enabled: true, slug } })
  const keyed = async (path: string, headers: Record<string, string> = {}) =>
    await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key, ...headers } })
  const open = async (path: string, headers: Record<string, string> = {}) => await ctx.app.inject({ url: `/public/v1/${slug}${path}`, headers })
  return { ...ctx, guildId, slug, key, keyed, open }
}

t.test('the public reads answer the keyed reads\' bodies and ETags, with no key, and 304 for a current ETag', async (t) => {
  const { keyed, open } = await fixture(t)
  for (const path of ['/leaderboard', '/leaderboard?limit=5&page=2', '/leaderboard?period=week', '/members/3', '/stats']) {
    const [a, b] = [await keyed(path), await open(path)]
    t.equal(b.statusCode, 200, path)
    t.equal(b.body, a.body, `${path}: the same body`)
    t.equal(b.headers.etag, a.headers.etag, `${path}: the same ETag`)
    t.equal(b.headers['cache-control'], 'private, no-cache')
    t.ok(Number(b.headers['x-ratelimit-remaining']) >= 0, 'counted per address')
    t.equal((await open(path, { 'if-none-match': String(b.headers.etag) })).statusCode, 304, `${path}: 304`)
  }
  const stats = (await open('/stats')).json()
  t.match(stats, { name: 'Cozy Café', icon_url: 'https://cdn.example/icon.png' })
  t.match((await open('/leaderboard?limit=1')).json().data[0], { user_id: '12', display_name: 'User <12>', avatar_url: 'https://cdn.example/12.png' })
  t.match((await open('/members/99')).json(), { code: 'member_not_found' })
  t.match((await open('/leaderboard?limit=101')).json(), { code: 'invalid_parameter' })
})

t.test('a hidden member leaves the public board too', async (t) => {
  const { writer, guildId, open } = await fixture(t)
  await writer.setVisibility({ guildId, userId: '12', visible: false, reason: 'opted_out' })
  t.equal((await open('/members/12')).statusCode, 404)
  t.same((await open('/leaderboard?limit=1')).json().data.map((e: { user_id: string }) => e.user_id), ['11'])
})

t.test('an unknown slug, a server that is not public, and a slug a server moved away from are 404 board_not_found', async (t) => {
  const { writer, guildId, slug, open, app } = await fixture(t)
  t.match((await app.inject({ url: '/public/v1/no-such-board/leaderboard' })).json(), { statusCode: 404, code: 'board_not_found' })
  await writer.configureGuild(guildId, { public: { enabled: false } })
  t.match((await open('/stats')).json(), { statusCode: 404, code: 'board_not_found' }, 'made private')
  t.match((await open('/members/1')).json(), { code: 'board_not_found' })
  await writer.configureGuild(guildId, { public: { enabled: true, slug: `${slug}-new` } })
  t.equal((await open('/stats')).statusCode, 404, 'the old slug is no longer the board')
  t.equal((await app.inject({ url: `/public/v1/${slug}-new/stats` })).statusCode, 200, 'the new one is')
  t.equal((await app.inject({ url: '/public/v1/Not_A_Slug/stats' })).statusCode, 400, 'a slug out of its pattern is 400')
})

t.test('a slug belongs to one server: another is refused (409 slug_taken over the write API) until the first lets it go', async (t) => {
  const ctx = await buildTestAdmin(t, server.url, { apiKeyCacheTtlMs: 0 })
  const [a, b] = [nextGuild(), nextGuild()]
  await ctx.writer.configureGuild(a, { public: { enabled: true, slug: 'shared-slug' } })
  await t.rejects(ctx.writer.configureGuild(b, { public: { enabled: true, slug: 'shared-slug' } }), SlugTakenError)
  const token = await ctx.token('*', ['write'])
  const put = async (guildId: string, body: object) => await ctx.admin.inject({
    method: 'PUT', url: `/admin/v1/servers/${guildId}/settings`, headers: { authorization: `Bearer ${token}` }, payload: body
  })
  t.match((await put(b, { public: { enabled: true, slug: 'shared-slug' } })).json(), { statusCode: 409, code: 'slug_taken' })
  t.match((await put(b, { public: { enabled: true } })).json(), { statusCode: 400, message: /public.enabled needs public.slug/ })
  t.same((await ctx.writer.settings.read(b)).public, { enabled: false, slug: null }, 'nothing changed on b')
  t.equal((await put(a, { public: { enabled: true, slug: 'shared-slug' } })).statusCode, 200, 'the holder may set it again')

  await ctx.writer.configureGuild(a, { public: { slug: 'a-elsewhere' } })
  t.equal((await put(b, { public: { enabled: true, slug: 'shared-slug' } })).statusCode, 200, 'once a moved away, b may take it')
  t.equal((await ctx.app.inject({ url: '/public/v1/shared-slug/stats' })).statusCode, 200)
  t.equal(await ctx.writer.settings.slugs.holder('a-elsewhere'), a)
  await ctx.writer.configureGuild(a, { public: { enabled: false, slug: null } })
  t.equal(await ctx.writer.settings.slugs.holder('a-elsewhere'), null, 'a slug cleared is given back')
})

t.test('a claim left behind by a change that never finished is stale: another server takes it over', async (t) => {
  const ctx = await buildTestApp(t, server.url, { apiKeyCacheTtlMs: 0 })
  const [a, b] = [nextGuild(), nextGuild()]
  t.ok(await ctx.writer.settings.slugs.claim(a, 'left-behind'), 'a claims, and its settings are never written')
  t.equal((await ctx.app.inject({ url: '/public/v1/left-behind/stats' })).statusCode, 404, 'a claim alone shows no board')
  await ctx.writer.configureGuild(b, { public: { enabled: true, slug: 'left-behind' } })
  t.equal(await ctx.writer.settings.slugs.holder('left-behind'), b)
  t.equal((await ctx.app.inject({ url: '/public/v1/left-behind/stats' })).statusCode, 200)
})

t.test('each client address is limited to PUBLIC_LIMIT_PER_MINUTE requests a minute (304s and 404s counted); other addresses are not', async (t) => {
  const { app, slug } = await fixture(t, { publicLimitPerMinute: 5, trustProxy: 1 })
  const from = async (address: string, path = `/public/v1/${slug}/stats`) =>
    await app.inject({ url: path, headers: { 'x-forwarded-for': address } })
  const first = await from('203.0.113.7')
  t.equal(first.headers['x-ratelimit-limit'], '5')
  t.equal(first.headers['x-ratelimit-remaining'], '4')
  await from('203.0.113.7', `/public/v1/${slug}/members/999`)
  await from('203.0.113.7', '/public/v1/no-such-board/stats')
  await app.inject({ url: `/public/v1/${slug}/stats`, headers: { 'x-forwarded-for': '203.0.113.7', 'if-none-match': String(first.headers.etag) } })
  t.equal((await from('203.0.113.7')).statusCode, 200, 'the fifth')
  const refused = await from('203.0.113.7')
  t.match(refused.json(), { statusCode: 429, code: 'rate_limited' }, 'the sixth is refused')
  // Within the window and one of its 40 slices: the limiter's bound (src/rate-limit/sliding-window.ts).
  t.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 62, `retry-after ${String(refused.headers['retry-after'])}`)
  t.equal((await from('203.0.113.8')).statusCode, 200, 'another address is not')
})

t.test('a public stream: no key, the first event at once, then a change', async (t) => {
  const { app, slug, writer, guildId } = await fixture(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const stream = await SseReader.open(t, base, `/public/v1/${slug}/leaderboard/stream?limit=3`, {})
  t.equal(stream.status, 200)
  const first = JSON.parse((await stream.event(0)).data)
  t.same(first.data.map((e: { user_id: string }) => e.user_id), ['12', '11', '10'])
  await writer.awardXp({ guildId, userId: '1', xp: 10_000 })
  const next = JSON.parse((await stream.event(1)).data)
  t.same(next.data.map((e: { user_id: string }) => e.user_id), ['1', '12', '11'], 'the change arrives')
  const refused = await SseReader.open(t, base, '/public/v1/no-such-board/leaderboard/stream', {})
  t.equal(refused.status, 404)
})
