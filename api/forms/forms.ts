import { HINTS, defineOperation } from '../operation.js';
import { noInput } from '../../services/platform/storable.js';
import { actingForAccount } from '../../services/account/index.js';
import {
  cancelFormSession,
  createForm,
  formAnswerSummary,
  formBody,
  formListQuery,
  formListSchema,
  formSchema,
  formUpdateBody,
  getForm,
  getFormSession,
  getFormVersion,
  listFormSessions,
  listForms,
  publishForm,
  readFormModule,
  sendBody,
  sendForm,
  sessionListQuery,
  sessionListSchema,
  sessionSchema,
  setFormModule,
  settingsBody,
  settingsSchema,
  summarySchema,
  updateForm,
  versionSchema,
} from '../../services/forms/index.js';

// Forms (Endpoints > Leads, templates, forms, flows, posts, occasions; docs/forms.md): build a form
// of typed questions, publish a frozen version, send it into a chat (one session and workflow per
// recipient), read the answers per recipient and in aggregate. Every path needs a live issuer
// holding forms.view, forms.manage or forms.send (Authentication 4: a legacy key is refused) and
// the account's Forms module switched on (else 403 module_disabled). The tools are on the MCP
// `forms` server under mcp:builders ("Forms, flows and templates"); changes need mcp:write, a
// publish mcp:publish, a send or a cancel mcp:send.

const F = '/api/v3/forms';
const base = { tag: 'Forms', auth: 'rest', issuerRequired: true } as const;
const tools = { servers: ['forms'], scope: 'mcp:builders' } as const;
const read = { ...tools, annotations: HINTS.read } as const;
const VIEW = 'forms.view';
const MANAGE = 'forms.manage';
const SEND = 'forms.send';
const form = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: formSchema }) as const;
const session = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: sessionSchema }) as const;

export const formOperations = [
  defineOperation({
    ...base,
    name: 'create_form',
    method: 'POST',
    path: F,
    permission: MANAGE,
    summary: 'Build a form of typed questions (a draft)',
    description:
      'Build a form: typed questions (text, number, choice, date, phone, e-mail) with their rules. ' +
      'The form starts as a draft; publish it to send it. Each question has a key (the answer’s field name), a type, a label, ' +
      'required (default true) and its type’s rules: number min/max/integer, date min/max (YYYY-MM-DD), text min_length/' +
      'max_length/pattern, choice options [{id, title}]. A definition that breaks a rule is 422 with every field named.',
    body: formBody,
    output: form(201, 'The form (a draft)'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.write },
    handler: async ({ rc }, body) => createForm(rc, body),
  }),
  defineOperation({
    ...base,
    name: 'list_forms',
    method: 'GET',
    path: F,
    permission: VIEW,
    summary: 'List forms',
    description: 'The account’s forms, newest first.',
    query: formListQuery,
    output: { kind: 'list', status: 200, description: 'A page of forms', schema: formListSchema },
    mcp: read,
    handler: async ({ rc }, query) => listForms(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_form',
    method: 'GET',
    path: `${F}/{form}`,
    permission: VIEW,
    summary: 'Read a form and its versions',
    description: 'Read a form: its draft and its published versions',
    query: noInput,
    output: form(200, 'The form'),
    mcp: read,
    handler: async ({ rc }, { form: ref }) => getForm(rc, ref),
  }),
  defineOperation({
    ...base,
    name: 'update_form',
    method: 'PATCH',
    path: `${F}/{form}`,
    permission: MANAGE,
    summary: 'Edit a form’s draft',
    description:
      'Edit a form’s draft (fields sent replace the draft’s); published versions never change. ' +
      'questions, when sent, replaces the whole list. The next publish makes a new version; sessions already sent keep theirs.',
    body: formUpdateBody,
    output: form(200, 'The form'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc }, { form: ref, ...body }) => updateForm(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'publish_form',
    method: 'POST',
    path: `${F}/{form}/publish`,
    permission: MANAGE,
    summary: 'Publish the draft as a frozen version',
    description:
      'Publish the draft as the next version (frozen from then on). ' +
      'The version carries its native chat form (a one-screen WhatsApp Flow JSON and the Flow name a send opens). A draft unchanged ' +
      'since the last publish answers that version again (a retried publish makes no second version).',
    body: { type: 'object', additionalProperties: false, properties: {} },
    output: { kind: 'resource', status: 201, description: 'The published version', schema: versionSchema },
    mcp: { ...tools, elevation: 'mcp:publish', annotations: HINTS.write },
    handler: async ({ rc }, { form: ref }) => publishForm(rc, ref),
  }),
  defineOperation({
    ...base,
    name: 'get_form_version',
    method: 'GET',
    path: `${F}/{form}/versions/{version}`,
    permission: VIEW,
    summary: 'Read a published version',
    description: 'A published version of a form ({version}: 3 or v3).',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The version', schema: versionSchema },
    mcp: read,
    handler: async ({ rc }, { form: ref, version }) => getFormVersion(rc, ref, version),
  }),
  defineOperation({
    ...base,
    name: 'send_form',
    method: 'POST',
    path: `${F}/{form}/sends`,
    permission: SEND,
    summary: 'Send a form into a chat',
    description:
      'Send a published form to a phone number or into a chat: one session for the recipient. ' +
      'mode native (default): one WhatsApp Flow message, answered with the whole form (nfm_reply); questions: one chat message per ' +
      'question, each answer checked, an answer that does not fit asked again with why. The session reminds once after ' +
      'remind_after_minutes quiet and expires after expire_after_minutes (form.expired); every answer in: submitted ' +
      '(form.submitted). A form never published is 409 (reason not_published).',
    body: sendBody,
    refusals: { 409: 'The form has no published version (reason not_published)' },
    output: session(201, 'The session'),
    mcp: { ...tools, elevation: 'mcp:send', annotations: HINTS.send },
    handler: async ({ rc, deps }, { form: ref, ...body }) => sendForm(rc, deps, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'list_form_sessions',
    method: 'GET',
    path: `${F}/{form}/sessions`,
    permission: VIEW,
    summary: 'List a form’s sessions and answers',
    description: 'The form’s sessions with their answers (one per recipient), newest first; by status or recipient.',
    query: sessionListQuery,
    output: { kind: 'list', status: 200, description: 'A page of sessions', schema: sessionListSchema },
    mcp: read,
    handler: async ({ rc }, { form: ref, ...query }) => listFormSessions(rc, ref, query),
  }),
  defineOperation({
    ...base,
    name: 'get_form_session',
    method: 'GET',
    path: `${F}/{form}/sessions/{session}`,
    permission: VIEW,
    summary: 'Read a form session',
    description: 'Read one recipient’s session: its status and the answers accepted so far',
    query: noInput,
    output: session(200, 'The session'),
    mcp: read,
    handler: async ({ rc }, { form: ref, session: uid }) => getFormSession(rc, ref, uid),
  }),
  defineOperation({
    ...base,
    name: 'cancel_form_session',
    method: 'POST',
    path: `${F}/{form}/sessions/{session}/cancel`,
    permission: SEND,
    summary: 'Cancel a form session',
    description: 'End an active session now (cancelled): no more questions, reminders or expiry',
    body: { type: 'object', additionalProperties: false, properties: {} },
    refusals: { 409: 'The session has ended already (reason session_ended)' },
    output: session(200, 'The session'),
    mcp: { ...tools, elevation: 'mcp:send', annotations: HINTS.update },
    handler: async ({ rc, deps }, { form: ref, session: uid }) => cancelFormSession(rc, deps, ref, uid),
  }),
  defineOperation({
    ...base,
    name: 'get_form_answers',
    method: 'GET',
    path: `${F}/{form}/answers`,
    permission: VIEW,
    summary: 'A form’s answers in aggregate',
    description:
      'Sessions by status; per question how many submitted sessions answered it, each option’s count, a number’s min, max and ' +
      'average. Questions as the version given says (default the latest).',
    query: { type: 'object', additionalProperties: false, properties: { version: { type: 'integer', minimum: 1 } } },
    output: { kind: 'outcome', status: 200, description: 'The summary', schema: summarySchema },
    mcp: read,
    handler: async ({ rc }, { form: ref, ...query }) => formAnswerSummary(rc, ref, query),
  }),
];

/** The operator's switch of an account's Forms module. */
export const formSettingsOperations = [
  defineOperation({
    tag: 'Forms (operator)',
    auth: 'operator',
    name: 'admin_get_form_settings',
    method: 'GET',
    path: '/admin/v1/accounts/{account}/forms/settings',
    summary: 'Read whether an account’s Forms module is on',
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    cli: [{ command: 'forms:settings' }],
    handler: async ({ oc }, { account }) => readFormModule(await actingForAccount(oc, account)),
  }),
  defineOperation({
    tag: 'Forms (operator)',
    auth: 'operator',
    name: 'admin_update_form_settings',
    method: 'PATCH',
    path: '/admin/v1/accounts/{account}/forms/settings',
    summary: 'Switch an account’s Forms module on or off (off: every forms path answers 403 module_disabled)',
    body: settingsBody,
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    cli: [
      { command: 'forms:enable', help: 'Switch the Forms module on', fixed: { enabled: true }, fields: [] },
      {
        command: 'forms:disable',
        help: 'Switch the Forms module off: every forms path answers 403',
        fixed: { enabled: false },
        fields: [],
      },
    ],
    handler: async ({ oc }, { account, ...body }) => setFormModule(await actingForAccount(oc, account), body),
  }),
];
