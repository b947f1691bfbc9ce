// Overload: past what the instance can serve (here: an event loop kept busy 90% of the time,
// against a threshold of 20 ms mean delay), requests are answered at once with 503
// service_unavailable and retry-after; /healthz is never shed; service resumes by itself.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '1600000000000000001'
const STATS = `/api/v1/servers/${GUILD}/stats`

t.test('an overloaded instance sheds requests with 503 and retry-after, keeps /healthz, and recovers', async (t) => {
  const { app, apiKeys } = await buildTestApp(t, server.url, { maxEventLoopDelayMs: 20 })
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const stats = async () => await app.inject({ url: STATS, headers: { 'x-api-key': key } })
  t.equal((await stats()).statusCode, 200, 'served while the event loop is free')

  // The overload: 90 ms of every 100 ms spent in synchronous work.
  const hog = setInterval(() => {
    const end = performance.now() + 90
    while (performance.now() < end);
  }, 100)
  t.teardown(() => { clearInterval(hog) })
  let shed = await stats()
  for (const deadline = Date.now() + 15_000; shed.statusCode !== 503 && Date.now() < deadline;) {
    await sleep(50)
    shed = await stats()
  }
  t.equal(shed.statusCode, 503, 'requests are shed once the mean event-loop delay passes the threshold')
  t.same(shed.json(), { statusCode: 503, error: 'Service Unavailable', code: 'service_unavailable', message: 'this instance is overloaded; retry in 2 s' },
    "in the contract's shape")
  t.equal(shed.headers['retry-after'], '2', 'with retry-after')
  const health = await app.inject({ url: '/healthz' })
  t.equal(health.statusCode, 200, '/healthz is not shed: the instance is alive, only busy')

  clearInterval(hog)
  let served = await stats()
  for (const deadline = Date.now() + 15_000; served.statusCode !== 200 && Date.now() < deadline;) {
    await sleep(100)
    served = await stats()
  }
  t.equal(served.statusCode, 200, 'served again once the event loop is free')
})
