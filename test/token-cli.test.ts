// The CLI's write-API tokens (tokens create, list, rotate, revoke) and keys for several or every
// server (keys create --servers / --all-servers), as a user runs them.
import t from 'tap'
import { redisFixture } from './helpers/redis-server.js'
import { cliRunner, lines } from './helpers/cli.js'
import { TokenStore } from '../src/tokens/token-store.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'

const PREFIX = 'tokencli'
const { server, redis, keys } = await redisFixture(t, PREFIX)
const cli = cliRunner(t, { REDIS_URL: server.url, REDIS_PREFIX: PREFIX })
const tokens = new TokenStore(redis, keys)

t.test('tokens create --json prints the token once; only its hash is stored; list, rotate and revoke by id', async (t) => {
  const created = await cli(['tokens', 'create', '--name', 'py bot', '--servers', '11,12', '--scopes', 'write,transfer', '--json'])
  t.equal(created.code, 0, created.stderr)
  const made = JSON.parse(created.stdout) as { id: string, name: string, servers: string[], scopes: string[], token: string }
  t.match(made, { name: 'py bot', servers: ['11', '12'], scopes: ['write', 'transfer'], token: /^lba_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/ })
  t.same(Object.keys(made).sort(), ['id', 'name', 'scopes', 'servers', 'token'])
  t.match(await tokens.check(made.token), { id: made.id, servers: ['11', '12'], scopes: ['write', 'transfer'] })
  t.notOk(Object.values(await redis.hgetall(keys.token(made.id))).includes(made.token), 'never stored')

  const every = JSON.parse((await cli(['tokens', 'create', '--name', 'dash', '--json'])).stdout) as { servers: string, scopes: string[] }
  t.same([every.servers, every.scopes], ['*', ['write']], 'default: every server, scope write')

  const listed = await cli(['tokens', 'list'])
  t.match(lines(listed.stdout)[0], /^ID\s+NAME\s+SERVERS\s+SCOPES\s+STATUS/)
  t.notOk(listed.stdout.includes(made.token))
  t.ok(listed.stdout.includes(made.id))

  const rotated = JSON.parse((await cli(['tokens', 'rotate', made.id, '--json'])).stdout) as { token: string }
  t.equal(await tokens.check(made.token), null, 'the old secret is refused')
  t.ok(await tokens.check(rotated.token))
  t.equal((await cli(['tokens', 'revoke', made.id])).code, 0)
  t.equal(await tokens.check(rotated.token), null, 'revoked')
  const json = JSON.parse((await cli(['tokens', 'list', '--json'])).stdout) as Array<{ id: string, revoked_at: string | null }>
  t.ok(json.find((x) => x.id === made.id)?.revoked_at)
})

t.test('tokens create refuses a bad scope, a bad server list, and --servers with --all-servers', async (t) => {
  for (const args of [['--scopes', 'write,admin'], ['--servers', '1,01'], ['--servers', '1', '--all-servers']]) {
    const run = await cli(['tokens', 'create', '--name', 'x', ...args])
    t.equal(run.code, 1, args.join(' '))
    t.match(run.stderr, /^error: /)
  }
  t.equal((await cli(['tokens', 'revoke', '0123456789abcdef'])).code, 1, 'unknown id')
})

t.test('keys create --servers and --all-servers make keys of several or every server, listed with their servers', async (t) => {
  const listed = JSON.parse((await cli(['keys', 'create', '--servers', '21,22', '--plan', 'starter', '--json'])).stdout) as { id: string, servers: string[], guild_id: null }
  t.same([listed.servers, listed.guild_id], [['21', '22'], null])
  const every = JSON.parse((await cli(['keys', 'create', '--all-servers', '--plan', 'free', '--json'])).stdout) as { id: string, servers: string }
  t.equal(every.servers, '*')
  const table = await cli(['keys', 'list', '--guild', '22'])
  t.match(table.stdout, /SERVERS/)
  t.match(table.stdout, new RegExp(`${listed.id}\\s+-\\s+21,22\\s+starter`))
  t.match(table.stdout, new RegExp(`${every.id}\\s+-\\s+\\*\\s+free`))
  t.same((await new ApiKeyStore(redis, keys).list('21')).map((k) => k.id).sort(), [listed.id, every.id].sort())
  const none = await cli(['keys', 'create', '--plan', 'free'])
  t.equal(none.code, 1)
  t.match(none.stderr, /--guild G, --servers G1,G2,… or --all-servers/)
})
