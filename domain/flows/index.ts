// Flows (docs/flows.md): journeys a customer is walked through in a chat, in the shape a Twilio
// Studio user knows: a definition of named states (widgets), each of a type with its properties and
// transitions on events, starting at `initial_state`. The words and pure rules of the family: the
// strict check of a definition (the operator loads it; nothing else edits the graph), the text a
// step sends, and what a reply makes of a split. Pure: the session workflow imports it too.

export const FLOW_STATUSES = ['draft', 'published'] as const;
export type FlowStatus = (typeof FLOW_STATUSES)[number];

export const SESSION_STATUSES = ['active', 'ended'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/**
 * Why a session ended. completed: it reached a state with nowhere to go; ended: the business ended
 * it (the API); timed_out: a wait for a reply ran out with no `timeout` transition; failed: a step
 * failed with no `failed` transition; handed_over: a `handover` state gave the chat to a person.
 */
export const END_REASONS = ['completed', 'ended', 'timed_out', 'failed', 'handed_over'] as const;
export type EndReason = (typeof END_REASONS)[number];

export const LEAD_STAGE_NAMES = ['new', 'contacted', 'qualified', 'opportunity', 'won', 'lost', 'unqualified'] as const;

/** The state types and the events each may leave by. */
export const STATE_EVENTS = {
  send_message: ['sent', 'failed'],
  wait_for_reply: ['reply', 'timeout', 'failed'],
  split: ['no_match'],
  set_lead_stage: ['done', 'failed'],
  run_operation: ['succeeded', 'failed'],
  handover: [],
  end: [],
} as const satisfies Record<string, readonly string[]>;
export type StateType = keyof typeof STATE_EVENTS;
export const STATE_TYPES = Object.keys(STATE_EVENTS) as StateType[];

/** The bounds of a definition: beyond them the load is refused (422), and a bundle beyond MAX_BUNDLE_BYTES is 413. */
export const FLOW_LIMITS = {
  states: 200,
  transitions: 50,
  nameLength: 64,
  bodyLength: 4096,
  cases: 20,
  definitionBytes: 256 * 1024,
  minTimeoutSeconds: 1,
  maxTimeoutSeconds: 7 * 24 * 3600,
  defaultTimeoutSeconds: 24 * 3600,
  /** How much of a reply a regex case reads. */
  regexInput: 500,
  /** Steps a session may take (a loop through a wait is allowed; a customer cannot keep it going for ever): beyond, it ends failed. */
  steps: 1000,
} as const;
export const MAX_BUNDLE_BYTES = 512 * 1024;

export interface FlowTransition {
  event: string;
  next: string;
}

/** What a message state sends: text, or a template of the account (name, language, components). */
export interface MessageProps {
  body?: string;
  template?: { name: string; language: string; components?: unknown[] };
}

export interface SplitCase {
  /** The event this case leaves by (a transition names it). */
  event: string;
  /** How the reply is compared: equals and contains ignore case and surrounding spaces; any_of lists words. */
  match: 'equals' | 'contains' | 'any_of' | 'regex';
  value: string | string[];
}

export interface FlowState {
  name: string;
  type: StateType;
  properties: Record<string, unknown>;
  transitions: FlowTransition[];
}

export interface FlowDefinition {
  description?: string;
  initial_state: string;
  states: FlowState[];
}

export type DefinitionErrors = Record<string, string[]>;

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The events a state of this type may leave by (a split adds its cases' events). */
export function eventsOf(state: Pick<FlowState, 'type' | 'properties'>): string[] {
  const own: string[] = [...(STATE_EVENTS[state.type] ?? [])];
  if (state.type === 'split' && Array.isArray(state.properties.cases))
    for (const c of state.properties.cases) if (isObject(c) && typeof c.event === 'string') own.push(c.event);
  return own;
}

/**
 * Checks a definition strictly: unknown state types or properties, transitions on events the type
 * does not have, transitions to states that do not exist, states no path reaches, loops that never
 * wait for the customer (they would spin), and sizes past FLOW_LIMITS. Answers the field problems
 * (empty when it holds) and, when it holds, the definition as it is stored (unknown top-level keys
 * refused, not dropped: an import that says more than we read is not silently trimmed).
 */
export function checkDefinition(raw: unknown): { errors: DefinitionErrors; definition: FlowDefinition | null } {
  const errors: DefinitionErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!isObject(raw)) {
    add('definition', 'The definition must be an object with initial_state and states.');
    return { errors, definition: null };
  }
  if (JSON.stringify(raw).length > FLOW_LIMITS.definitionBytes)
    add('definition', `The definition may be at most ${FLOW_LIMITS.definitionBytes} bytes.`);
  for (const k of Object.keys(raw))
    if (!['description', 'initial_state', 'states', 'flags'].includes(k)) add(`definition.${k}`, `Unknown field ${k}.`);
  if (raw.description !== undefined && (typeof raw.description !== 'string' || raw.description.length > 1000))
    add('definition.description', 'The description must be text of at most 1000 characters.');
  if (typeof raw.initial_state !== 'string' || !raw.initial_state) add('definition.initial_state', 'The initial_state must name a state.');
  if (!Array.isArray(raw.states) || raw.states.length === 0) {
    add('definition.states', 'The states must be a non-empty list.');
    return { errors, definition: null };
  }
  if (raw.states.length > FLOW_LIMITS.states) {
    add('definition.states', `A flow may have at most ${FLOW_LIMITS.states} states.`);
    return { errors, definition: null };
  }
  const states: FlowState[] = [];
  const names = new Set<string>();
  raw.states.forEach((s, i) => {
    const at = `definition.states.${i}`;
    if (!isObject(s)) return add(at, 'Each state must be an object.');
    for (const k of Object.keys(s))
      if (!['name', 'type', 'properties', 'transitions'].includes(k)) add(`${at}.${k}`, `Unknown field ${k}.`);
    const name = s.name;
    if (typeof name !== 'string' || !NAME.test(name) || name.length > FLOW_LIMITS.nameLength)
      add(`${at}.name`, `The name must start with a letter and hold letters, digits, _ or - (at most ${FLOW_LIMITS.nameLength}).`);
    else if (names.has(name)) add(`${at}.name`, `The state name ${name} is used twice.`);
    else names.add(name);
    if (typeof s.type !== 'string' || !(STATE_TYPES as string[]).includes(s.type)) {
      add(`${at}.type`, `Unknown state type ${JSON.stringify(s.type)}; one of ${STATE_TYPES.join(', ')}.`);
      return;
    }
    const type = s.type as StateType;
    const properties = s.properties === undefined ? {} : s.properties;
    if (!isObject(properties)) return add(`${at}.properties`, 'The properties must be an object.');
    checkProperties(type, properties, `${at}.properties`, add);
    const transitions = s.transitions === undefined ? [] : s.transitions;
    if (!Array.isArray(transitions) || transitions.length > FLOW_LIMITS.transitions)
      return add(`${at}.transitions`, `The transitions must be a list of at most ${FLOW_LIMITS.transitions}.`);
    const allowed = eventsOf({ type, properties });
    const seen = new Set<string>();
    transitions.forEach((t, j) => {
      const tat = `${at}.transitions.${j}`;
      if (
        !isObject(t) ||
        typeof t.event !== 'string' ||
        typeof t.next !== 'string' ||
        Object.keys(t).some((k) => k !== 'event' && k !== 'next')
      )
        return add(tat, 'A transition is {event, next}.');
      if (!allowed.includes(t.event))
        add(`${tat}.event`, `A ${type} state has no event ${t.event}${allowed.length ? `; it has ${allowed.join(', ')}` : ''}.`);
      if (seen.has(t.event)) add(`${tat}.event`, `The event ${t.event} has two transitions.`);
      seen.add(t.event);
    });
    if ((type === 'handover' || type === 'end') && transitions.length)
      add(`${at}.transitions`, `A ${type} state ends the session; it has no transitions.`);
    states.push({ name: String(name), type, properties, transitions: transitions as FlowTransition[] });
  });
  if (Object.keys(errors).length) return { errors, definition: null };

  const byName = new Map(states.map((s) => [s.name, s]));
  const initial = String(raw.initial_state);
  if (!byName.has(initial)) add('definition.initial_state', `No state is named ${initial}.`);
  states.forEach((s, i) =>
    s.transitions.forEach((t, j) => {
      if (!byName.has(t.next)) add(`definition.states.${i}.transitions.${j}.next`, `No state is named ${t.next} (a dangling transition).`);
    }),
  );
  if (Object.keys(errors).length) return { errors, definition: null };

  // Reachability from the initial state.
  const reached = new Set<string>([initial]);
  const queue = [initial];
  while (queue.length)
    for (const t of byName.get(queue.shift()!)!.transitions)
      if (!reached.has(t.next)) {
        reached.add(t.next);
        queue.push(t.next);
      }
  states.forEach((s, i) => {
    if (!reached.has(s.name)) add(`definition.states.${i}.name`, `The state ${s.name} is unreachable from ${initial}.`);
  });
  // A loop must pass a wait for the customer: among the states that do not wait, the graph must be acyclic.
  const cycle = cycleWithoutWait(states);
  if (cycle) add('definition.states', `The states ${cycle.join(' → ')} loop without waiting for a reply.`);
  if (Object.keys(errors).length) return { errors, definition: null };
  const definition: FlowDefinition = { initial_state: initial, states };
  if (typeof raw.description === 'string') definition.description = raw.description;
  return { errors, definition };
}

function checkProperties(type: StateType, p: Record<string, unknown>, at: string, add: (f: string, m: string) => void) {
  const known: Record<StateType, string[]> = {
    send_message: ['body', 'template'],
    wait_for_reply: ['body', 'template', 'timeout_seconds'],
    split: ['cases'],
    set_lead_stage: ['stage', 'reason'],
    run_operation: ['operation', 'input'],
    handover: ['note'],
    end: [],
  };
  for (const k of Object.keys(p)) if (!known[type].includes(k)) add(`${at}.${k}`, `A ${type} state has no property ${k}.`);
  const text = (k: string, required: boolean, max: number = FLOW_LIMITS.bodyLength) => {
    if (p[k] === undefined) return required ? add(`${at}.${k}`, `The ${k} is required.`) : undefined;
    if (typeof p[k] !== 'string' || !p[k] || (p[k] as string).length > max)
      add(`${at}.${k}`, `The ${k} must be text of 1 to ${max} characters.`);
  };
  if (type === 'send_message' || type === 'wait_for_reply') {
    if (p.body !== undefined && p.template !== undefined) add(at, 'A message is a body or a template, not both.');
    if (type === 'send_message' && p.body === undefined && p.template === undefined)
      add(at, 'A send_message state needs a body or a template.');
    if (p.body !== undefined) text('body', false);
    if (p.template !== undefined) {
      const t = p.template;
      if (
        !isObject(t) ||
        typeof t.name !== 'string' ||
        !t.name ||
        typeof t.language !== 'string' ||
        !t.language ||
        (t.components !== undefined && !Array.isArray(t.components)) ||
        Object.keys(t).some((k) => !['name', 'language', 'components'].includes(k))
      )
        add(`${at}.template`, 'A template is {name, language, components?}.');
    }
  }
  if (type === 'wait_for_reply' && p.timeout_seconds !== undefined) {
    const s = p.timeout_seconds;
    if (typeof s !== 'number' || !Number.isInteger(s) || s < FLOW_LIMITS.minTimeoutSeconds || s > FLOW_LIMITS.maxTimeoutSeconds)
      add(
        `${at}.timeout_seconds`,
        `The timeout is whole seconds from ${FLOW_LIMITS.minTimeoutSeconds} to ${FLOW_LIMITS.maxTimeoutSeconds}.`,
      );
  }
  if (type === 'split') {
    const cases = p.cases;
    if (!Array.isArray(cases) || cases.length === 0 || cases.length > FLOW_LIMITS.cases)
      return add(`${at}.cases`, `A split needs 1 to ${FLOW_LIMITS.cases} cases.`);
    const events = new Set<string>(['no_match']);
    cases.forEach((c, i) => {
      const cat = `${at}.cases.${i}`;
      if (!isObject(c)) return add(cat, 'A case is {event, match, value}.');
      if (typeof c.event !== 'string' || !NAME.test(c.event) || c.event.length > FLOW_LIMITS.nameLength)
        add(`${cat}.event`, 'The event must start with a letter and hold letters, digits, _ or -.');
      else if (events.has(c.event)) add(`${cat}.event`, `The event ${c.event} is used twice.`);
      else events.add(c.event);
      if (!['equals', 'contains', 'any_of', 'regex'].includes(c.match as string))
        add(`${cat}.match`, 'The match is equals, contains, any_of or regex.');
      if (c.match === 'any_of') {
        if (!Array.isArray(c.value) || !c.value.length || c.value.some((v) => typeof v !== 'string' || !v || v.length > 200))
          add(`${cat}.value`, 'any_of takes a list of words.');
      } else if (typeof c.value !== 'string' || !c.value || c.value.length > 200)
        add(`${cat}.value`, 'The value must be text of 1 to 200 characters.');
      else if (c.match === 'regex')
        try {
          new RegExp(c.value, 'i');
        } catch {
          add(`${cat}.value`, 'The value is not a valid regular expression.');
        }
      for (const k of Object.keys(c)) if (!['event', 'match', 'value'].includes(k)) add(`${cat}.${k}`, `A case has no field ${k}.`);
    });
  }
  if (type === 'set_lead_stage') {
    if (!(LEAD_STAGE_NAMES as readonly unknown[]).includes(p.stage))
      add(`${at}.stage`, `The stage is one of ${LEAD_STAGE_NAMES.join(', ')}.`);
    text('reason', false, 500);
  }
  if (type === 'run_operation') {
    text('operation', true, 100);
    if (p.input !== undefined && !isObject(p.input)) add(`${at}.input`, 'The input must be an object.');
  }
  if (type === 'handover') text('note', false, 1000);
}

/** A loop through states none of which waits for a reply (names in order), or null. */
function cycleWithoutWait(states: FlowState[]): string[] | null {
  const byName = new Map(states.map((s) => [s.name, s]));
  const colour = new Map<string, 'grey' | 'black'>();
  const path: string[] = [];
  const visit = (name: string): string[] | null => {
    const s = byName.get(name)!;
    if (s.type === 'wait_for_reply') return null;
    colour.set(name, 'grey');
    path.push(name);
    for (const t of s.transitions) {
      const c = colour.get(t.next);
      if (c === 'grey') return [...path.slice(path.indexOf(t.next)), t.next];
      if (c === undefined) {
        const found = visit(t.next);
        if (found) return found;
      }
    }
    path.pop();
    colour.set(name, 'black');
    return null;
  };
  for (const s of states)
    if (!colour.has(s.name)) {
      const found = visit(s.name);
      if (found) return found;
    }
  return null;
}

/** The state a transition on `event` leads to, or null when the state has none (the session ends there). */
export function nextState(state: FlowState, event: string): string | null {
  return state.transitions.find((t) => t.event === event)?.next ?? null;
}

/** The event a split leaves by for this reply: the first case that matches, else no_match. */
export function splitEvent(cases: readonly SplitCase[], reply: string): string {
  const said = reply.trim().toLowerCase();
  for (const c of cases) {
    const v = c.value;
    if (c.match === 'equals' && typeof v === 'string' && said === v.trim().toLowerCase()) return c.event;
    if (c.match === 'contains' && typeof v === 'string' && said.includes(v.trim().toLowerCase())) return c.event;
    if (c.match === 'any_of' && Array.isArray(v) && v.some((w) => said === w.trim().toLowerCase())) return c.event;
    // Only the reply's start is matched against an expression: a pattern loaded from elsewhere cannot backtrack for long.
    if (c.match === 'regex' && typeof v === 'string' && new RegExp(v, 'i').test(reply.slice(0, FLOW_LIMITS.regexInput))) return c.event;
  }
  return 'no_match';
}

/** What `{{…}}` reads in a body: flow.data.* (the start's parameters), contact.phone, widgets.<state>.body (a reply). */
export interface FlowContext {
  flow: { data: Record<string, unknown> };
  contact: { phone: string };
  widgets: Record<string, { body?: string; event?: string }>;
}

/** Fills `{{a.b.c}}` from the context; a path that names nothing becomes empty. */
export function renderText(text: string, ctx: FlowContext): string {
  return text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_m, path: string) => {
    let v: unknown = ctx;
    for (const k of path.split('.')) v = isObject(v) ? v[k] : undefined;
    return v === undefined || v === null || typeof v === 'object' ? '' : String(v);
  });
}

/** A flow definition's checksum input: the same definition always serialises the same (keys sorted). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The export format's name and version: an importer checks both. */
export const BUNDLE_FORMAT = 'svc.flow-bundle';
export const BUNDLE_VERSION = 1;
