// The server's events on its stats stream (CONTRACT part 4, "Events out": the same events go to
// the live streams of the server's stats stream as typed events), beside the unchanged `stats`
// events; the same event, with the same id, as a webhook gets.
import t from 'tap'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'
import { SseReader } from './helpers/sse.js'
import { startReceiver, until } from './helpers/receiver.js'
import { WebhookStore } from '../src/webhooks/webhook-store.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const G = '7300000000000000001'

t.test('a stats stream gets member.leveled_up and member.rank_entered_top as typed events, with the webhook\'s body; the stats events go on', async (t) => {
  const ctx = await buildTestApp(t, server.url, { webhookAllowPrivate: true })
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
  const { key } = await ctx.apiKeys.create({ guildId: G, plan: 'professional' })
  await ctx.writer.awardXp({ guildId: G, userId: '1', xp: 10 })
  const receiver = await startReceiver(t)
  await new WebhookStore(ctx.redis, ctx.keys, { allowPrivate: true }).create(G, { url: receiver.url, events: ['member.leveled_up'] })
  const stats = await SseReader.open(t, base, `/api/v1/servers/${G}/stats/stream`, { 'x-api-key': key })
  const board = await SseReader.open(t, base, `/api/v1/servers/${G}/leaderboard/stream`, { 'x-api-key': key })
  const first = await stats.event(0)
  t.equal(first.event, 'stats')
  // The stream listens from its first tick on: award until an event arrives.
  await until(async () => {
    await ctx.writer.awardXp({ guildId: G, userId: '2', xp: 500, username: 'Ada' })
    await stats.until(() => stats.events.some((e) => e.event === 'member.leveled_up'), 'a level-up', 1500).catch(() => {})
    return stats.events.some((e) => e.event === 'member.leveled_up')
  }, 'a typed event on the stats stream')
  const typed = stats.events.filter((e) => e.event !== 'stats')
  const levelUp = typed.find((e) => e.event === 'member.leveled_up')!
  t.equal(levelUp.id, undefined, 'no id: a reconnection\'s Last-Event-ID stays the stats ETag')
  const body = JSON.parse(levelUp.data)
  t.match(body, { id: /^evt_/, type: 'member.leveled_up', server_id: G, data: { user_id: '2', username: 'Ada', roles: { add: [], remove: [] } } })
  t.ok(body.data.new_level > body.data.old_level && body.data.xp % 500 === 0)
  const entered = typed.find((e) => e.event === 'member.rank_entered_top')
  t.match(JSON.parse(entered?.data ?? '{}'), { type: 'member.rank_entered_top', data: { user_id: '2', rank: 1 } }, 'every type, not only the webhook\'s')
  await stats.until(() => stats.events.filter((e) => e.event === 'stats').length >= 2, 'the next stats event')
  t.match(stats.events.filter((e) => e.event === 'stats')[1], { id: /^"/ }, 'stats events unchanged: their ETag as id')
  await until(() => receiver.received.some((r) => r.json.id === JSON.parse(levelUp.data).id), 'the webhook\'s copy')
  t.same(receiver.received.find((r) => r.json.id === JSON.parse(levelUp.data).id)?.body, levelUp.data, 'the same body, byte for byte')
  t.ok(board.events.every((e) => e.event === 'leaderboard'), 'the leaderboard stream carries no typed events')
})
