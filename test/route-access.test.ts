// Routes are closed by construction (src/pipeline/access.ts): each declares its access once, and
// an app whose routes name a server without a server check, write without a scope, or sit under
// the API's prefix undeclared is refused when it is built, never served. And what the declaration
// derives holds: the server check uses the validated parameters, so no Redis key is built from a
// value validation refused, and a refused URL gets its 400 whatever If-None-Match it carries.
import t, { type Test } from 'tap'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { Redis } from 'ioredis'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp, oneAtATime } from './helpers/app.js'
import { buildTestAdmin } from './helpers/admin.js'
import { buildApp } from '../src/app.js'
import { buildAdminApp } from '../src/admin/admin-app.js'
import { parseConfig } from '../src/config.js'
import { guildOf, namesServer } from '../src/pipeline/access.js'
import { reads } from '../src/routes/api/reads.js'

t.jobs = 4

const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const GUILD = '7100000000000000001'
const ok = async (): Promise<string> => 'served'

/** Builds the listener with `route` added inside a plugin, and returns why its build failed (or null). */
async function buildError (t: Test, listener: 'api' | 'admin', route: RouteOptions): Promise<string | null> {
  const config = parseConfig({ redisUrl: server.url, logLevel: 'silent', redisPrefix: `acc${process.pid}`, adminPort: 0 })
  const app = listener === 'api' ? buildApp(config) : buildAdminApp(config)
  t.teardown(async () => { await app.close() })
  app.register(async (scope: FastifyInstance) => { scope.route(route) })
  try {
    await oneAtATime(async () => { await app.ready() })
    return null
  } catch (err) {
    return (err as Error).message
  }
}

t.test('an app whose route names a server without a server check is refused when built', async (t) => {
  for (const url of ['/api/v1/servers/:guildId/secret', '/api/v1/servers/:id/secret', '/guilds/:g/x', '/export/:server_id']) {
    t.match(await buildError(t, 'api', { method: 'GET', url, handler: ok }), /names a server but declares no access/, `${url}, undeclared`)
  }
  t.match(await buildError(t, 'api', { method: 'GET', url: '/api/v1/servers/:guildId/secret', config: { access: { kind: 'key', server: null } }, handler: ok }),
    /names a server but its access has no server check/, 'declared with server: null')
  t.match(await buildError(t, 'api', { method: 'GET', url: '/public/:slug/secret', config: { access: { kind: 'service' } }, handler: ok }),
    /names a server but is declared open to anyone/, 'a public board slug names a server too')
  t.match(await buildError(t, 'admin', { method: 'POST', url: '/admin/v1/servers/:guild/wipe', config: { access: { kind: 'token', scope: 'write', server: null } }, handler: ok }),
    /names a server but its access has no server check/, 'a write route of the admin listener')
})

t.test('a write route without a scope, or an undeclared route that may change something, is refused', async (t) => {
  t.match(await buildError(t, 'admin', {
    method: 'POST',
    url: '/admin/v1/servers/:guild_id/wipe',
    handler: ok,
    // What a plain object from JavaScript could hold: the types forbid it, the guard refuses it.
    config: { access: { kind: 'token', server: guildOf } as never }
  }), /is a write route without a scope/)
  t.match(await buildError(t, 'admin', { method: 'POST', url: '/admin/v1/flush', handler: ok }), /declares no access/, 'under the prefix')
  t.match(await buildError(t, 'api', { method: 'DELETE', url: '/cache', handler: ok }), /may change something but declares no access/, 'outside the prefix')
  t.match(await buildError(t, 'api', { method: 'GET', url: '/api/v1/tokens', handler: ok }), /declares no access/, 'a GET under the prefix')
})

t.test("a route of the other listener's kind is refused", async (t) => {
  t.match(await buildError(t, 'api', { method: 'POST', url: '/api/v1/servers/:guild_id/awards', config: { access: { kind: 'token', scope: 'write', server: guildOf } }, handler: ok }),
    /does not serve token routes/, 'the public port never serves a write')
  t.match(await buildError(t, 'admin', { method: 'GET', url: '/admin/v1/servers/:guild_id/board', config: { access: { kind: 'key', server: guildOf } }, handler: ok }),
    /does not serve key routes/)
})

t.test('declared routes build, and an undeclared GET that names no server outside the API stays open', async (t) => {
  t.equal(await buildError(t, 'api', { method: 'GET', url: '/robots.txt', handler: ok }), null)
  t.equal(await buildError(t, 'admin', { method: 'GET', url: '/admin/v1/docs/extra', handler: ok }), null, 'the documents of the prefix')
})

t.test('every public read declares its server from the validated parameters', async (t) => {
  for (const read of reads) {
    t.ok(namesServer(read.path), `${read.path} names a server`)
    t.equal(read.server({ guild_id: GUILD, user_id: '5' }), GUILD, `${read.operationId}: the server is the path's guild_id`)
  }
})

t.test('no Redis key is built from a value validation refused; a refused URL is 400 whatever If-None-Match it holds', async (t) => {
  const own = await RedisServer.start()
  t.teardown(async () => { await own.close() })
  const ctx = await buildTestApp(t, own.url)
  const key = await ctx.apiKeys.create({ servers: '*', plan: 'professional' })
  await ctx.writer.awardXp({ guildId: GUILD, userId: '11', xp: 50 })
  const good = await ctx.app.inject({ url: `/api/v1/servers/${GUILD}/leaderboard`, headers: { 'x-api-key': key.key } })
  t.equal(good.statusCode, 200)
  const etag = good.headers.etag as string

  const watcher = new Redis(own.url)
  const monitor = await watcher.monitor()
  t.teardown(() => { monitor.disconnect(); watcher.disconnect() })
  const touched: string[] = []
  monitor.on('monitor', (_time: string, args: string[]) => { touched.push(args.join(' ')) })

  for (const url of [`/api/v1/servers/${GUILD}/leaderboard?limit=1000`, `/api/v1/servers/${GUILD}/leaderboard?limit=1e1`, `/api/v1/servers/${GUILD}/leaderboard?period=year`]) {
    const refused = await ctx.app.inject({ url, headers: { 'x-api-key': key.key, 'if-none-match': etag } })
    t.equal(refused.statusCode, 400, `${url}: 400, not the valid page's 304`)
    t.equal(refused.json().code, 'invalid_parameter')
    t.ok(refused.headers['x-ratelimit-remaining'] !== undefined, 'counted')
  }
  for (const guild of ['0', 'abc}{x', `${GUILD}0`.repeat(2)]) {
    const refused = await ctx.app.inject({ url: `/api/v1/servers/${encodeURIComponent(guild)}/stats`, headers: { 'x-api-key': key.key } })
    t.equal(refused.statusCode, 400, `guild ${guild}: 400 for a key of every server`)
  }
  await ctx.redis.echo('end') // MONITOR has seen everything before it
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(touched.filter((command) => /abc\}\{x|:\{0\}|\{(7100000000000000001){2}/.test(command)), [], 'no command named a key of the refused guild ids')
  t.ok(touched.some((command) => command.includes(':rate')), 'the refused requests were counted all the same')
})

t.test('the write API checks the server of a route after validation: a token of one server gets 403 on another, 400 for a malformed one', async (t) => {
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token([GUILD], ['write'])
  const award = { awards: [{ user_id: '5', xp: 10 }] }
  const call = async (guild: string) => await ctx.admin.inject({ method: 'POST', url: `/admin/v1/servers/${guild}/awards`, headers: { authorization: `Bearer ${token}` }, payload: award })
  t.equal((await call(GUILD)).statusCode, 200)
  t.equal((await call('7100000000000000002')).statusCode, 403)
  t.equal((await call('abc')).statusCode, 400)
})
