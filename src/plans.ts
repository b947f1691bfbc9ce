// The plans an API key can have and their default limits: a leaf, read by the configuration,
// the key store and the HTTP layer alike.
export const PLANS = ['free', 'starter', 'professional'] as const
export type Plan = typeof PLANS[number]

/** Requests per rate-limit window (one hour unless configured otherwise). */
export const DEFAULT_PLAN_LIMITS: Record<Plan, number> = {
  free: 100,
  starter: 1000,
  professional: 10000
}

export function isPlan (value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value)
}
