// The Python of docs/bots.md against a live service, with the guild_leaderboard package
// (packages/python) and python3: the script between the python-example markers run as written,
// and the discord.py cog between the python-cog markers compiled, then its handlers run. discord.py
// cannot be installed here: a stand-in gives the few names of it the cog uses, and the messages
// and contexts carry discord.py's int ids; the leaderboard side is the real service.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { RedisServer } from './helpers/redis-server.js'
import { buildTestAdmin } from './helpers/admin.js'
import { boardMember } from '../src/redis/keys.js'

const run = promisify(execFile)
const server = await RedisServer.start()
t.teardown(async () => { await server.close() })

const doc = readFileSync(new URL('../docs/bots.md', import.meta.url), 'utf8')
const block = (name: string): string | undefined => new RegExp(`<!-- ${name}:start -->\\n\`\`\`python\\n([\\s\\S]*?)\`\`\`\\n<!-- ${name}:end -->`).exec(doc)?.[1]
const PACKAGE_SRC = fileURLToPath(new URL('../packages/python/src', import.meta.url))
const DAY_MS = 86_400_000
const GUILD = '1100000000000000001'

t.test('the Python example of docs/bots.md awards XP and claims a daily reward twice against a live service', async (t) => {
  const script = block('python-example')
  t.ok(script, 'docs/bots.md holds the example')
  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token([GUILD], ['write'])
  const base = await ctx.admin.listen({ port: 0, host: '127.0.0.1' })
  const dir = t.testdir({ 'bot.py': script ?? '' })
  const { stdout } = await run('python3', [`${dir}/bot.py`], {
    env: { ...process.env, PYTHONPATH: PACKAGE_SRC, PYTHONDONTWRITEBYTECODE: '1', LEADERBOARD_TOKEN: token, LEADERBOARD_ADMIN_URL: `${base}/admin/v1` },
    timeout: 60_000
  })
  const next = new Date((Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS).toISOString().replace('.000Z', 'Z')
  t.same(stdout.trim().split('\n'), [
    '1100000000000000777: +150 XP, now 150 XP, level 1 (level up!)',
    'daily streak 1',
    `already claimed today; next claim from ${next}`
  ])
  t.equal(Number(await ctx.redis.zscore(ctx.keys.guild(GUILD).board, boardMember('1100000000000000777'))), 150, 'recorded')
})

/** The few names of discord.py the cog uses, as discord.py defines them for this use. */
const discordStandIn = {
  '__init__.py': '"""A stand-in for discord.py (not installable here): the names the cog uses."""\n\n\nclass Message:\n    pass\n\n\nclass Member:\n    pass\n',
  ext: {
    '__init__.py': '',
    'commands.py': `"""discord.ext.commands, as far as the cog uses it. A command is called as cog.command(ctx)."""


class Bot:
    pass


class Context:
    pass


class Cog:
    @staticmethod
    def listener(name=None):
        return lambda function: function


def command(**_):
    return lambda function: function


def guild_only():
    return lambda function: function


class BucketType:
    member = "member"


class CooldownMapping:
    """rate uses per bucket (guild, author); no window ends within a test run."""

    def __init__(self, rate):
        self.rate, self.used = rate, {}

    @classmethod
    def from_cooldown(cls, rate, per, bucket):
        return cls(rate)

    def update_rate_limit(self, message):
        key = (message.guild.id, message.author.id)
        self.used[key] = self.used.get(key, 0) + 1
        return 60.0 if self.used[key] > self.rate else None
`
  }
}

/** Drives the cog as discord.py would: messages and commands from members with int ids. */
const driver = `import asyncio
from types import SimpleNamespace

import leveling

GUILD = SimpleNamespace(id=${GUILD})


async def send(text):
    print(text)


def member(user_id, name, bot=False):
    return SimpleNamespace(id=user_id, bot=bot, name=name.lower(), display_name=name, mention=f"<@{user_id}>",
                           display_avatar=SimpleNamespace(url=f"https://cdn.discordapp.com/avatars/{user_id}/a.png"))


def message(message_id, author):
    return SimpleNamespace(id=message_id, author=author, guild=GUILD, channel=SimpleNamespace(send=send))


def context(author):
    return SimpleNamespace(guild=GUILD, author=author, send=send)


class Bot:
    async def add_cog(self, cog):
        self.cog = cog


async def main():
    bot = Bot()
    await leveling.setup(bot)
    cog = bot.cog
    nova, ada = member(1200000000000000001, "Nova"), member(1200000000000000002, "Ada")
    await cog.client.set_member(GUILD.id, nova.id, xp=90)
    await cog.on_message(message(1300000000000000001, nova))  # 15 to 25 XP: level 1
    await cog.on_message(message(1300000000000000002, nova))  # within the cooldown: none
    await cog.on_message(message(1300000000000000003, member(1200000000000000009, "a bot", bot=True)))
    # The first message again, as after a reconnect, to a cog with a fresh cooldown: same op_id.
    await leveling.Leveling(bot, cog.client).on_message(message(1300000000000000001, nova))
    await cog.daily(context(ada))
    await cog.daily(context(ada))
    await cog.leaderboard(context(ada))
    await cog.rank(context(ada), nova)
    await cog.rank(context(ada), member(1200000000000000003, "Zed"))
    await cog.cog_unload()


asyncio.run(main())
`

t.test("docs/bots.md's discord.py cog compiles, and its handlers award, claim and read against a live service", async (t) => {
  const cog = block('python-cog')
  t.ok(cog, 'docs/bots.md holds the cog')
  const dir = t.testdir({ 'leveling.py': cog ?? '', 'drive.py': driver, discord: discordStandIn })
  await t.resolves(run('python3', ['-m', 'py_compile', `${dir}/leveling.py`], { env: { ...process.env, PYTHONPYCACHEPREFIX: `${dir}/.pycache` } }), 'python3 -m py_compile')

  const ctx = await buildTestAdmin(t, server.url)
  const token = await ctx.token([GUILD], ['write'])
  const { key } = await ctx.apiKeys.create({ guildId: GUILD, plan: 'professional' })
  const [admin, api] = [await ctx.admin.listen({ port: 0, host: '127.0.0.1' }), await ctx.app.listen({ port: 0, host: '127.0.0.1' })]
  const { stdout } = await run('python3', [`${dir}/drive.py`], {
    cwd: dir,
    env: {
      ...process.env,
      PYTHONPATH: `${dir}${delimiter}${PACKAGE_SRC}`,
      PYTHONDONTWRITEBYTECODE: '1',
      LEADERBOARD_ADMIN_URL: `${admin}/admin/v1`,
      LEADERBOARD_TOKEN: token,
      LEADERBOARD_API_URL: `${api}/api/v1`,
      LEADERBOARD_API_KEY: key
    },
    timeout: 60_000
  })
  const nova = Number(await ctx.redis.zscore(ctx.keys.guild(GUILD).board, boardMember('1200000000000000001')))
  t.ok(nova >= 90 + 15 && nova <= 90 + 25, `Nova's one message counted once: ${nova} XP`)
  const nextClaim = (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS / 1000
  t.same(stdout.trim().split('\n'), [
    // Once: the message handled again gets its award's first result, marked replayed.
    '<@1200000000000000001> reached level 1!',
    '+100 XP: a 1-day streak. You are level 1.',
    `Already claimed today: come back <t:${nextClaim}:R>.`,
    `#1 Nova: level 1, ${nova} XP`,
    '#2 Ada: level 1, 100 XP',
    `Nova: #1, level 1 (${nova - 100}/155 XP to the next)`,
    'Zed has no XP yet.'
  ])
  t.equal(await ctx.redis.zscore(ctx.keys.guild(GUILD).board, boardMember('1200000000000000009')), null, "a bot's message earns nothing")
  const record = (await ctx.app.inject({ url: `/api/v1/servers/${GUILD}/members/1200000000000000001`, headers: { 'x-api-key': key } })).json()
  t.match(record, { username: 'nova', display_name: 'Nova', avatar_url: 'https://cdn.discordapp.com/avatars/1200000000000000001/a.png' },
    "the author's name, display name and avatar, recorded with the award")
})
