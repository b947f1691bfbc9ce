// Clear messages for invalid input, built from the same schemas that validate it, so a message
// always names the parameter and the bounds actually enforced.
import type { FastifyError, FastifyRequest } from 'fastify'
import { InvalidParameterError } from '../errors.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'
import { OPERATION_ID_PATTERN } from '../writer/operations.js'

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)

interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  pattern?: string
  format?: string
  enum?: unknown[]
  const?: unknown
  items?: PropertySchema
  anyOf?: PropertySchema[]
  properties?: Record<string, PropertySchema>
  patternProperties?: Record<string, PropertySchema>
}

/** An error of validation as Ajv reports it with `verbose` (src/http/request-validation.ts). */
interface ValidationError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  parentSchema?: PropertySchema
  data?: unknown
}

/** Patterns of the ids a body carries: Discord's (users, servers, roles, channels) and operation ids. */
const ID_PATTERNS = new Set([SNOWFLAKE_PATTERN, OPERATION_ID_PATTERN])

/** An id sent as a JSON number (JSON.parse has already rounded one past 2^53). */
function isIdAsNumber (error: ValidationError): boolean {
  return error.keyword === 'type' && typeof error.data === 'number' && ID_PATTERNS.has(error.parentSchema?.pattern ?? '')
}

/** What a value of `schema` is, for people ("an integer from 1 to 100"); null when it cannot say. */
function describe (schema: PropertySchema | undefined): string | null {
  if (schema === undefined) return null
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum !== undefined) return `one of ${schema.enum.join(', ')}`
  if (schema.anyOf !== undefined) {
    const branches = schema.anyOf.map(describe)
    return branches.includes(null) ? null : branches.join(' or ')
  }
  switch (schema.type) {
    case 'integer': return `an integer from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`
    case 'number': return `a number from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`
    case 'boolean': return 'true or false'
    case 'null': return 'null'
    case 'object': return schema.properties === undefined ? null : `an object {${Object.keys(schema.properties).join(', ')}}`
    case 'array': return `a list of ${schema.minItems ?? 0} to ${schema.maxItems ?? 'any number of'} ${schema.items?.pattern === SNOWFLAKE_PATTERN ? 'ids' : 'items'}`
    case 'string':
      if (schema.pattern === SNOWFLAKE_PATTERN) return 'a decimal id of 1 to 20 digits without a leading zero'
      if (schema.format === 'date-time') return 'an ISO 8601 date and time'
      if (schema.maxLength !== undefined) return `a string of ${schema.minLength ?? 0} to ${schema.maxLength} characters`
      return null
    default: return null
  }
}

export function parameterMessage (name: string, schema: PropertySchema | undefined): string | null {
  const what = describe(schema)
  return what === null ? null : `${name} must be ${what}`
}

function propertySchema (request: FastifyRequest, part: string, name: string): PropertySchema | undefined {
  const schema = (request.routeOptions.schema as Record<string, { properties?: Record<string, PropertySchema> }> | undefined)?.[part]
  return schema?.properties?.[name]
}

/** A value's JSON type, as a body sent it. */
function jsonType (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'number') return Number.isInteger(value) ? 'a number' : 'a number with a fraction'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/** The place of an error: the body's field path (`awards/3/xp`), or the query parameter's name. */
function placeOf (error: ValidationError, part: string): string {
  const path = error.instancePath.replace(/^\//, '')
  return path === '' ? part : path
}

/**
 * The first error a person should see: the id sent as a JSON number wherever it is, else, for a
 * value that matches no branch of a union, the deepest branch error (the bad id in a list)
 * unless every branch failed at the value itself (then the union is described whole).
 */
function chosen (errors: ValidationError[]): ValidationError | undefined {
  const idAsNumber = errors.find(isIdAsNumber)
  if (idAsNumber !== undefined) return idAsNumber
  const union = errors.find((e) => e.keyword === 'anyOf')
  if (union === undefined) return errors[0]
  const deeper = errors.filter((e) => e.instancePath.length > union.instancePath.length)
  return deeper.at(-1) ?? union
}

export function validationMessage (error: FastifyError, request: FastifyRequest): string {
  const part = error.validationContext ?? 'request'
  const first = chosen((error.validation ?? []) as ValidationError[])
  if (first === undefined) return `${part} is invalid`
  const place = placeOf(first, part)
  const schema = first.parentSchema ?? propertySchema(request, part, place)
  if (first.keyword === 'additionalProperties') {
    const field = String(first.params.additionalProperty)
    const names = Object.keys(schema?.patternProperties ?? {})
    if (names.length > 0) {
      // A map keyed by ids (a role's multiplier, say): the name is not one.
      const key = names.length === 1 && names[0] === SNOWFLAKE_PATTERN ? 'ids (decimal, 1 to 20 digits without a leading zero)' : `names matching ${names.join(' or ')}`
      return `${place} is keyed by ${key}: ${JSON.stringify(field.slice(0, 24))} is not one`
    }
    const known = Object.keys(schema?.properties ?? {})
    const takes = known.length === 0 ? 'none' : known.join(', ')
    if (part === 'querystring') return `${field} is not a parameter of this route (it takes ${takes})`
    return `${place === part ? field : `${place}/${field}`} is not a field this route knows (it takes ${takes})`
  }
  if (isIdAsNumber(first)) {
    return `${place} must be a JSON string, not a number: send ids as strings (a number past 2^53 cannot be read exactly, so it is never applied)`
  }
  // A value of the wrong JSON type, for the field or for every branch of its union.
  const wrongType = first.keyword === 'type' ||
    (first.keyword === 'anyOf' && (error.validation as ValidationError[]).every((e) => e === first || e.instancePath !== first.instancePath || e.keyword === 'type'))
  if (wrongType && part === 'body') {
    return `${parameterMessage(place, schema) ?? `${place} ${first.message ?? 'is invalid'}`} (got ${jsonType(first.data)})`
  }
  if (first.keyword === 'minProperties' && schema?.properties !== undefined) {
    return `${place} must give at least one of ${Object.keys(schema.properties).join(', ')}`
  }
  return parameterMessage(place, schema) ?? `${place} ${first.message ?? 'is invalid'}`
}

/**
 * A check of the raw query (src/pipeline/read-routes.ts runs it before validation): the refusal of
 * query integers not written as plain decimal digits, or too large to be exact. (Validation
 * coerces with Number(), which would also accept "1e1", "0x10" or " 5", and turns 309 digits and
 * more into Infinity, which then passes the range check.)
 */
export function plainIntegers (names: string[]) {
  return function (request: FastifyRequest): InvalidParameterError | null {
    const query = request.query as Record<string, unknown>
    for (const name of names) {
      const value = query[name]
      if (typeof value === 'string' && !(/^\d+$/.test(value) && Number.isSafeInteger(Number(value)))) {
        return new InvalidParameterError(parameterMessage(name, propertySchema(request, 'querystring', name)) ?? `${name} is invalid`)
      }
    }
    return null
  }
}

/**
 * How many lists of ids that passed `distinctIds` it keeps, by their text. A list of 100 ids is
 * 2,099 bytes, and the string kept may hold the URL it was cut from (Node's limit on a request's
 * head, 16 KiB): at most 4 MiB, 0.5 MiB for lists sent alone.
 */
export const KNOWN_LISTS_MAX = 256

/** A query check that also tells how many lists it keeps (for its bound's test). */
type IdsCheck = ((request: FastifyRequest) => InvalidParameterError | null) & { readonly knownLists: number }

/**
 * A check of the raw query for a list of ids in one parameter (`ids=1,2,3`): 1 to `max`
 * distinct snowflakes separated by commas, or a refusal that names the parameter, its bounds
 * and what broke them (the schema's pattern alone cannot see a repeat, nor say which id is bad).
 *
 * Every request runs it, one answered from the response cache too, and a dashboard sends the
 * same list again and again: a list that passed is kept by its text (whether it passes is a
 * function of the text alone, so what is kept cannot go stale), and the next request with it
 * pays a lookup instead of a split, a match per id and a set (docs/benchmarks.md). The oldest
 * goes first past KNOWN_LISTS_MAX.
 */
export function distinctIds (name: string, max: number): IdsCheck {
  const bounds = `${name} must be 1 to ${max} distinct decimal ids (1 to 20 digits without a leading zero) separated by commas`
  const known = new Set<string>()
  const check = function (request: FastifyRequest): InvalidParameterError | null {
    const value = (request.query as Record<string, unknown>)[name]
    if (value === undefined) return new InvalidParameterError(`${name} is required: ${bounds}`)
    if (typeof value !== 'string') return new InvalidParameterError(`${bounds}, given once`)
    if (known.has(value)) return null
    const ids = value.split(',')
    if (ids.length > max) return new InvalidParameterError(`${bounds}; got ${ids.length}`)
    const bad = ids.find((id) => !SNOWFLAKE.test(id))
    if (bad !== undefined) return new InvalidParameterError(`${bounds}; ${JSON.stringify(bad.slice(0, 24))}${bad.length > 24 ? '…' : ''} is not one`)
    const seen = new Set<string>()
    for (const id of ids) {
      if (seen.has(id)) return new InvalidParameterError(`${bounds}; ${id} is given twice`)
      seen.add(id)
    }
    if (known.size >= KNOWN_LISTS_MAX) known.delete(known.values().next().value as string)
    known.add(value)
    return null
  }
  return Object.defineProperty(check, 'knownLists', { get: () => known.size }) as IdsCheck
}

/** A check of the raw query that refuses two parameters given together (`season` and `period`): `why` says why. */
export function notTogether (a: string, b: string, why: string) {
  return function (request: FastifyRequest): InvalidParameterError | null {
    const query = request.query as Record<string, unknown>
    return query[a] !== undefined && query[b] !== undefined ? new InvalidParameterError(`${a} and ${b} cannot be given together: ${why}`) : null
  }
}
