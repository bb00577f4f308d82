import type { FormDefinition, Question } from './definition.js';

// The native chat form: the WhatsApp Flow a published version stands for (Flow JSON, notes §2.3)
// and the interactive `flow` message that opens it (§2.4). The answer comes back as an nfm_reply
// whose response_json carries our flow_token (the session's uid) and one field per question key.

export const FLOW_SCREEN = 'FORM';

/** The Flow's name on the provider for a form version: the message names it (flow_name). */
export const flowName = (formUid: string, version: number) => `${formUid}_v${version}`;

function component(q: Question): Record<string, unknown> {
  const base = { name: q.key, label: q.label.slice(0, 30), required: q.required };
  switch (q.type) {
    case 'choice':
      return { type: 'RadioButtonsGroup', ...base, 'data-source': (q.options ?? []).map((o) => ({ id: o.id, title: o.title })) };
    case 'date':
      return { type: 'DatePicker', ...base };
    case 'number':
      return { type: 'TextInput', ...base, 'input-type': 'number' };
    case 'phone':
      return { type: 'TextInput', ...base, 'input-type': 'phone' };
    case 'email':
      return { type: 'TextInput', ...base, 'input-type': 'email' };
    default:
      return { type: 'TextInput', ...base, 'input-type': 'text' };
  }
}

/** A complete-only, single-screen Flow JSON (no data endpoint): what the version's native form is. */
export function flowJson(def: FormDefinition): Record<string, unknown> {
  const payload = Object.fromEntries(def.questions.map((q) => [q.key, `\${form.${q.key}}`]));
  return {
    version: '7.3',
    screens: [
      {
        id: FLOW_SCREEN,
        title: def.title.slice(0, 30),
        terminal: true,
        layout: {
          type: 'SingleColumnLayout',
          children: [
            {
              type: 'Form',
              name: 'form',
              children: [
                ...def.questions.map(component),
                { type: 'Footer', label: def.submit_label, 'on-click-action': { name: 'complete', payload } },
              ],
            },
          ],
        },
      },
    ],
  };
}

/** The Cloud API `interactive` object that opens the native form for one session. */
export function flowMessage(def: FormDefinition, formUid: string, version: number, flowToken: string, reminder: boolean) {
  return {
    type: 'flow',
    header: { type: 'text', text: def.title.slice(0, 60) },
    body: { text: (reminder ? `Reminder: ${def.intro}` : def.intro).slice(0, 1024) },
    action: {
      name: 'flow',
      parameters: {
        flow_message_version: '3',
        flow_token: flowToken,
        flow_name: flowName(formUid, version),
        flow_cta: def.submit_label,
        mode: 'published',
        flow_action: 'navigate',
        flow_action_payload: { screen: FLOW_SCREEN },
      },
    },
  };
}

/** The native form's answers out of an nfm_reply's response_json (a JSON string); null when it is not one. */
export function nativeAnswers(interactive: unknown): { flowToken: string; fields: Record<string, unknown> } | null {
  if (typeof interactive !== 'object' || interactive === null) return null;
  const i = interactive as { type?: unknown; nfm_reply?: { name?: unknown; response_json?: unknown } };
  if (i.type !== 'nfm_reply' || !i.nfm_reply || i.nfm_reply.name === 'address_message') return null;
  const raw = i.nfm_reply.response_json;
  let parsed: unknown;
  try {
    parsed = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { flow_token: flowToken, ...fields } = parsed as Record<string, unknown>;
  return typeof flowToken === 'string' ? { flowToken, fields } : null;
}

/** What a customer picked on reply buttons or a list (its id), else null. */
export function pickedId(interactive: unknown): string | null {
  if (typeof interactive !== 'object' || interactive === null) return null;
  const i = interactive as { button_reply?: { id?: unknown }; list_reply?: { id?: unknown } };
  const id = i.button_reply?.id ?? i.list_reply?.id;
  return typeof id === 'string' ? id : null;
}
