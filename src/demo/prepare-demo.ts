// Gets a fresh install ready to try: a seeded demo server (left alone when it already has
// members) and a new API key for it, with the curl line that reads its leaderboard.
import { ApiKeyStore } from '../api-keys/api-keys.js'
import { InvalidParameterError } from '../errors.js'
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import { seedGuild } from '../seed/seed-guild.js'
import { assertSnowflake } from '../validation.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'

export const DEMO_GUILD_ID = '1100000000000000001'
export const DEMO_MEMBERS = 500
// A fixed seed, so every demo install shows the same crowd.
const DEMO_SEED = 'demo'

export interface PrepareDemoOptions {
  redis: RedisClient
  keys: KeyBuilder
  guildId?: string
  members?: number
  /** Where the API is reached, e.g. http://localhost:3000 (a trailing /api/v1 is accepted too). */
  baseUrl: string
  onProgress?: (done: number, total: number) => void
}

export interface DemoResult {
  guildId: string
  /** The new key's plaintext: shown this once. */
  key: string
  keyId: string
  /** False when the server already had members and was left as it was. */
  seeded: boolean
  /** Members on the board now. */
  members: number
  curl: string
}

export async function prepareDemo (opts: PrepareDemoOptions): Promise<DemoResult> {
  const guildId = assertSnowflake('guild_id', opts.guildId ?? DEMO_GUILD_ID)
  const apiBase = apiBaseUrl(opts.baseUrl)
  const board = opts.keys.guild(guildId).board

  let members = await opts.redis.zcard(board)
  const seeded = members === 0
  if (seeded) {
    const writer = new LeaderboardWriter(opts.redis, opts.keys)
    await seedGuild(writer, { guildId, members: opts.members ?? DEMO_MEMBERS, seed: DEMO_SEED, onProgress: opts.onProgress })
    members = await opts.redis.zcard(board)
  }

  const created = await new ApiKeyStore(opts.redis, opts.keys).create({ guildId, plan: 'professional', name: 'demo' })
  return {
    guildId,
    key: created.key,
    keyId: created.id,
    seeded,
    members,
    curl: `curl -H 'x-api-key: ${created.key}' ${apiBase}/servers/${guildId}/leaderboard`
  }
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
