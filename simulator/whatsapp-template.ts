// Template sends. Meta checks them against the approved template, which the simulator only knows
// when a test registers it via /_sim/config; unregistered templates pass unless strictTemplates is on,
// so end-to-end runs do not need to mirror the business's whole template library.
import { arr, badParam, GraphProblem, isObj, missing, obj, str, validateMedia } from './graph-errors.js';
import type { TemplateDef } from './state.js';

const COMPONENT_TYPES = ['header', 'body', 'footer', 'button'];
const BUTTON_SUB_TYPES = ['quick_reply', 'url', 'copy_code', 'flow', 'catalog', 'mpm', 'voice_call', 'order_details'];

/** What a send needs of a template made through the management API: its status and parameter counts. */
export interface ManagedTemplate {
  status: string;
  category: string;
  headerParams: number;
  bodyParams: number;
}

/** Returns the pricing category used in later status webhooks. */
export function validateTemplate(
  t: Record<string, unknown>,
  registry: Map<string, TemplateDef>,
  strict: boolean,
  managed?: (name: string, language: string) => ManagedTemplate | undefined,
): string {
  const name = str(t, 'name', 'template.name', 512) as string;
  const language = obj(t, 'language', 'template.language') as Record<string, unknown>;
  const code = str(language, 'code', 'template.language.code', 16) as string;

  const counts = { header: 0, body: 0 };
  if (t.components !== undefined) {
    const components = arr(t, 'components', 'template.components', 0, 20);
    components.forEach((c, n) => {
      const path = `template.components[${n}]`;
      if (!isObj(c)) throw badParam(`Param ${path} must be a JSON object.`);
      const type = (str(c, 'type', `${path}.type`, 16) as string).toLowerCase();
      if (!COMPONENT_TYPES.includes(type)) throw badParam(`Param ${path}.type must be one of ${COMPONENT_TYPES.join(', ')}.`);
      if (type === 'button') {
        const sub = str(c, 'sub_type', `${path}.sub_type`, 32) as string;
        if (!BUTTON_SUB_TYPES.includes(sub)) throw badParam(`Param ${path}.sub_type '${sub}' is not valid.`);
        if (c.index === undefined) throw missing(`${path}.index`);
        if (!/^\d$/.test(String(c.index))) throw badParam(`Param ${path}.index must be between 0 and 9.`);
      }
      if (c.parameters === undefined) return;
      const params = arr(c, 'parameters', `${path}.parameters`, 0, 100);
      params.forEach((p, m) => checkParameter(p, `${path}.parameters[${m}]`));
      if (type === 'header' || type === 'body') counts[type] += params.length;
    });
  }

  // A template made through the management API is sendable once approved, with its own parameter counts.
  const m = managed?.(name, code);
  if (m) {
    if (m.status === 'PAUSED') throw new GraphProblem(132015, `template name (${name}) is paused`);
    if (m.status === 'DISABLED') throw new GraphProblem(132016, `template name (${name}) is disabled`);
    if (m.status !== 'APPROVED') throw new GraphProblem(132001, `template name (${name}) does not exist in ${code}`);
    for (const part of ['header', 'body'] as const) {
      const expected = part === 'body' ? m.bodyParams : m.headerParams;
      if (expected !== counts[part])
        throw new GraphProblem(
          132000,
          `${part}: number of localizable_params (${counts[part]}) does not match the expected number of params (${expected})`,
        );
    }
    return m.category.toLowerCase();
  }
  const def = registry.get(name);
  if (!def) {
    if (strict) throw new GraphProblem(132001, `template name (${name}) does not exist in ${code}`);
    return 'utility';
  }
  if (def.languages && !def.languages.includes(code)) {
    throw new GraphProblem(132001, `template name (${name}) does not exist in ${code}`);
  }
  for (const part of ['header', 'body'] as const) {
    const expected = part === 'body' ? def.bodyParams : def.headerParams;
    if (expected !== null && expected !== counts[part]) {
      throw new GraphProblem(
        132000,
        `${part}: number of localizable_params (${counts[part]}) does not match the expected number of params (${expected})`,
      );
    }
  }
  return def.category;
}

function checkParameter(p: unknown, path: string): void {
  if (!isObj(p)) throw badParam(`Param ${path} must be a JSON object.`);
  const type = str(p, 'type', `${path}.type`, 32) as string;
  switch (type) {
    case 'text':
      str(p, 'text', `${path}.text`, 32768);
      return;
    case 'payload':
      str(p, 'payload', `${path}.payload`, 256);
      return;
    case 'coupon_code':
      str(p, 'coupon_code', `${path}.coupon_code`, 15);
      return;
    case 'currency': {
      const cur = obj(p, 'currency', `${path}.currency`) as Record<string, unknown>;
      str(cur, 'fallback_value', `${path}.currency.fallback_value`, 256);
      str(cur, 'code', `${path}.currency.code`, 3, { min: 3 });
      if (typeof cur.amount_1000 !== 'number') throw missing(`${path}.currency.amount_1000`);
      return;
    }
    case 'date_time': {
      const dt = obj(p, 'date_time', `${path}.date_time`) as Record<string, unknown>;
      str(dt, 'fallback_value', `${path}.date_time.fallback_value`, 256);
      return;
    }
    case 'image':
    case 'video':
    case 'document':
      validateMedia(obj(p, type, `${path}.${type}`) as Record<string, unknown>, `${path}.${type}`, false);
      return;
    case 'location': {
      const loc = obj(p, 'location', `${path}.location`) as Record<string, unknown>;
      if (loc.latitude === undefined) throw missing(`${path}.location.latitude`);
      if (loc.longitude === undefined) throw missing(`${path}.location.longitude`);
      return;
    }
    case 'action':
      obj(p, 'action', `${path}.action`);
      return;
    // Meta's ready-made group-invite templates take the group as a body parameter (notes §2.1).
    case 'group_id':
      str(p, 'group_id', `${path}.group_id`, 256);
      return;
    default:
      throw badParam(`Param ${path}.type '${type}' is not a valid template parameter type.`);
  }
}
