import { Type } from 'typebox'
import { named } from './common.js'
import { response, serviceErrors } from './responses.js'
import { responseHeaders } from './headers.js'

export const HealthStatus = named('HealthStatus', Type.Object({ status: Type.Literal('ok') }, { description: 'Healthy' }))

export const livenessResponses = {
  200: response(HealthStatus, 'The process serves requests', responseHeaders.service),
  ...serviceErrors('the instance is shutting down and takes no more requests')
}

export const readinessResponses = {
  200: response(HealthStatus, 'Ready: not shutting down, and Redis serves', responseHeaders.service),
  ...serviceErrors('shutting down (draining), or Redis cannot serve')
}
