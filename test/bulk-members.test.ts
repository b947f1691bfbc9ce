// GET /servers/{guild_id}/members?ids=A,B,C: the member records of those ids that are members, in
// the requested order, and the ids that are not; 1 to 100 distinct ids; one request, counted once.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import type { FastifyRequest } from 'fastify'
import { distinctIds, KNOWN_LISTS_MAX } from '../src/schemas/messages.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0
const BOUNDS = 'ids must be 1 to 100 distinct decimal ids (1 to 20 digits without a leading zero) separated by commas'

async function fixture (t: Test, overrides = {}) {
  const ctx = await buildTestApp(t, server.url, overrides)
  const guildId = String(1_700_000_000_000_000_000n + BigInt(++guilds))
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'free' })
  for (let i = 1; i <= 150; i++) await ctx.writer.awardXp({ guildId, userId: String(i * 1000), xp: 37 * i, username: `member ${i}` })
  await ctx.writer.claimDaily({ guildId, userId: '2000' })
  const get = async (path: string, headers: Record<string, string> = {}) =>
    await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key, ...headers } })
  return { ...ctx, guildId, get }
}

t.test('records in the requested order, each equal to the member endpoint\'s; the non-members listed in missing', async (t) => {
  const { get } = await fixture(t)
  const ids = ['5000', '7', '2000', '150000', '123456789012345678', '1000']
  const res = await get(`/members?ids=${ids.join(',')}`)
  t.equal(res.statusCode, 200)
  const single = await Promise.all(['5000', '2000', '150000', '1000'].map(async (id) => (await get(`/members/${id}`)).json()))
  t.same(res.json(), { data: single, missing: ['7', '123456789012345678'] })
  t.equal(single[1].daily_streak, 1, 'the records carry the streak, as the member endpoint does')
  t.same((await get('/members?ids=9')).json(), { data: [], missing: ['9'] }, 'no member at all')
})

t.test('100 ids are served, 101 are not; duplicates, bad ids, an empty or missing list and a repeated parameter are 400', async (t) => {
  const { get } = await fixture(t)
  const hundred = Array.from({ length: 100 }, (_, i) => String((i + 1) * 1000))
  const res = await get(`/members?ids=${hundred.join(',')}`)
  t.equal(res.statusCode, 200)
  t.same(res.json().data.map((m: { user_id: string }) => m.user_id), hundred)
  const cases: Array<[string, string]> = [
    [`?ids=${[...hundred, '101000'].join(',')}`, `${BOUNDS}; got 101`],
    ['?ids=1000,2000,1000', `${BOUNDS}; 1000 is given twice`],
    ['?ids=1000,abc', `${BOUNDS}; "abc" is not one`],
    ['?ids=1000,0123', `${BOUNDS}; "0123" is not one`],
    ['?ids=1000,', `${BOUNDS}; "" is not one`],
    ['?ids=1000,,2000', `${BOUNDS}; "" is not one`],
    [`?ids=${'9'.repeat(21)}`, `${BOUNDS}; "${'9'.repeat(21).slice(0, 24)}" is not one`],
    ['?ids=', `${BOUNDS}; "" is not one`],
    ['', `ids is required: ${BOUNDS}`],
    ['?ids=1000&ids=2000', `${BOUNDS}, given once`]
  ]
  for (const [query, message] of cases) {
    const bad = await get(`/members${query}`)
    t.equal(bad.statusCode, 400, query.slice(0, 40))
    t.same(bad.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_parameter', message }, query.slice(0, 40))
  }
})

t.test('a list that passed is known by its text: it passes again without being checked again, a list that differs is checked, a refused one is not kept, and at most KNOWN_LISTS_MAX are kept', async (t) => {
  const check = distinctIds('ids', 100)
  const request = (ids: string): FastifyRequest => ({ query: { ids } }) as unknown as FastifyRequest
  t.equal(check(request('1000,2000')), null)
  t.equal(check(request('1000,2000')), null, 'the same list again')
  t.equal(check.knownLists, 1, 'kept once')
  t.match(check(request('1000,2000,1000')), { message: `${BOUNDS}; 1000 is given twice` }, 'a list that only adds a repeat is refused')
  t.match(check(request('1000,2000,x')), { message: `${BOUNDS}; "x" is not one` })
  t.equal(check.knownLists, 1, 'refused lists are not kept')
  const lists = Array.from({ length: KNOWN_LISTS_MAX + 44 }, (_, i) => `${i + 1},${i + 2}`)
  t.same(lists.filter((list) => check(request(list)) !== null), [], `${lists.length} lists pass`)
  t.equal(check.knownLists, KNOWN_LISTS_MAX, 'no more than KNOWN_LISTS_MAX are kept')
  t.match(check(request('1,2,1')), { message: `${BOUNDS}; 1 is given twice` }, 'still refused once the memory is full')
})

t.test('one request is counted once against the quota, whatever the number of ids', async (t) => {
  const { get } = await fixture(t)
  const first = await get('/members?ids=1000')
  const limit = Number(first.headers['x-ratelimit-limit'])
  t.equal(Number(first.headers['x-ratelimit-remaining']), limit - 1)
  const hundred = await get(`/members?ids=${Array.from({ length: 100 }, (_, i) => String((i + 1) * 1000)).join(',')}`)
  t.equal(Number(hundred.headers['x-ratelimit-remaining']), limit - 2, 'a request for 100 members costs one')
})

t.test('an ETag that changes after a write and revalidates with 304', async (t) => {
  const { get, writer, guildId } = await fixture(t)
  const url = '/members?ids=1000,2000,3'
  const first = await get(url)
  t.match(first.headers.etag, /^"[^"]+"$/)
  t.equal((await get(url, { 'if-none-match': String(first.headers.etag) })).statusCode, 304)
  await writer.setUsername({ guildId, userId: '1000', username: 'renamed' })
  const after = await get(url, { 'if-none-match': String(first.headers.etag) })
  t.equal(after.statusCode, 200)
  t.not(after.headers.etag, first.headers.etag)
  t.equal(after.json().data[0].username, 'renamed')
  t.equal((await get(url, { 'if-none-match': String(after.headers.etag) })).statusCode, 304)
})

t.test('a key of another server is 403 before the ids are looked at', async (t) => {
  const { app, apiKeys } = await fixture(t)
  const { key } = await apiKeys.create({ guildId: '42', plan: 'free' })
  const res = await app.inject({ url: '/api/v1/servers/1700000000000000999/members?ids=abc', headers: { 'x-api-key': key } })
  t.equal(res.statusCode, 403)
})
