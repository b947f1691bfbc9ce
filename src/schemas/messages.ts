// Clear messages for invalid input, built from the same schemas that validate it, so a message
// always names the parameter and the bounds actually enforced.
import type { FastifyError, FastifyRequest } from 'fastify'
import { InvalidParameterError } from '../errors.js'
import { SNOWFLAKE_PATTERN } from '../snowflake.js'

const SNOWFLAKE = new RegExp(SNOWFLAKE_PATTERN)

interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
  pattern?: string
  enum?: unknown[]
}

export function parameterMessage (name: string, schema: PropertySchema | undefined): string | null {
  if (schema?.type === 'integer') {
    return `${name} must be an integer from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`
  }
  if (schema?.enum !== undefined) {
    return `${name} must be one of ${schema.enum.join(', ')}`
  }
  if (schema?.pattern === SNOWFLAKE_PATTERN) {
    return `${name} must be a decimal id of 1 to 20 digits without a leading zero`
  }
  return null
}

function propertySchema (request: FastifyRequest, part: string, name: string): PropertySchema | undefined {
  const schema = (request.routeOptions.schema as Record<string, { properties?: Record<string, PropertySchema> }> | undefined)?.[part]
  return schema?.properties?.[name]
}

export function validationMessage (error: FastifyError, request: FastifyRequest): string {
  const first = error.validation?.[0]
  const part = error.validationContext ?? 'request'
  const name = first?.instancePath.replace(/^\//, '') ?? ''
  if (first !== undefined && name !== '') {
    // A value inside the body (`awards/3/user_id`) is named by its path; its schema is the error's.
    const schema = propertySchema(request, part, name) ?? (first.keyword === 'pattern' ? { pattern: String(first.params.pattern) } : undefined)
    return parameterMessage(name, schema) ?? `${name} ${first.message ?? 'is invalid'}`
  }
  return `${part} ${first?.message ?? 'is invalid'}`
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
 * A check of the raw query for a list of ids in one parameter (`ids=1,2,3`): 1 to `max`
 * distinct snowflakes separated by commas, or a refusal that names the parameter, its bounds
 * and what broke them (the schema's pattern alone cannot see a repeat, nor say which id is bad).
 */
export function distinctIds (name: string, max: number) {
  const bounds = `${name} must be 1 to ${max} distinct decimal ids (1 to 20 digits without a leading zero) separated by commas`
  return function (request: FastifyRequest): InvalidParameterError | null {
    const value = (request.query as Record<string, unknown>)[name]
    if (value === undefined) return new InvalidParameterError(`${name} is required: ${bounds}`)
    if (typeof value !== 'string') return new InvalidParameterError(`${bounds}, given once`)
    const ids = value.split(',')
    if (ids.length > max) return new InvalidParameterError(`${bounds}; got ${ids.length}`)
    const bad = ids.find((id) => !SNOWFLAKE.test(id))
    if (bad !== undefined) return new InvalidParameterError(`${bounds}; ${JSON.stringify(bad.slice(0, 24))}${bad.length > 24 ? '…' : ''} is not one`)
    const seen = new Set<string>()
    for (const id of ids) {
      if (seen.has(id)) return new InvalidParameterError(`${bounds}; ${id} is given twice`)
      seen.add(id)
    }
    return null
  }
}
