// The typed client of public boards (PublicBoardClient) against the running service: with no key,
// the leaderboard, member and stats reads resolve the keyed reads' bodies, revalidate with ETags,
// carry the client address's public quota, throw the contract's errors (a board that is not
// public, a hidden member, the per-address limit), follow the live updates, and name the rank card.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { LeaderboardApiError, LeaderboardClient, PublicBoardClient, type LiveUpdate, type PublicBoardClientOptions } from '../src/client/index.js'
import type { Config } from '../src/config.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let boards = 0

interface Sent { url: string, headers: Record<string, string>, status: number }

interface Fixture extends TestApp {
  guildId: string
  slug: string
  origin: string
  /** The keyed client of the same server, for comparison. */
  keyed: LeaderboardClient
  /** Every request the public clients made, with its headers and its answer's status. */
  sent: Sent[]
  client: (options?: Partial<PublicBoardClientOptions>) => PublicBoardClient
}

async function serve (t: Test, overrides: Partial<Config> = {}): Promise<Fixture> {
  // No slug cache: a settings change shows at the next request.
  const fixture = await buildTestApp(t, server.url, { apiKeyCacheTtlMs: 0, ...overrides })
  const origin = await fixture.app.listen({ port: 0, host: '127.0.0.1' })
  const guildId = String(1_730_000_000_000_000_000n + BigInt(++boards))
  const slug = `client-board-${boards}`
  for (let i = 1; i <= 12; i++) {
    await fixture.writer.awardXp({ guildId, userId: String(i), xp: 100 * i, username: `user ${i}`, displayName: `User ${i}`, avatarUrl: `https://cdn.example/${i}.png` })
  }
  await fixture.writer.configureGuild(guildId, { name: 'Cozy Café', public: { enabled: true, slug } })
  const { key } = await fixture.apiKeys.create({ guildId, plan: 'professional' })
  const sent: Sent[] = []
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    sent.push({ url: String(input), headers: { ...(init?.headers as Record<string, string>) }, status: response.status })
    return response
  }
  return {
    ...fixture,
    guildId,
    slug,
    origin,
    keyed: new LeaderboardClient({ baseUrl: `${origin}/api/v1`, apiKey: key }),
    sent,
    client: (options = {}) => new PublicBoardClient({ baseUrl: `${origin}/public/v1/`, fetch: recording, ...options })
  }
}

t.test('leaderboard, member and stats resolve the keyed reads\' bodies with no key sent', async (t) => {
  const { client, keyed, guildId, slug, sent } = await serve(t)
  const c = client()
  t.same((await c.leaderboard(slug, { limit: 3, page: 2 })).data, (await keyed.leaderboard(guildId, { limit: 3, page: 2 })).data)
  t.same((await c.leaderboard(slug, { period: 'week' })).data, (await keyed.leaderboard(guildId, { period: 'week' })).data)
  t.same((await c.leaderboard(slug, { season: 'current' })).data, (await keyed.leaderboard(guildId, { season: 'current' })).data)
  const member = await c.member(slug, '5')
  t.same(member.data, (await keyed.member(guildId, '5')).data)
  t.match(member.data, { user_id: '5', display_name: 'User 5', avatar_url: 'https://cdn.example/5.png', rank: 8 }, 'typed: the member\'s record')
  const stats = await c.stats(slug)
  t.same(stats.data, (await keyed.stats(guildId)).data)
  t.equal(stats.data.name, 'Cozy Café')
  t.same(sent.map((s) => new URL(s.url).pathname), [
    `/public/v1/${slug}/leaderboard`, `/public/v1/${slug}/leaderboard`, `/public/v1/${slug}/leaderboard`, `/public/v1/${slug}/members/5`, `/public/v1/${slug}/stats`
  ], 'the public routes, under the base URL given (its trailing slash dropped)')
  t.ok(sent.every((s) => !('x-api-key' in s.headers) && /^[0-9a-f-]{36}$/.test(s.headers['x-request-id'] ?? '')), 'no key on any request; a request id on each')
})

t.test('the same URL again revalidates (304, notModified, the same data); the quota is the client address\'s', async (t) => {
  const { client, slug, sent, writer, guildId } = await serve(t, { publicLimitPerMinute: 50 })
  const c = client()
  t.equal(c.rateLimit, undefined)
  const first = await c.leaderboard(slug, { limit: 5 })
  t.match(first.rateLimit, { limit: 50, remaining: 49 })
  const again = await c.leaderboard(slug, { limit: 5 })
  t.match(sent[1], { headers: { 'if-none-match': /^"[^"]+"$/ }, status: 304 })
  t.equal(again.notModified, true)
  t.same(again.data, first.data)
  t.same(c.rateLimit, again.rateLimit, 'the last seen, on the client')
  await writer.awardXp({ guildId, userId: '1', xp: 5000 })
  const after = await c.leaderboard(slug, { limit: 5 })
  t.equal(after.notModified, false, 'a write changes the board')
  t.equal(after.data.data[0]?.user_id, '1')
})

t.test('the contract\'s errors: board_not_found (unknown), member_not_found (hidden), invalid_parameter, rate_limited past the per-address limit', async (t) => {
  const { client, slug, writer, guildId } = await serve(t, { publicLimitPerMinute: 5 })
  const c = client({ maxRetries: 0 })
  await t.rejects(c.stats('no-such-board'), { constructor: LeaderboardApiError, statusCode: 404, code: 'board_not_found' })
  await writer.setVisibility({ guildId, userId: '12', visible: false, reason: 'left' })
  await t.rejects(c.member(slug, '12'), { statusCode: 404, code: 'member_not_found' }, 'a hidden member')
  t.equal((await c.leaderboard(slug, { limit: 1 })).data.data[0]?.user_id, '11', 'and off the board')
  await t.rejects(c.leaderboard(slug, { limit: 101 }), { statusCode: 400, code: 'invalid_parameter' })
  t.equal((await c.stats(slug)).rateLimit?.remaining, 0, 'the fifth request, errors counted')
  const refused = await c.stats(slug).catch((error: unknown) => error)
  t.match(refused, { constructor: LeaderboardApiError, statusCode: 429, code: 'rate_limited' }, 'the sixth from this address within a minute')
  t.ok(((refused as LeaderboardApiError).retryAfterSeconds ?? 0) > 0, 'with retry-after')
})

t.test('a board made private is board_not_found at once, and back when made public again', async (t) => {
  const { client, slug, writer, guildId } = await serve(t)
  const c = client()
  t.equal((await c.stats(slug)).data.total_members, 12)
  await writer.configureGuild(guildId, { public: { enabled: false } })
  await t.rejects(c.stats(slug), { statusCode: 404, code: 'board_not_found' })
  await writer.configureGuild(guildId, { public: { enabled: true } })
  t.equal((await c.stats(slug)).data.total_members, 12)
})

t.test('watchLeaderboard and watchStats: the current body at once, then each change; the rank card is at cardUrl', async (t) => {
  const { client, slug, writer, guildId, origin } = await serve(t)
  const c = client()
  const controller = new AbortController()
  t.teardown(() => { controller.abort() })
  const board = c.watchLeaderboard(slug, { limit: 3, signal: controller.signal })
  const stats = c.watchStats(slug, { signal: controller.signal })
  const next = async <T>(updates: AsyncGenerator<LiveUpdate<T>>): Promise<LiveUpdate<T>> => {
    const { value, done } = await updates.next()
    if (done === true) throw new Error('the watch ended')
    return value
  }
  const [page, aggregates] = [await next(board), await next(stats)]
  t.same(page.data, (await c.leaderboard(slug, { limit: 3 })).data)
  t.same(aggregates.data, (await c.stats(slug)).data)
  await writer.awardXp({ guildId, userId: '2', xp: 10_000 })
  const [changed, grown] = [await next(board), await next(stats)]
  t.equal(changed.data.data[0]?.user_id, '2', 'the award arrives on the board')
  t.equal(grown.data.total_xp, aggregates.data.total_xp + 10_000, 'and on the stats')
  t.not(changed.etag, page.etag)

  const card = c.cardUrl(slug, '2')
  t.equal(card, `${origin}/public/v1/${slug}/members/2/card.svg`)
  const response = await fetch(card)
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^image\/svg\+xml/)
  t.match(await response.text(), /User 2/)
  t.equal(c.cardUrl('my board', '2').endsWith('/public/v1/my%20board/members/2/card.svg'), true, 'the slug encoded as a path segment')
})
