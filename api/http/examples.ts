import type { JsonSchema } from './validation.js';

// Request samples for the reference page, made from the very schemas the door validates with, so a
// sample shown is a request the door accepts. An `examples` (or `default`, `const`, `enum`) written
// on a schema wins; otherwise a value is made from the type, the format and the field's name.

type Schema = JsonSchema;

const SAMPLE_PHONE = '+255712345678';

/** Values by field name, for strings a bare type would leave meaningless or invalid. */
const BY_NAME: Array<[RegExp, unknown]> = [
  [/^(to|phone|phone_number|full_phone_number|number|recipient|msisdn)$/i, SAMPLE_PHONE],
  [/^code$/, '15555'],
  [/^event_type$/, 'order.received'],
  [/email/, 'customer@example.com'],
  [/(^|_)(url|link|callback|endpoint)$/, 'https://example.com/callback'],
  [/^(message|body|text|content)$/, 'Hello from the API'],
  [/^(name|title|subject)$/, 'Example'],
  [/^sku$/, 'SKU-1'],
  [/^currency$/, 'USD'],
  [/^country_code$/, '255'],
  [/^language$/, 'en'],
  [/(^|_)at$|_time$/, '2026-12-01T09:00:00Z'],
];

const FORMATS: Record<string, string> = {
  email: 'customer@example.com',
  uri: 'https://example.com/callback',
  url: 'https://example.com/callback',
  'date-time': '2026-12-01T09:00:00Z',
  date: '2026-12-01',
  time: '09:00:00Z',
  uuid: '3f0c1e4a-7b2d-4c8e-9a51-6d2f0b7e4c13',
  ipv4: '203.0.113.10',
  hostname: 'example.com',
};

/** A schema's keywords; `true`, `false` and absent have none. */
const asObject = (schema: unknown): Schema => (typeof schema === 'object' && schema !== null ? (schema as Schema) : {});

const firstOf = (v: unknown) => (Array.isArray(v) ? v[0] : undefined);

/** A value the schema accepts (null when it cannot tell). `name` is the property it is for. */
export function exampleOf(schema: JsonSchema | boolean | undefined, name = ''): unknown {
  const s = asObject(schema);
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null) ?? s.enum[0];
  // allOf splits one schema's keywords; of oneOf/anyOf the first branch is shown.
  if (Array.isArray(s.allOf) || s.oneOf || s.anyOf) {
    const { allOf, oneOf, anyOf, ...rest } = s;
    const parts = [...((allOf as unknown[] | undefined) ?? []), firstOf(oneOf) ?? firstOf(anyOf)].filter((b) => b !== undefined);
    return exampleOf(
      parts.reduce<Schema>((into, b) => merged(into, asObject(b)), rest),
      name,
    );
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : s.properties ? ['object'] : [];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'object':
      return objectExample(s);
    case 'array': {
      const count = Math.max(1, Number(s.minItems ?? 1));
      return Array.from({ length: count }, () => exampleOf(s.items as Schema | undefined, name.replace(/s$/, '')));
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
      const max = typeof s.maximum === 'number' ? s.maximum : Infinity;
      return Math.min(Math.max(min, 1), max);
    }
    case 'boolean':
      return false;
    case 'string':
      return stringExample(s, name);
    case 'null':
      return null;
    default:
      return null;
  }
}

/** Two schemas' keywords as one: properties merged by name (`false`, a field barred, wins), required lists joined. */
function merged(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (a.properties && b.properties) {
    const pa = a.properties as Record<string, Schema | boolean>;
    const pb = b.properties as Record<string, Schema | boolean>;
    out.properties = Object.fromEntries(
      [...new Set([...Object.keys(pa), ...Object.keys(pb)])].map((k) => [
        k,
        pa[k] === false || pb[k] === false ? false : k in pa && k in pb ? merged(asObject(pa[k]), asObject(pb[k])) : (pb[k] ?? pa[k]),
      ]),
    );
  }
  if (a.required || b.required) out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  return out;
}

function objectExample(s: Schema): Record<string, unknown> {
  const props = Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, Schema | boolean>).filter(([, v]) => v !== false));
  const required = new Set((s.required as string[] | undefined) ?? []);
  // The required fields, and any the schema gives an example of; a body with nothing required shows its first field.
  const shown = Object.keys(props).filter((k) => required.has(k) || hasExample(props[k]));
  if (!shown.length && Object.keys(props).length && Number(s.minProperties ?? 0) >= 0) shown.push(Object.keys(props)[0]);
  return Object.fromEntries(shown.map((k) => [k, exampleOf(props[k], k)]));
}

const hasExample = (schema: Schema | boolean) => {
  const s = asObject(schema);
  return (Array.isArray(s.examples) && s.examples.length > 0) || 'example' in s;
};

function stringExample(s: Schema, name: string): string {
  const format = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  let value = format ?? (BY_NAME.find(([re]) => re.test(name))?.[1] as string | undefined) ?? (name ? name.replace(/_/g, ' ') : 'text');
  if (typeof s.pattern === 'string') {
    // A name-like pattern takes the value as a slug; nothing else is guessed.
    const pattern = new RegExp(s.pattern, 'u');
    const slug = value.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    value = pattern.test(value) ? value : pattern.test(slug) ? slug : '';
  }
  const min = Number(s.minLength ?? 0);
  const max = Number(s.maxLength ?? Infinity);
  if (value.length < min) value = value.padEnd(min, 'x');
  return value.slice(0, max);
}
