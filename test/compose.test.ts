// The container setup, checked by reading it: no Docker engine runs where the tests run, so this
// pins the structure that `docker compose up` relies on.
import t, { type Test } from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { parseConfig } from '../src/config.js'
import { CLOSE_GRACE_MS } from '../src/pipeline/lifecycle.js'

const root = new URL('../', import.meta.url)
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8')

type Env = Record<string, string>
interface Service {
  image?: string
  build?: string | { context?: string, dockerfile?: string }
  command?: string | string[]
  environment?: Record<string, string | number | boolean | null> | string[]
  ports?: Array<string | number | { target?: number, published?: number | string }>
  volumes?: Array<string | { type?: string, source?: string, target?: string }>
  depends_on?: string[] | Record<string, { condition?: string }>
  entrypoint?: string | string[]
  profiles?: string[]
  healthcheck?: { test?: string | string[] }
  restart?: unknown
  stop_grace_period?: string
  secrets?: Array<string | { source?: string, target?: string }>
}
interface ComposeFile {
  version?: unknown
  services?: Record<string, Service>
  volumes?: Record<string, unknown>
  secrets?: Record<string, { file?: string, environment?: string }>
}

/**
 * The file as Compose reads it with `env` as the shell's environment: `${VAR}`, `${VAR:-default}`
 * and `${VAR:?message}` replaced, `$$` left as one `$` for the container's shell.
 */
function composeWith (env: Env): ComposeFile {
  const text = read('docker-compose.yml').replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g, (whole, name?: string, op?: string, arg?: string) => {
    if (whole === '$$') return '$'
    const value = env[name ?? '']
    if (value !== undefined && value !== '') return value
    if (op === '?') throw new Error(`compose would stop: ${name ?? ''} ${arg ?? ''}`)
    return op === '-' ? arg ?? '' : ''
  })
  return parse(text) as ComposeFile
}

const compose = composeWith({})
const services = compose.services ?? {}
const redis = services.redis ?? {}
const api = services.api ?? {}
const seed = services.seed ?? {}
const cli = services.cli ?? {}

/** `environment` may be a map or a list of KEY=VALUE; compare them as one map. */
function envOf (service: Service): Env {
  const { environment } = service
  if (environment === undefined) return {}
  if (Array.isArray(environment)) {
    return Object.fromEntries(environment.map((entry) => {
      const at = entry.indexOf('=')
      return at === -1 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)]
    }))
  }
  return Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, String(v ?? '')]))
}

const words = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean)

const healthcheckText = (service: Service): string => words(service.healthcheck?.test).join(' ')

/** Named volumes a service mounts (bind mounts start with `.`, `/` or `~`). */
function namedVolumes (service: Service): string[] {
  return (service.volumes ?? []).flatMap((volume) => {
    if (typeof volume === 'string') {
      const source = volume.split(':')[0] ?? ''
      return volume.includes(':') && !/^[./~]/.test(source) ? [source] : []
    }
    return volume.type === 'volume' && volume.source !== undefined ? [volume.source] : []
  })
}

function pointsAtRedisService (url: string | undefined): boolean {
  if (url === undefined) return false
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'redis:' && parsed.hostname === 'redis' && (parsed.port === '' || parsed.port === '6379')
  } catch {
    return false
  }
}

const SECRET_FILE = '/run/secrets/redis_password'
const mountsSecret = (service: Service): boolean =>
  (service.secrets ?? []).some((s) => (typeof s === 'string' ? s : s.source) === 'redis_password')

/**
 * The REDIS_URL a service's command sets before it execs, with the secret read as `<password>`,
 * and what it then runs: api and seed build the URL from the secret file in their shell.
 */
function redisUrlFromCommand (service: Service, part: 'command' | 'entrypoint' = 'command'): { url?: string, runs?: string } {
  const script = words(service[part]).join(' ')
  const match = /REDIS_URL="([^"]+)" exec (.+)$/.exec(script)
  return { url: match?.[1]?.replace(`$(cat ${SECRET_FILE})`, '<password>'), runs: match?.[2] }
}

const dependsOnHealthyRedis = (service: Service): boolean =>
  !Array.isArray(service.depends_on) && service.depends_on?.redis?.condition === 'service_healthy'

t.test('the compose file', async (t) => {
  t.equal(compose.version, undefined, 'Compose spec: no obsolete `version:` key')
  t.same(Object.keys(services).sort(), ['api', 'cli', 'redis', 'seed'], 'services redis, api, seed and cli')
})

t.test('redis: the targeted version, persistent, password-protected and health-checked', async (t) => {
  t.match(redis.image, /^redis:7\.0(\.\d+)?(-[a-z0-9.]+)?$/, 'a Redis 7.0 image')
  const script = words(redis.command).join(' ')
  t.match(script, /(^|\s)--appendonly yes(\s|$)/, 'AOF persistence on')
  t.ok(mountsSecret(redis), 'mounts the redis_password secret')
  t.match(script, `pw="$(cat ${SECRET_FILE})"`, 'reads the password from the secret')
  t.match(script, /exec redis-server - .*<<EOF\s+requirepass \$pw\s/, 'and requires it, through the configuration on stdin (not argv)')
  t.match(script, /"" \| \*\[!A-Za-z0-9\._~-\]\*\)[^;]*?echo "set REDIS_PASSWORD[^"]*" >&2\s+exit 1/, 'refuses to start without a URL-safe password')
  t.match(script, /#\s*maxmemory \d+[kmg]b/i, 'a commented maxmemory to start from')
  t.match(script, /#\s*maxmemory-policy noeviction/, 'with noeviction: evicting keys would break the exact aggregates')
  t.ok(namedVolumes(redis).length > 0, 'data on a named volume')
  t.ok((redis.volumes ?? []).some((v) => (typeof v === 'string' ? v.split(':')[1] : v.target) === '/data'),
    'the volume is mounted where the image keeps its data (/data)')
  t.match(healthcheckText(redis), /redis-cli.*\bping\b/i, 'healthcheck pings with redis-cli')
  t.match(healthcheckText(redis), `REDISCLI_AUTH="$(cat ${SECRET_FILE})"`, 'authenticated, the password off the command line')
  t.match(script, /^\s*lazyfree-lazy-expire yes$/m, 'a big key that expires is freed off the main thread')
  const env = envOf(redis)
  for (const name of ['JE_MALLOC_CONF', 'MALLOC_CONF']) {
    t.same(env[name]?.split(',').sort(), ['dirty_decay_ms:-1', 'muzzy_decay_ms:-1'], `${name}: jemalloc keeps the memory Redis frees (the image's own jemalloc, a system one)`)
  }
})

t.test('the Redis password comes from REDIS_PASSWORD or a secret file, never from the compose file', async (t) => {
  const secret = compose.secrets?.redis_password
  t.ok(secret !== undefined, 'a top-level secret redis_password')
  t.ok(secret?.environment === 'REDIS_PASSWORD' || (secret?.file !== undefined && secret.file !== ''),
    'sourced from REDIS_PASSWORD in the environment, or from a file')
  t.notMatch(read('docker-compose.yml'), /requirepass [^$\s]/, 'no password written in the file')
  for (const [name, service, part] of [['api', api, 'command'], ['seed', seed, 'command'], ['cli', cli, 'entrypoint']] as const) {
    t.ok(mountsSecret(service), `${name} mounts the secret`)
    const { url } = redisUrlFromCommand(service, part)
    t.ok(pointsAtRedisService(url), `${name}: REDIS_URL points at the redis service (${String(url)})`)
    t.equal(url === undefined ? undefined : decodeURIComponent(new URL(url.replace('<password>', 'pw')).password), 'pw',
      `${name}: REDIS_URL carries the password from the secret`)
  }
})

t.test('api: built here, on PORT (3000 unless set) for the mapping, the server and the healthcheck, wired to redis', async (t) => {
  const build = typeof api.build === 'string' ? { context: api.build } : api.build
  t.ok(build !== undefined && ['.', './'].includes(build.context ?? ''), 'builds from the project directory')
  t.equal(build?.dockerfile ?? 'Dockerfile', 'Dockerfile', 'with the Dockerfile there')
  t.ok(existsSync(new URL('Dockerfile', root)), 'which exists')
  for (const port of [undefined, '8080']) {
    const service = composeWith(port === undefined ? {} : { PORT: port }).services?.api ?? {}
    const expected = port ?? '3000'
    t.ok((service.ports ?? []).some((p) => typeof p === 'object'
      ? String(p.target) === expected && String(p.published) === expected
      : new RegExp(`^(\\d+\\.\\d+\\.\\d+\\.\\d+:)?${expected}:${expected}(/tcp)?$`).test(String(p))),
    `PORT=${String(port)}: publishes container port ${expected} on host port ${expected}`)
    t.equal(envOf(service).PORT, expected, `PORT=${String(port)}: the server listens on ${expected}`)
  }
  t.match(healthcheckText(api), /\/healthz/, 'healthcheck on /healthz')
  t.match(healthcheckText(api), /\bnode\b.*\bfetch\(.*process\.env\.PORT/, 'with node fetch (the slim image has no curl), on the server\'s PORT')
  const env = envOf(api)
  t.equal(env.HOST, '0.0.0.0', 'listens on every interface inside the container')
  t.equal(redisUrlFromCommand(api).runs, 'node dist/server.js', 'execs the server, so node is PID 1 and gets the signals')
  t.ok(dependsOnHealthyRedis(api), 'starts once redis is healthy')
})

/** A Compose duration (`15s`, `1m30s`, `500ms`) in ms; NaN when it is not one. */
function durationMs (value: string | undefined): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(value ?? '')
  if (match === null || (value ?? '') === '') return NaN
  const [, h = '0', m = '0', s = '0', ms = '0'] = match
  return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000 + Number(ms)
}

t.test('api: a stop grace longer than the drain and the close, so `docker compose stop` never kills it midway', async (t) => {
  const { SHUTDOWN_DRAIN_MS: drain = '' } = envOf(api)
  const drainMs = drain === '' ? parseConfig({}).shutdownDrainMs : Number(drain)
  const graceMs = durationMs(api.stop_grace_period)
  t.ok(graceMs > drainMs + CLOSE_GRACE_MS,
    `stop_grace_period ${String(api.stop_grace_period)} (${graceMs} ms) > the drain (${drainMs} ms) + the close's bound (${CLOSE_GRACE_MS} ms)`)
})

t.test('api: CORS_ORIGINS and METRICS_PORT pass through from the environment, empty (off) unless set', async (t) => {
  const unset = envOf(composeWith({}).services?.api ?? {})
  t.equal(unset.CORS_ORIGINS, '')
  t.equal(unset.METRICS_PORT, '')
  const set = envOf(composeWith({ CORS_ORIGINS: 'https://dash.example', METRICS_PORT: '9464' }).services?.api ?? {})
  t.equal(set.CORS_ORIGINS, 'https://dash.example')
  t.equal(set.METRICS_PORT, '9464')
  t.notOk((composeWith({ METRICS_PORT: '9464' }).services?.api?.ports ?? []).some((p) => String(typeof p === 'object' ? p.published : p).includes('9464')),
    'the metrics port is not published on the host')
})

t.test('api: ADMIN_PORT passes through (empty: the write API is off), on every interface of the container, not published', async (t) => {
  t.equal(envOf(composeWith({}).services?.api ?? {}).ADMIN_PORT, '')
  const set = envOf(composeWith({ ADMIN_PORT: '3001' }).services?.api ?? {})
  t.same([set.ADMIN_PORT, set.ADMIN_HOST], ['3001', '0.0.0.0'])
  t.notOk((composeWith({ ADMIN_PORT: '3001' }).services?.api?.ports ?? []).some((p) => String(typeof p === 'object' ? p.published : p).includes('3001')),
    'the write API\'s port is not published on the host')
})

t.test('seed: a one-shot run of the CLI demo command on the same build', async (t) => {
  t.same(seed.build, api.build, 'same build as api')
  t.match(redisUrlFromCommand(seed).runs, /^node dist\/cli\/main\.js demo(\s|$)/, 'runs the CLI demo command')
  t.match(redisUrlFromCommand(seed).runs, /\s--keep-key(\s|$)/, 'making a key on the first run only, not a new never-expiring one at every run')
  t.match(redisUrlFromCommand(composeWith({ PORT: '8080' }).services?.seed ?? {}).runs, '--base-url http://localhost:8080',
    'its curl line follows PORT')
  t.ok(seed.restart === undefined || seed.restart === 'no', `never restarted (restart: ${String(seed.restart)})`)
  t.ok(dependsOnHealthyRedis(seed), 'starts once redis is healthy')
})

t.test('cli: the CLI on demand (`docker compose run --rm cli <command>`), never started by `up`', async (t) => {
  t.same(cli.build, api.build, 'same build as api')
  t.ok((cli.profiles ?? []).length > 0, 'in a profile, so `docker compose up` leaves it out')
  t.equal(redisUrlFromCommand(cli, 'entrypoint').runs, 'node dist/cli/main.js "$@" leaderboard',
    'execs the CLI with the arguments of `run` ("$@"; sh -c takes the word after the script as $0)')
  t.same(words(cli.command), ['--help'], 'with no arguments, its help')
  t.ok(cli.restart === undefined || cli.restart === 'no', 'never restarted')
  t.ok(dependsOnHealthyRedis(cli), 'starts once redis is healthy')
})

t.test('every named volume a service mounts is declared', async (t) => {
  const declared = Object.keys(compose.volumes ?? {})
  const used = Object.values(services).flatMap(namedVolumes)
  t.ok(used.length > 0, 'some named volume is used')
  for (const name of used) t.ok(declared.includes(name), `volume ${name} is declared`)
})

/** Dockerfile instructions, continuation lines joined and comments dropped. */
function instructions (text: string): Array<{ op: string, args: string }> {
  return text.replace(/\\\r?\n/g, ' ').split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [op = '', ...rest] = line.split(/\s+/)
      return { op: op.toUpperCase(), args: rest.join(' ') }
    })
}

const dockerfile = instructions(read('Dockerfile'))
const lastFrom = dockerfile.map((i) => i.op).lastIndexOf('FROM')
const runtime = dockerfile.slice(lastFrom)
const runtimeArgs = (op: string): string[] => runtime.filter((i) => i.op === op).map((i) => i.args)

t.test('Dockerfile: a small runtime stage that runs as a user and checks its own health', async (t) => {
  const froms = dockerfile.filter((i) => i.op === 'FROM')
  t.ok(froms.length >= 2, 'multi-stage (a build stage and a runtime stage)')
  for (const from of froms) t.match(from.args, /^node:24(-bookworm)?-slim\b/, `Node 24 LTS slim base (${from.args})`)
  const engines = (JSON.parse(read('package.json')) as { engines?: { node?: string } }).engines?.node
  t.equal(engines, '>=22', 'package.json engines: Node 22 or later')
  t.ok(froms.every((from) => Number(/^node:(\d+)/.exec(from.args)?.[1]) >= Number(/\d+/.exec(engines ?? '')?.[0])),
    'the image\'s Node satisfies engines')
  t.ok(dockerfile.some((i) => i.op === 'RUN' && /\bnpm run build\b/.test(i.args)) && lastFrom > 0, 'builds before the runtime stage')
  t.ok(runtimeArgs('RUN').some((a) => /\bnpm ci\b.*--omit=dev\b/.test(a)), 'runtime installs production dependencies only')
  t.ok(runtimeArgs('COPY').some((a) => /--from=\S+.*\bdist\b/.test(a)), 'runtime takes dist/ from the build stage')

  const users = runtimeArgs('USER')
  t.ok(users.length > 0, 'the runtime stage sets a USER')
  t.notMatch(users.at(-1) ?? 'root', /^(root|0)(:|$)/, 'and it is not root')

  const cmd = runtimeArgs('CMD').at(-1) ?? ''
  let argv: unknown
  try { argv = JSON.parse(cmd) } catch { argv = cmd }
  t.same(argv, ['node', 'dist/server.js'], 'CMD runs dist/server.js with node, exec form (node gets the signals)')

  const healthcheck = runtimeArgs('HEALTHCHECK').at(-1) ?? ''
  t.match(healthcheck, /\bfetch\(.*\/healthz/, 'HEALTHCHECK fetches /healthz')
  t.ok(runtimeArgs('EXPOSE').some((a) => a.split(/\s+/).includes('3000')), 'EXPOSE 3000')

  const env = Object.fromEntries(runtimeArgs('ENV').flatMap((a) => [...a.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])))
  t.same({ NODE_ENV: env.NODE_ENV, HOST: env.HOST, PORT: env.PORT }, { NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000' },
    'ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000')
})

t.test('the image runs the server with the V8 options `npm start` gives it (NODE_OPTIONS, which compose\'s command inherits)', async (t) => {
  const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start
  const options = /^node ((?:--\S+ )*)dist\/server\.js$/.exec(start)?.[1]?.trim()
  t.ok(options !== undefined && options !== '', `npm start: node, V8 options, dist/server.js (${start})`)
  const env = Object.fromEntries(runtimeArgs('ENV').flatMap((a) => [...a.matchAll(/(?:^|\s)(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])))
  t.equal(env.NODE_OPTIONS, options)
})

t.test('.dockerignore keeps local state out of the build context', async (t) => {
  const ignored = read('.dockerignore').split(/\r?\n/).map((line) => line.trim().replace(/^\/|\/$/g, ''))
  for (const entry of ['node_modules', 'dist', '.data', '.git', '.tap', 'coverage']) {
    t.ok(ignored.includes(entry), `${entry} is ignored`)
  }
})

// The variables the server reads. While src/config.ts is not there yet, this is the list the
// project agreed on; once it exists, the names must appear in it (and for the CLI, in src/cli).
const AGREED_SERVER_ENV = ['PORT', 'HOST', 'REDIS_URL', 'REDIS_PREFIX', 'LOG_LEVEL', 'PLAN_LIMITS', 'RATE_LIMIT_WINDOW_MS']

function sourcesOf (paths: string[]): string | undefined {
  const texts = paths.flatMap((path) => {
    const url = new URL(path, root)
    if (!existsSync(url)) return []
    if (!path.endsWith('/')) return [readFileSync(url, 'utf8')]
    return readdirSync(url, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(new URL(file, url), 'utf8'))
  })
  return texts.length === 0 ? undefined : texts.join('\n')
}

function checkReadsEnv (t: Test, names: string[], sources: string | undefined, who: string): void {
  for (const name of names) {
    const read = sources === undefined ? AGREED_SERVER_ENV.includes(name) : new RegExp(`\\b${name}\\b`).test(sources)
    t.ok(read, `${who} reads ${name}${sources === undefined ? ' (agreed list; src/config.ts not found)' : ''}`)
  }
}

t.test('every variable the container setup sets is one the code reads', async (t) => {
  const serverSources = sourcesOf(['src/config.ts'])
  const dockerEnv = runtimeArgs('ENV').flatMap((a) => [...a.matchAll(/(?:^|\s)(\w+)=/g)].map((m) => m[1] ?? ''))
    .filter((name) => name !== 'NODE_ENV' && name !== 'NODE_OPTIONS') // read by Node and libraries, not by our config
  const setInCommand = (service: Service): string[] => redisUrlFromCommand(service).url === undefined ? [] : ['REDIS_URL']
  checkReadsEnv(t, dockerEnv, serverSources, 'the server (Dockerfile ENV)')
  checkReadsEnv(t, [...Object.keys(envOf(api)), ...setInCommand(api)], serverSources, 'the server (compose api)')
  checkReadsEnv(t, [...Object.keys(envOf(seed)), ...setInCommand(seed)], sourcesOf(['src/config.ts', 'src/cli/']), 'the CLI (compose seed)')
})
