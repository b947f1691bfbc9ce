// The curve a read's levels are computed under. A read script names it (includes/shown-curve.lua):
// a built-in curve by name, or a server's custom one as `custom:<settings epoch>`, whose list of
// thresholds (up to 1,000 numbers) is read here once per server and epoch rather than with every
// read. A list read after the settings moved past the read's epoch is not the read's: the caller
// reads again, so a body never shows levels of another curve than the data version it carries.
import { LRUCache } from 'lru-cache'
import { DEFAULT_CURVE, isCurve, type LevelCurve } from '../levels/curves.js'
import { levelCurve } from '../settings/settings.js'
import type { SettingsStore } from '../settings/settings-store.js'

/** How many servers' custom curves a process keeps. */
const CACHED_SERVERS = 10_000
/** Reads of a server whose settings move under each of them, before its newest curve is taken. */
const READ_TRIES = 3
const CUSTOM = /^custom:(\d+)$/

type Reply = string | number | null | undefined

export class LevelCurves {
  readonly #settings: SettingsStore
  readonly #custom = new LRUCache<string, { epoch: number, curve: LevelCurve }>({ max: CACHED_SERVERS })

  constructor (settings: SettingsStore) {
    this.#settings = settings
  }

  /**
   * The curve a script's reply names; null when it is a custom curve whose epoch the settings
   * have moved past since (the caller reads again).
   */
  async named (guildId: string, reply: Reply): Promise<LevelCurve | null> {
    if (isCurve(reply)) return reply
    const epoch = typeof reply === 'string' ? CUSTOM.exec(reply)?.[1] : undefined
    if (epoch === undefined) return DEFAULT_CURVE
    const cached = this.#custom.get(guildId)
    if (cached?.epoch === Number(epoch)) return cached.curve
    const settings = await this.#settings.read(guildId)
    const curve = levelCurve(settings)
    if (cached === undefined || settings.epoch > cached.epoch) this.#custom.set(guildId, { epoch: settings.epoch, curve })
    return settings.epoch === Number(epoch) ? curve : null
  }

  /** The server's curve as its settings hold it now. */
  async current (guildId: string): Promise<LevelCurve> {
    return levelCurve(await this.#settings.read(guildId))
  }

  /**
   * `read()` and the curve its reply names (`curveIn`), read again while the settings move under
   * it; after READ_TRIES, the settings' newest curve.
   */
  async read<R> (guildId: string, read: () => Promise<R>, curveIn: (reply: R) => Reply): Promise<{ reply: R, curve: LevelCurve }> {
    for (let tries = 1; ; tries++) {
      const reply = await read()
      const curve = await this.named(guildId, curveIn(reply))
      if (curve !== null) return { reply, curve }
      if (tries === READ_TRIES) return { reply, curve: await this.current(guildId) }
    }
  }
}
