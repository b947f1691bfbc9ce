// API keys from the shell: create and rotate (the only times a key is shown), list, set-plan, revoke.
import { type Command, Option } from 'commander'
import { type ApiKeyInfo, ApiKeyStore } from '../api-keys/api-keys.js'
import { PLANS, type Plan } from '../api-keys/plans.js'
import { redisNow } from '../redis/client.js'
import { withRedis } from './connection.js'
import { print, printJson, shortDate, table } from './output.js'
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
          printJson({ key: created.key, ...describe(created, 'active') })
          return
        }
        print(`API key ${created.id} for server ${created.guildId} (plan ${created.plan}, expires ${created.expiresAt?.toISOString() ?? 'never'}):`)
        showOnce(created.key)
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
          printJson(described)
          return
        }
        if (infos.length === 0) {
          print(`server ${opts.guild} has no API keys`)
          return
        }
        print(table(
          ['ID', 'NAME', 'PLAN', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'ROTATED', 'REVOKED'],
          infos.map((info) => [
            info.id, info.name ?? '-', info.plan, statusOf(info, now), shortDate(info.createdAt),
            shortDate(info.expiresAt), shortDate(info.lastUsedAt), shortDate(info.rotatedAt), shortDate(info.revokedAt)
          ])))
      })
    })

  keys.command('rotate')
    .description('give a key a new secret under the same id (server, plan, name, expiry and rate-limit count kept); ' +
      'the old key is refused on every instance within 5 seconds, the new one is printed once')
    .argument('<id>', 'the key id, as shown by keys list')
    .option('--json', 'print one line of JSON, with the new key')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const rotated = await new ApiKeyStore(redis, keys).rotate(id)
        if (opts.json === true) {
          printJson({ key: rotated.key, ...describe(rotated, 'active') })
          return
        }
        print(`API key ${rotated.id} of server ${rotated.guildId} rotated (plan ${rotated.plan}); the old key no longer works. The new key:`)
        showOnce(rotated.key)
      })
    })

  keys.command('set-plan')
    .description('move a key to another plan; its secret is unchanged and every instance applies the new limit within 5 seconds')
    .argument('<id>', 'the key id, as shown by keys list')
    .addOption(new Option('--plan <plan>', 'rate-limit plan').choices(PLANS).makeOptionMandatory())
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { plan: Plan, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.setPlan(id, opts.plan)
        if (opts.json === true) {
          printJson(describe(info, 'active'))
          return
        }
        const from = before === null || before.plan === info.plan ? `already on plan ${info.plan}` : `plan ${before.plan} -> ${info.plan}`
        print(`API key ${id} of server ${info.guildId}: ${from}`)
      })
    })

  keys.command('revoke')
    .description('revoke an API key by id; every instance refuses it within 5 seconds')
    .argument('<id>', 'the key id, as shown by keys list')
    .option('--json', 'print one line of JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const store = new ApiKeyStore(redis, keys)
        const before = await store.get(id)
        const info = await store.revoke(id)
        if (opts.json === true) {
          printJson(describe(info, 'revoked'))
          return
        }
        if (before?.revokedAt != null) {
          print(`API key ${id} of server ${info.guildId} was already revoked (${info.revokedAt?.toISOString() ?? ''})`)
        } else {
          print(`revoked API key ${id} of server ${info.guildId}`)
        }
      })
    })
}

export function statusOf (info: ApiKeyInfo, now: number): Status {
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
    rotated_at: iso(info.rotatedAt),
    revoked_at: iso(info.revokedAt)
  }
}

/** A key's plaintext, set apart, with the warning that it will not be shown again. */
function showOnce (key: string): void {
  print('')
  print(`    ${key}`)
  print('')
  print('Copy it now: it is shown only this once (only its hash is stored).')
}
