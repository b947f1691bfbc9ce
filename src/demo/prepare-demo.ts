// Gets a fresh install ready to try: a seeded demo server (left alone when it already has
// members) and an API key for it (the one given, while it still works, else a new one), with the
// curl line that reads its leaderboard.
import { type ApiKeyInfo, ApiKeyStore } from '../api-keys/api-keys.js'
import { InvalidParameterError } from '../errors.js'
import { type RedisClient, redisNow } from '../redis/client.js'
import { type KeyBuilder, userIdFromBoardMember } from '../redis/keys.js'
import { seedGuild } from '../seed/seed-guild.js'
import { addDemoHistory } from './demo-history.js'
import { assertSnowflake } from '../validation.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { SlugTakenError } from '../errors.js'

export const DEMO_GUILD_ID = '1100000000000000001'
export const DEMO_MEMBERS = 500
/** The demo server's public board: /p/demo. */
export const DEMO_SLUG = 'demo'
const DEMO_NAME = 'Demo server'
// A fixed seed, so every demo install shows the same crowd.
const DEMO_SEED = 'demo'
/** The name of the keys made for the demo server. */
export const DEMO_KEY_NAME = 'demo'

export interface PrepareDemoOptions {
  redis: RedisClient
  keys: KeyBuilder
  guildId?: string
  members?: number
  /** Where the API is reached, e.g. http://localhost:3000 (a trailing /api/v1 is accepted too). */
  baseUrl: string
  onProgress?: (done: number, total: number) => void
  /** A key from an earlier run to use again: kept when it still reads this server, else replaced. */
  reuseKey?: string
}

export interface DemoResult {
  guildId: string
  /** The key's plaintext: a new key is shown this once (unless the caller keeps it). */
  key: string
  keyId: string
  /** True when `reuseKey` still worked and was kept; false when a key was created. */
  keyReused: boolean
  /** Why `reuseKey` was not kept (revoked, expired, unknown, or another server's). */
  staleKey?: 'revoked' | 'expired' | 'unknown' | 'other_server'
  /** False when the server already had members and was left as it was. */
  seeded: boolean
  /** Members on the board now. */
  members: number
  curl: string
  /** The demo server's public board, the page `/` leads to. */
  pageUrl: string
}

export async function prepareDemo (opts: PrepareDemoOptions): Promise<DemoResult> {
  const apiBase = apiBaseUrl(opts.baseUrl)
  const { guildId, seeded, members } = await seedDemo(opts)
  const pageUrl = await publishDemo(opts, guildId, apiBase)

  const store = new ApiKeyStore(opts.redis, opts.keys)
  let staleKey: DemoResult['staleKey']
  if (opts.reuseKey !== undefined) {
    const check = await store.check(opts.reuseKey)
    if (check.status === 'ok' && check.guildId === guildId) {
      return { guildId, key: opts.reuseKey, keyId: check.id, keyReused: true, seeded, members, curl: curlLine(apiBase, guildId, opts.reuseKey), pageUrl }
    }
    staleKey = check.status === 'ok' ? 'other_server' : check.status
  }
  const created = await store.create({ guildId, plan: 'professional', name: DEMO_KEY_NAME })
  return { guildId, key: created.key, keyId: created.id, keyReused: false, staleKey, seeded, members, curl: curlLine(apiBase, guildId, created.key), pageUrl }
}

/**
 * Makes the demo server's board public at /p/demo, with a name, unless its settings say
 * otherwise already (a board made private by hand stays private; its page is then 404).
 * Returns the page's address.
 */
async function publishDemo (opts: Pick<PrepareDemoOptions, 'redis' | 'keys'>, guildId: string, apiBase: string): Promise<string> {
  const writer = new LeaderboardWriter(opts.redis, opts.keys)
  const settings = await writer.settings.read(guildId)
  if (settings.public.slug === null) {
    const publish = async (slug: string): Promise<unknown> =>
      await writer.configureGuild(guildId, { ...(settings.name === null ? { name: DEMO_NAME } : {}), public: { enabled: true, slug } })
    try {
      await publish(DEMO_SLUG)
    } catch (err) {
      // Another demo server (`demo --guild`) holds /p/demo: this one gets a slug of its own.
      if (!(err instanceof SlugTakenError)) throw err
      await publish(`${DEMO_SLUG}-${guildId}`)
    }
  }
  return `${apiBase.slice(0, -'/api/v1'.length)}/p/${(await writer.settings.read(guildId)).public.slug ?? DEMO_SLUG}`
}

/** Seeds the demo server when it has no members; leaves it as it is otherwise. */
export async function seedDemo (opts: Omit<PrepareDemoOptions, 'baseUrl' | 'reuseKey'>): Promise<Pick<DemoResult, 'guildId' | 'seeded' | 'members'>> {
  const guildId = assertSnowflake('guild_id', opts.guildId ?? DEMO_GUILD_ID)
  const board = opts.keys.guild(guildId).board
  let members = await opts.redis.zcard(board)
  const seeded = members === 0
  if (seeded) {
    const writer = new LeaderboardWriter(opts.redis, opts.keys)
    await writer.configureGuild(guildId, { season: { every: 'week', timezone: 'UTC' } })
    await seedGuild(writer, { guildId, members: opts.members ?? DEMO_MEMBERS, seed: DEMO_SEED, onProgress: opts.onProgress })
    await addDemoHistory(opts.redis, opts.keys, guildId, DEMO_SEED)
    members = await opts.redis.zcard(board)
  }
  return { guildId, seeded, members }
}

/** The newest demo key of a server that still works (professional, named demo, neither revoked nor expired), if any. */
export async function activeDemoKey (redis: RedisClient, keys: KeyBuilder, guildId: string): Promise<ApiKeyInfo | undefined> {
  const [infos, now] = await Promise.all([new ApiKeyStore(redis, keys).list(guildId), redisNow(redis)])
  return infos.find((info) => info.name === DEMO_KEY_NAME && info.plan === 'professional' && info.revokedAt === null &&
    (info.expiresAt === null || info.expiresAt.getTime() > now))
}

function curlLine (apiBase: string, guildId: string, key: string): string {
  return `curl -H 'x-api-key: ${key}' ${apiBase}/servers/${guildId}/leaderboard`
}

/**
 * The curl lines printed after the first: the current season's board, and the history of the
 * server and of its top member (the days the demo's history holds).
 */
export async function seasonCurlLines (redis: RedisClient, keys: KeyBuilder, demo: Pick<DemoResult, 'guildId' | 'key' | 'curl'>): Promise<string[]> {
  const [top] = await redis.zrevrange(keys.guild(demo.guildId).board, 0, 0)
  const servers = demo.curl.slice(0, demo.curl.lastIndexOf('/leaderboard'))
  return [
    `${servers}/leaderboard?season=current`,
    ...(top === undefined ? [] : [`${servers}/members/${userIdFromBoardMember(top)}/history?days=7`]),
    `${servers}/stats/history?days=7`
  ]
}

/** `<origin>/api/v1`, whether the caller gave the origin or the full API base. */
function apiBaseUrl (baseUrl: string): string {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new InvalidParameterError(`base URL must be an http(s) URL such as http://localhost:3000 (got ${JSON.stringify(baseUrl)})`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidParameterError(`base URL must be an http(s) URL such as http://localhost:3000 (got ${JSON.stringify(baseUrl)})`)
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')
  return `${url.origin}${path}/api/v1`
}
