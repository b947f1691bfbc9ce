// GET /servers/{guild_id}/members/{user_id}/around?radius=R: the ranks max(1, r-R) .. min(T, r+R)
// around a member's rank r, in the leaderboard's entry shape, with the total and the rank.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0
const MEMBERS = 120

/** A server of 120 members: user i (1..120) holds 10 * i XP, except 60 and 61, tied with 59. */
async function fixture (t: Test) {
  const ctx = await buildTestApp(t, server.url)
  const guildId = String(1_600_000_000_000_000_000n + BigInt(++guilds))
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  await ctx.writer.bulkSetMembers(guildId, Array.from({ length: MEMBERS }, (_, i) => ({
    userId: String(i + 1), xp: 10 * (i === 59 || i === 60 ? 59 : i + 1), username: `user ${i + 1}`
  })))
  const get = async (path: string, headers: Record<string, string> = {}) =>
    await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key, ...headers } })
  /** Ranks from .. to of the leaderboard, as the leaderboard serves them. */
  const ranks = async (from: number, to: number) => {
    const all = [...(await get('/leaderboard?limit=100&page=1')).json().data, ...(await get('/leaderboard?limit=100&page=2')).json().data]
    return all.slice(from - 1, to)
  }
  return { ...ctx, guildId, get, ranks }
}

t.test('the ranks r-R .. r+R around the member, exactly the leaderboard\'s entries, with total and rank; radius 5 by default', async (t) => {
  const { get, ranks } = await fixture(t)
  // User 50 (500 XP) is at rank 71; its member record says so, as the contract wants.
  const member = (await get('/members/50')).json()
  const r = member.rank
  const res = await get('/members/50/around')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { data: await ranks(r - 5, r + 5), total: MEMBERS, rank: r })
  t.same((await get('/members/50/around?radius=2')).json(), { data: await ranks(r - 2, r + 2), total: MEMBERS, rank: r })
})

t.test('ties keep the leaderboard order (user_id ascending as numbers), so the member sits in the middle', async (t) => {
  const { get } = await fixture(t)
  const around = (await get('/members/60/around?radius=1')).json()
  t.same(around.data.map((e: { user_id: string }) => e.user_id), ['59', '60', '61'], '59, 60 and 61 all hold 590 XP')
  t.equal(around.data[1].rank, around.rank)
})

t.test('radius 0 is the member alone; radius 50 reaches 50 ranks each way', async (t) => {
  const { get, ranks } = await fixture(t)
  const r = (await get('/members/50/around')).json().rank
  t.same((await get('/members/50/around?radius=0')).json(), { data: await ranks(r, r), total: MEMBERS, rank: r })
  const middle = (await get('/members/65/around?radius=50')).json() // rank 56
  t.equal(middle.data.length, 101)
  t.same(middle.data, await ranks(middle.rank - 50, middle.rank + 50))
})

t.test('clipped at rank 1 and at the last rank', async (t) => {
  const { get, ranks } = await fixture(t)
  const top = (await get('/members/120/around?radius=3')).json()
  t.equal(top.rank, 1)
  t.same(top.data, await ranks(1, 4), 'ranks 1 .. 4 for the top member')
  const second = (await get('/members/119/around?radius=50')).json()
  t.same(second.data, await ranks(1, 52), 'from rank 1, not below')
  const last = (await get('/members/1/around?radius=5')).json()
  t.equal(last.rank, MEMBERS)
  t.same(last.data, await ranks(MEMBERS - 5, MEMBERS), 'up to the last rank, not past it')
  const alone = (await get('/members/1/around?radius=50')).json()
  t.same(alone.data, await ranks(MEMBERS - 50, MEMBERS))
})

t.test('a non-member is 404 member_not_found; a bad radius is 400 naming the parameter and its bounds', async (t) => {
  const { get } = await fixture(t)
  t.match((await get('/members/999/around')).json(), { statusCode: 404, code: 'member_not_found', message: 'user 999 is not a member of server' })
  for (const bad of ['51', '-1', '1.5', 'abc', '', '1e1', '5&radius=6', '9'.repeat(400)]) {
    const res = await get(`/members/50/around?radius=${bad}`)
    t.equal(res.statusCode, 400, `radius=${bad.slice(0, 20)}`)
    t.same(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_parameter', message: 'radius must be an integer from 0 to 50' })
  }
  t.equal((await get('/members/abc/around')).statusCode, 400, 'a malformed user_id')
})

t.test('an ETag that changes after a write and revalidates with 304; a 304 costs no quota', async (t) => {
  const { get, writer, guildId } = await fixture(t)
  const first = await get('/members/50/around')
  t.match(first.headers.etag, /^"[^"]+"$/)
  t.equal(first.headers['cache-control'], 'private, no-cache')
  const revalidated = await get('/members/50/around', { 'if-none-match': String(first.headers.etag) })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.headers['x-ratelimit-remaining'], first.headers['x-ratelimit-remaining'], 'not counted')
  await writer.awardXp({ guildId, userId: '51', xp: 1 })
  const after = await get('/members/50/around', { 'if-none-match': String(first.headers.etag) })
  t.equal(after.statusCode, 200)
  t.not(after.headers.etag, first.headers.etag)
  t.equal((await get('/members/50/around', { 'if-none-match': String(after.headers.etag) })).statusCode, 304)
})

t.test('large bodies are compressed like the leaderboard\'s', async (t) => {
  const { get } = await fixture(t)
  const res = await get('/members/50/around?radius=50', { 'accept-encoding': 'gzip' })
  t.equal(res.headers['content-encoding'], 'gzip')
  t.match(res.headers.etag, /-gzip"$/)
})
