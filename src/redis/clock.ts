// Redis's clock, estimated locally: scripts that read TIME report it, and between reports the
// local clock runs on from the last offset. Every instance that shares a Redis shares its
// clock, so what depends on the day (a member's streak, its ETag) agrees across instances.
export class RedisClock {
  #offsetMs = 0

  /** Records a time Redis reported just now. */
  observe (redisNowMs: number): void {
    if (Number.isFinite(redisNowMs)) this.#offsetMs = redisNowMs - Date.now()
  }

  now (): number {
    return Date.now() + this.#offsetMs
  }
}
