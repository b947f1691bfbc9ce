// Who is shown and profiles over the write API (ADMIN_PORT): PUT …/members/{u}/visibility and the
// batch POST …/visibility (10,000 members, ranks exact), display names and avatars in award
// items and PUT member, the member record of a hidden member, and bad input refused with 400.
import t, { type Test } from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

let guilds = 0

async function fixture (t: Test) {
  const ctx = await buildTestAdmin(t, server.url)
  const guildId = String(1_710_000_000_000_000_000n + BigInt(++guilds))
  const token = await ctx.token([guildId], ['write'])
  const { key } = await ctx.apiKeys.create({ guildId, plan: 'professional' })
  const call = async (method: string, path: string, payload?: unknown) => {
    const res = await ctx.admin.inject({
      method: method as 'GET', url: `/admin/v1/servers/${guildId}${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object })
    })
    return { status: res.statusCode, body: res.body === '' ? null : res.json() }
  }
  const read = async (path: string) => {
    const res = await ctx.app.inject({ url: `/api/v1/servers/${guildId}${path}`, headers: { 'x-api-key': key } })
    return { status: res.statusCode, body: res.json() }
  }
  return { ...ctx, guildId, call, read }
}

t.test('PUT visibility hides and shows; the member record of a hidden member says so, with no rank', async (t) => {
  const { call, read } = await fixture(t)
  await call('POST', '/awards', { awards: [{ user_id: '1', xp: 500 }, { user_id: '2', xp: 300 }] })
  t.same(await call('PUT', '/members/1/visibility', { visible: false, reason: 'left' }),
    { status: 200, body: { user_id: '1', visible: false, reasons: ['left'], xp: 500 } })
  t.equal((await read('/members/2')).body.rank, 1, 'the next member moved up')
  t.equal((await read('/members/1')).status, 404)
  const record = await call('PUT', '/members/1', { xp: 900, display_name: 'One' })
  t.equal(record.status, 200, 'PUT member on a hidden member answers its record')
  t.match(record.body, { user_id: '1', xp: 900, rank: null, visible: false, display_name: 'One' })
  t.match((await call('PUT', '/members/2', { username: 'two' })).body, { rank: 1, visible: true })
  t.same(await call('PUT', '/members/1/visibility', { visible: true }),
    { status: 200, body: { user_id: '1', visible: true, reasons: [], xp: 900 } })
  t.match((await read('/members/1')).body, { rank: 1, xp: 900, display_name: 'One' })
  t.same(await call('PUT', '/members/77/visibility', { visible: false, reason: 'opted_out' }),
    { status: 200, body: { user_id: '77', visible: false, reasons: ['opted_out'], xp: null } }, 'a user not yet a member is recorded')
})

t.test('bad visibility changes are 400 naming the problem, and change nothing', async (t) => {
  const { call, read } = await fixture(t)
  await call('POST', '/awards', { awards: [{ user_id: '1', xp: 500 }] })
  for (const [body, message] of [
    [{ visible: false }, /hiding a member needs a reason/],
    [{ visible: false, reason: 'bored' }, /reason/],
    [{ visible: 'false', reason: 'left' }, /visible/],
    [{ visible: false, reason: 'left', extra: 1 }, /extra/]
  ] as const) {
    t.match(await call('PUT', '/members/1/visibility', body), { status: 400, body: { code: 'invalid_parameter', message } }, JSON.stringify(body))
  }
  t.match(await call('POST', '/visibility', { members: [{ user_id: '1', visible: false, reason: 'left' }, { user_id: 2, visible: false, reason: 'left' }] }),
    { status: 400, body: { code: 'invalid_parameter', message: /members\/1\/user_id|send ids as strings/ } })
  t.match(await call('POST', '/visibility', { members: [] }), { status: 400 })
  t.equal((await read('/members/1')).status, 200, 'nothing was hidden')
})

t.test('a batch of 10,000 hides and shows with exact ranks: the board is what a model of it says', async (t) => {
  const { call, read, writer, guildId } = await fixture(t)
  const N = 12_000
  // XP with many ties, so that order within a tie (user id ascending) is checked too.
  const xpOf = (i: number): number => (i * 7919) % 997
  await writer.bulkSetMembers(guildId, Array.from({ length: N }, (_, i) => ({ userId: String(i + 1), xp: xpOf(i + 1) })))
  const hidden = new Set(Array.from({ length: 10_000 }, (_, i) => 1 + ((i * 13) % N)))
  const leave = [...hidden].map((u) => ({ user_id: String(u), visible: false, reason: 'left' }))
  const res = await call('POST', '/visibility', { members: leave })
  t.equal(res.status, 200)
  t.equal(res.body.results.length, 10_000)
  t.ok(res.body.results.every((r: { visible: boolean }) => !r.visible))
  const model = Array.from({ length: N }, (_, i) => i + 1).filter((u) => !hidden.has(u))
    .sort((a, b) => xpOf(b) - xpOf(a) || a - b)
  const board = async () => {
    const all: Array<{ rank: number, user_id: string, xp: number }> = []
    for (let page = 1; ; page++) {
      const { body } = await read(`/leaderboard?limit=100&page=${page}`)
      all.push(...body.data)
      if (body.data.length < 100) return { all, total: body.total }
    }
  }
  const after = await board()
  t.equal(after.total, N - 10_000)
  t.same(after.all.map((e) => Number(e.user_id)), model, 'every shown member, in order')
  t.ok(after.all.every((e, i) => e.rank === i + 1), 'ranked 1..total')
  const stats = (await read('/stats')).body
  t.equal(stats.total_xp, model.reduce((sum, u) => sum + xpOf(u), 0), 'the stats count shown members only')

  const back = await call('POST', '/visibility', { members: [...hidden].map((u) => ({ user_id: String(u), visible: true, reason: 'left' })) })
  t.equal(back.status, 200)
  const restored = await board()
  t.equal(restored.total, N)
  t.same(restored.all.map((e) => Number(e.user_id)), Array.from({ length: N }, (_, i) => i + 1).sort((a, b) => xpOf(b) - xpOf(a) || a - b), 'shown again: the whole board')
})

t.test('profiles: award items and PUT member set, keep and clear display names and avatars; https only, names in code points', async (t) => {
  const { call, read } = await fixture(t)
  t.equal((await call('POST', '/awards', { awards: [{ user_id: '1', xp: 10, display_name: 'Ünïcode 🎉', avatar_url: 'https://cdn.discordapp.com/avatars/1/a.png' }] })).status, 200)
  t.match((await read('/members/1')).body, { display_name: 'Ünïcode 🎉', avatar_url: 'https://cdn.discordapp.com/avatars/1/a.png' })
  await call('POST', '/awards', { awards: [{ user_id: '1', xp: 10, username: 'one' }] })
  t.match((await read('/leaderboard')).body.data[0], { username: 'one', display_name: 'Ünïcode 🎉', avatar_url: 'https://cdn.discordapp.com/avatars/1/a.png' }, 'an award without them keeps them')
  t.match((await call('PUT', '/members/1', { display_name: null })).body, { display_name: null, avatar_url: 'https://cdn.discordapp.com/avatars/1/a.png' }, 'null clears one')
  t.match((await call('PUT', '/members/1', { avatar_url: null, display_name: 'x'.repeat(50) + '🎉'.repeat(50) })).body, { display_name: 'x'.repeat(50) + '🎉'.repeat(50), avatar_url: null }, '100 code points')
  t.match((await read('/members/1/around')).body.data[0], { display_name: 'x'.repeat(50) + '🎉'.repeat(50), avatar_url: null }, 'around entries carry them')
  for (const [body, message] of [
    [{ display_name: 'x'.repeat(100) + '🎉' }, /display_name/],
    [{ display_name: '' }, /display_name/],
    [{ display_name: 'a\u0007b' }, /display_name/],
    [{ avatar_url: 'http://cdn.example/a.png' }, /avatar_url/],
    [{ avatar_url: 'https://' + 'a'.repeat(510) }, /avatar_url/],
    [{ avatar_url: 'https://user:pw@cdn.example/a.png' }, /avatar_url/]
  ] as const) {
    t.match(await call('PUT', '/members/1', body), { status: 400, body: { code: 'invalid_parameter', message } }, JSON.stringify(body).slice(0, 60))
  }
  t.match(await call('PUT', '/members/2', { display_name: 'nobody' }), { status: 404, body: { code: 'member_not_found' } }, 'a name alone does not make a member')
})
