// Builds the ioredis client (a single Redis or a Cluster) with bounded timeouts and no offline
// queue, so a Redis outage fails requests fast instead of piling them up, and registers the
// Lua commands with their TypeScript signatures.
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster, Redis } from 'ioredis'
import type { Result } from 'ioredis'
import { defineCommands } from './scripts.js'
import { followRedirections } from './redirects.js'
import { defineFunctions } from './functions.js'

export type RedisClient = Redis | Cluster

export interface RedisConnectionOptions {
  /** `redis://…` URL; for a cluster, one or more seed URLs separated by commas. */
  url: string
  cluster?: boolean
  /** Longest a command may take before it fails (ms). */
  commandTimeoutMs?: number
  /** Queue commands while disconnected (CLI, tests) instead of failing them at once (the API). */
  offlineQueue?: boolean
  /** The connections' name in CLIENT LIST (CLIENT SETNAME), to tell one client's from another's. */
  name?: string
}

export function createRedis (options: RedisConnectionOptions): RedisClient {
  const { url, cluster = false, commandTimeoutMs = 800, offlineQueue = false, name } = options
  const common = {
    commandTimeout: commandTimeoutMs,
    ...(name === undefined ? {} : { connectionName: name }),
    // Commands issued in the same tick (a request's limiter and data version, and those of
    // every other request in flight) go out in one write and come back in one read, saving
    // Redis the system calls that are most of its work per request (docs/benchmarks-history.md).
    enableAutoPipelining: true,
    connectTimeout: 1000,
    enableOfflineQueue: offlineQueue,
    maxRetriesPerRequest: offlineQueue ? 20 : 0,
    // Keep trying to reconnect, never more than a second apart, so the service heals by itself.
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000)
  }
  let client: RedisClient
  if (cluster) {
    const seeds = url.split(',').map((seed) => {
      const { hostname, port } = new URL(seed.trim())
      return { host: hostname, port: Number(port || 6379) }
    })
    client = new Cluster(seeds, {
      enableOfflineQueue: offlineQueue,
      enableAutoPipelining: true,
      clusterRetryStrategy: common.retryStrategy,
      // Not auto-pipelined per node: the cluster pipelines the commands; a node's own commands
      // (the ASKING that must go just before a command sent to an importing master) go at once.
      redisOptions: { ...common, enableAutoPipelining: false, username: userOf(url), password: passwordOf(url) }
    })
  } else {
    client = new Redis(url, common)
  }
  followRedirections(client)
  defineCommands(client)
  defineFunctions(client)
  return client
}

/**
 * Whether `client` is ready within `ms` (at once when it is already): a client without an offline
 * queue fails the commands sent before its connection is up, so a caller gives it a moment first.
 */
export async function readyWithin (client: RedisClient, ms: number): Promise<boolean> {
  if (client.status === 'ready') return true
  let ready: (() => void) | undefined
  const ok = await Promise.race([
    new Promise<boolean>((resolve) => { ready = () => { resolve(true) }; client.once('ready', ready) }),
    sleep(ms, false, { ref: false })
  ])
  if (!ok && ready !== undefined) client.off('ready', ready)
  return ok
}

/** Redis's clock in Unix ms: the one time every instance and writer agrees on. */
export async function redisNow (client: RedisClient): Promise<number> {
  const [seconds, micros] = await client.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

function userOf (url: string): string | undefined {
  const value = new URL(url.split(',')[0] ?? '').username
  return value === '' ? undefined : decodeURIComponent(value)
}

function passwordOf (url: string): string | undefined {
  const value = new URL(url.split(',')[0] ?? '').password
  return value === '' ? undefined : decodeURIComponent(value)
}

type Reply = string | number | null
type Str = string | number
type PageReply = [version: string | null, season: number, total?: number, curve?: string | null, members?: string[], shownXps?: string[],
  xps?: Array<string | null>, records?: Array<string | null>, previousRanks?: number[]]
type MemberReply = [version: string | null, nowMs: number, current: number, season?: number, xp?: string | null, rank?: number | null,
  record?: string | null, curve?: string | null, weekXp?: string | null, monthXp?: string | null, allTimeXp?: string | null, previousRank?: number]
type MemberBatchReply = [version: string | null, nowMs: number, current: number, season?: number, curve?: string | null, xps?: Array<string | null>,
  ranks?: Array<number | null>, records?: Array<string | null>, weekXps?: Array<string | null>, monthXps?: Array<string | null>,
  allTimeXps?: Array<string | null>, previousRanks?: number[]]
type AroundReply = [version: string | null, season: number, total?: number, curve?: string | null, rank?: number | null, first?: number,
  members?: string[], shownXps?: string[], xps?: Array<string | null>, records?: Array<string | null>, previousRanks?: number[]]
type PeriodPageReply = [version: string | null, nowMs: number, current: number, total?: number, curve?: string | null,
  members?: string[], periodXps?: string[], xps?: Array<string | null>, records?: Array<string | null>]
type MemberHistoryReply = [version: string | null, status: number, ...values: Array<string | number>]
type StatsHistoryReply = [version: string | null, closedThrough: string | null, closedFrom: string | null, stats: string[]]
type SeasonsReply = [version: string | null, retention: string | null, since: string | null, seasons: string[]]

declare module 'ioredis' {
  interface RedisCommander<Context> {
    // The write scripts take their arguments from ./write-scripts.ts, which names and orders them.
    awardXp(...args: Str[]): Result<[number, number, number, string?, string?], Context>
    awardBatch(...args: Str[]): Result<Array<number | string>, Context>
    setXp(...args: Str[]): Result<[number, number, string?, string?, number?], Context>
    setUsername(...args: Str[]): Result<number, Context>
    removeMember(...args: Str[]): Result<[number, number?], Context>
    dailyClaim(...args: Str[]): Result<[number, number, number?], Context>
    configureGuild(...args: Str[]): Result<[number, number], Context>
    setVisibility(numberOfKeys: number, ...args: Str[]): Result<Array<number | string | null>, Context>
    claimSlug(...args: Str[]): Result<[number, string?], Context>
    releaseSlug(...args: Str[]): Result<number, Context>
    webhookCreate(...args: Str[]): Result<number, Context>
    webhookDelete(...args: Str[]): Result<number, Context>
    webhookPing(...args: Str[]): Result<[number, (string | number)?], Context>
    webhookRecord(...args: Str[]): Result<number, Context>
    webhookLease(...args: Str[]): Result<[number, number], Context>
    endSeason(...args: Str[]): Result<[number, number, number?, number?], Context>
    dropSeason(...args: Str[]): Result<number, Context>
    closeDayBegin(...args: Str[]): Result<number, Context>
    closeDayStarts(...args: Str[]): Result<Array<string | number>, Context>
    closeDayBoard(...args: Str[]): Result<Array<string | number>, Context>
    closeDayTrim(...args: Str[]): Result<Array<string | number>, Context>
    closeDayRanks(...args: Str[]): Result<Array<string | number>, Context>
    closeDayTouched(...args: Str[]): Result<Array<string | number>, Context>
    closeDayChanges(...args: Str[]): Result<Array<string | number>, Context>
    closeDayPlace(...args: Str[]): Result<Array<string | number>, Context>
    closeDayCommit(...args: Str[]): Result<Array<string | number>, Context>
    closeDayForget(...args: Str[]): Result<number, Context>
    closeDayRelease(...args: Str[]): Result<number, Context>
    calendarClaim(...args: Str[]): Result<[number, ...string[]], Context>
    bulkSetMembers(...args: Str[]): Result<number | [number, number], Context>
    // The season's keys: ranks at the last closed day's end, the seasons hash, the current
    // season's board, the asked season's board (src/reader/leaderboard-reader.ts's seasonKeys).
    leaderboardPage(board: string, members: string, settings: string, version: string, ranksLatest: string, seasons: string,
      seasonCurrent: string, seasonBoard: string, start: Str, stop: Str, season: Str, defaultRetention: Str): Result<PageReply, Context>
    member(board: string, members: string, settings: string, version: string, week: string, month: string, ranksLatest: string,
      seasons: string, seasonCurrent: string, seasonBoard: string, member: string, from: Str, until: Str, season: Str,
      defaultRetention: Str, includeHidden: Str): Result<MemberReply, Context>
    memberBatch(board: string, members: string, settings: string, version: string, week: string, month: string, ranksLatest: string,
      seasons: string, seasonCurrent: string, seasonBoard: string, from: Str, until: Str, season: Str, defaultRetention: Str,
      ...boardMembers: string[]): Result<MemberBatchReply, Context>
    around(board: string, members: string, settings: string, version: string, ranksLatest: string, seasons: string,
      seasonCurrent: string, seasonBoard: string, member: string, radius: Str, season: Str, defaultRetention: Str): Result<AroundReply, Context>
    // The number of keys first (member-history-n.lua).
    memberHistory(numberOfKeys: number, ...keysThenArgs: Str[]): Result<MemberHistoryReply, Context>
    statsHistory(hist: string, histStats: string, version: string): Result<StatsHistoryReply, Context>
    seasonsList(seasons: string, settings: string, hist: string, version: string): Result<SeasonsReply, Context>
    periodPage(period: string, board: string, members: string, settings: string, version: string,
      start: Str, stop: Str, from: Str, until: Str): Result<PeriodPageReply, Context>
    roleRewards(settings: string, version: string): Result<[version: string | null, rewards: string | null, mode: string | null, curve: string | null], Context>
    guildStats(stats: string, settings: string, version: string, board: string, defaultCurve: string): Result<Reply[], Context>
    slidingWindow(key: string, limit: Str, windowMs: Str, buckets: Str, peek: Str, hits: Str): Result<[number, number, number, number, number], Context>
    apiKeyLookup(record: string, hash: string): Result<Reply[], Context>
    releaseClaim(claim: string, owner: string): Result<number, Context>
    migrateGuild(names: string, streaks: string, claims: string, members: string, board: string, version: string): Result<number, Context>
  }
}
