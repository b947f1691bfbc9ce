// API keys from the shell: create (the only time the key is shown), list, revoke.
import { type Command, Option } from 'commander'
import { type ApiKeyInfo, ApiKeyStore } from '../api-keys/api-keys.js'
import { PLANS, type Plan } from '../api-keys/plans.js'
import { redisNow } from '../redis/client.js'
import { withRedis } from './connection.js'
import { print, shortDate, table } from './output.js'
import * as parse from './parsers.js'

type Status = 'active' | 'revoked' | 'expired'

export function addKeyCommands (program: Command): void {
  const keys = program.command('keys').description("a server's API keys")

  keys.command('create')
    .description('create an API key; the key is printed once and only its hash is stored')
    .addOption(new Option('--guild <id>', 'server the key reads').argParser(parse.guildId).makeOptionMandatory())
    .addOption(new Option('--plan <plan>', 'rate-limit plan').choices(PLANS).makeOptionMandatory())
    .addOption(new Option('--expires-in <seconds>', 'expire this many seconds from now (default never)')
      .argParser(parse.integer('expires-in', 1, Number.MAX_SAFE_INTEGER)))
    .option('--name <text>', 'a label to recognise the key by')
    .option('--json', 'print one line of JSON')
    .action(async (opts: { guild: string, plan: Plan, expiresIn?: number, name?: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const created = await new ApiKeyStore(redis, keys)
          .create({ guildId: opts.guild, plan: opts.plan, name: opts.name, expiresInSeconds: opts.expiresIn })
        if (opts.json === true) {
          print(JSON.stringify({ key: created.key, ...describe(created, 'active') }))
          return
        }
        print(`API key ${created.id} for server ${created.guildId} (plan ${created.plan}, expires ${created.expiresAt?.toISOString() ?? 'never'}):`)
        print('')
        print(`    ${created.key}`)
        print('')
        print('Copy it now: it is shown only this once (only its hash is stored).')
      })
    })

  keys.command('list')
    .description("list a server's API keys, newest first (never the keys themselves)")
    .addOption(new Option('--guild <id>', 'server whose keys to list').argParser(parse.guildId).makeOptionMandatory())
    .option('--json', 'print one line of JSON (an array)')
    .action(async (opts: { guild: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const infos = await new ApiKeyStore(redis, keys).list(opts.guild)
        const now = await redisNow(redis)
        const described = infos.map((info) => describe(info, statusOf(info, now)))
        if (opts.json === true) {
          print(JSON.stringify(described))
          return
        }
        if (infos.length === 0) {
          print(`server ${opts.guild} has no API keys`)
          return
        }
        print(table(
          ['ID', 'NAME', 'PLAN', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED'],
          infos.map((info) => [
            info.id, info.name ?? '-', info.plan, statusOf(info, now), shortDate(info.createdAt),
            shortDate(info.expiresAt), shortDate(info.lastUsedAt), shortDate(info.revokedAt)
          ])))
      })
    })

  keys.command('revoke')
    .description('revoke an API key by id; every instance refuses it within 5 seconds')
    .argument('<id>', 'the key id, as shown by keys list')
    .action(async (id: string) => {
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.revoke(id)
        if (before?.revokedAt != null) {
          print(`API key ${id} of server ${info.guildId} was already revoked (${info.revokedAt?.toISOString() ?? ''})`)
        } else {
          print(`revoked API key ${id} of server ${info.guildId}`)
        }
      })
    })
}

function statusOf (info: ApiKeyInfo, now: number): Status {
  if (info.revokedAt !== null) return 'revoked'
  if (info.expiresAt !== null && info.expiresAt.getTime() <= now) return 'expired'
  return 'active'
}

function describe (info: ApiKeyInfo, status: Status): Record<string, string | null> {
  const iso = (date: Date | null): string | null => date?.toISOString() ?? null
  return {
    id: info.id,
    guild_id: info.guildId,
    plan: info.plan,
    name: info.name,
    status,
    created_at: iso(info.createdAt),
    expires_at: iso(info.expiresAt),
    last_used_at: iso(info.lastUsedAt),
    revoked_at: iso(info.revokedAt)
  }
}
