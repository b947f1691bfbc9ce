// The packages as users get them: `npm pack` of the service (library, server, CLI) holds the
// built code and nothing of the sources or tests; the client's own package, packed and installed
// into a new project with no network, is imported and used against a live service, and its
// types serve a TypeScript dashboard.
import t from 'tap'
import { execFile, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './helpers/built.js'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestApp } from './helpers/app.js'

const GUILD = '1800000000000000001'

function run (command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${String(result.status)}):\n${result.stdout}${result.stderr}`)
  return result.stdout
}

interface Packed { filename: string, files: Array<{ path: string }> }

function pack (args: string[], destination: string): Packed {
  // dist/ is built already (./helpers/built.js builds it when src/ changed): no prepare step.
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination, ...args], ROOT)) as Packed[]
  if (packed === undefined) throw new Error('npm pack printed nothing')
  return packed
}

const dir = mkdtempSync(join(tmpdir(), 'lb-package-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

t.test('npm pack of the service holds the built library, server, CLI and Lua scripts, and no sources or tests', async (t) => {
  const files = pack(['--dry-run'], dir).files.map((file) => file.path)
  for (const entry of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/server.js', 'dist/cli/main.js', 'dist/client/index.js', 'dist/redis/commands/award-xp-21.lua']) {
    t.ok(files.includes(entry), `packs ${entry}`)
  }
  t.same(files.filter((path) => /^(src|test|scripts)\//.test(path)), [], 'no sources, tests or scripts')
})

t.test('the client package, installed into a new project, reads a live service and types a TypeScript dashboard', async (t) => {
  const packed = pack(['-w', 'packages/client'], dir)
  t.same(packed.files.map((file) => file.path).filter((path) => !/^(dist\/|package\.json$|README\.md$)/.test(path)), [], 'only dist/, its README and package.json')
  const project = join(dir, 'dashboard')
  run('mkdir', ['-p', project], dir)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'dashboard', private: true, type: 'module' }))
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, packed.filename)], project)
  const installed = JSON.parse(run('npm', ['ls', '--all', '--json'], project)) as { dependencies: Record<string, { dependencies?: object }> }
  t.same(Object.keys(installed.dependencies), ['guild-leaderboard-client'], 'one package')
  t.equal(installed.dependencies['guild-leaderboard-client']?.dependencies, undefined, 'with no dependencies of its own')

  const server = await RedisServer.start()
  t.teardown(async () => { await server.close() })
  const { app, writer, apiKeys } = await buildTestApp(t, server.url)
  await writer.awardXp({ guildId: GUILD, userId: '42', xp: 500, username: 'Ada' })
  const { key } = await apiKeys.create({ guildId: GUILD, plan: 'free' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0

  writeFileSync(join(project, 'read.mjs'), `
import { LeaderboardClient, LeaderboardApiError } from 'guild-leaderboard-client'
const client = new LeaderboardClient({ baseUrl: 'http://127.0.0.1:${port}/api/v1', apiKey: process.argv[2] })
const { data } = await client.leaderboard('${GUILD}', { limit: 5 })
const refused = await new LeaderboardClient({ baseUrl: 'http://127.0.0.1:${port}/api/v1', apiKey: 'lbk_0000000000000000_nope' })
  .stats('${GUILD}').catch((err) => err instanceof LeaderboardApiError ? err.code : String(err))
console.log(JSON.stringify({ data, refused }))
`)
  // Not spawnSync: the service answers from this process.
  const read = await promisify(execFile)(process.execPath, ['read.mjs', key], { cwd: project, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  t.same(JSON.parse(read.stdout), { data: { data: [{ rank: 1, user_id: '42', username: 'Ada', display_name: null, avatar_url: null, level: 3, xp: 500, level_progress: { xp: 25, required: 295 }, rank_change: null }], total: 1, page: 1 }, refused: 'invalid_api_key' })

  writeFileSync(join(project, 'dashboard.ts'), `
import { LeaderboardClient, LeaderboardApiError, type ErrorCode, type MemberRecord } from 'guild-leaderboard-client'
export async function show (client: LeaderboardClient): Promise<string> {
  try {
    const member: MemberRecord = (await client.member('1', '2')).data
    return member.username + ' ' + String(member.level_progress.required)
  } catch (err) {
    const code: ErrorCode | \`http_\${number}\` | undefined = err instanceof LeaderboardApiError ? err.code : undefined
    return code === 'member_not_found' ? 'not a member' : 'failed'
  }
}
`)
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] },
    files: ['dashboard.ts']
  }))
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { encoding: 'utf8' })
  t.equal(tsc.status, 0, `a TypeScript project compiles against the package's types: ${tsc.stdout}${tsc.stderr}`)
})
