// The Python example of docs/bots.md (the block between the python-example markers) run as written,
// with python3's standard library only, against a live write API on a real port.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { boardMember } from '../src/redis/keys.js'

const run = promisify(execFile)
const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const readme = readFileSync(new URL('../docs/bots.md', import.meta.url), 'utf8')
const block = /<!-- python-example:start -->\n```python\n([\s\S]*?)```\n<!-- python-example:end -->/.exec(readme)?.[1]

t.test('the Python example of docs/bots.md awards XP (retry-safe) and claims a daily reward twice against a live service', async (t) => {
  t.ok(block, 'docs/bots.md holds the example')
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token(['1100000000000000001'], ['write'])
  const base = await ctx.admin.listen({ port: 0, host: '127.0.0.1' })
  const script = t.testdir({ 'bot.py': block ?? '' })
  const { stdout } = await run('python3', [`${script}/bot.py`], {
    env: { ...process.env, LEADERBOARD_TOKEN: token, LEADERBOARD_ADMIN_URL: `${base}/admin/v1` }, timeout: 30_000
  })
  const next = new Date((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000).toISOString()
  t.same(stdout.trim().split('\n'), [
    '1100000000000000777: +150 XP, now 150 XP, level 1 (level up!)',
    'daily streak 1',
    `already claimed today; next claim from ${next}`
  ])
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild('1100000000000000001').board, boardMember('1100000000000000777'))), 150, 'recorded')
})
