// Records the form session workflow's histories for the replay test:
//   npx tsx scripts/record-forms.ts
// A stack of its own: a native form answered with one field that does not fit (asked again in the
// chat, then submitted, thanks sent); a form asked question by question that ends after three
// answers that do not fit; a cancelled session; and one nobody answers (reminded after a minute,
// expired after two: the real timers, so this recorder takes about two minutes).
// test/replay/histories/formSessionWorkflow/<scenario>.json. Re-record after a change to workflows/forms/.
import { formSessionWorkflowId } from '../workflows/forms/form-session.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'formSessionWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Asks `fn` until `ok` holds (the stack may be slow on a shared machine). */
async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await fn();
    if (ok(v)) return v;
    await sleep(250);
  }
  throw new Error(`recorder: ${what} did not happen`);
}

await withRecorder('svc-record-forms', {}, 'Forms recorder', async ({ client, account, admin, api, sim, save }) => {
  const pnid = `57${account.id}0001`;
  await admin('POST', `/accounts/${account.id}/phone-numbers`, {
    number: '+255700000401',
    capabilities: ['whatsapp'],
    provider_phone_number_id: pnid,
    business_account_id: `WABA${account.id}`,
  });
  const questions = [
    { key: 'full_name', type: 'text', label: 'Your name?' },
    { key: 'age', type: 'number', label: 'Your age?', integer: true, min: 18 },
  ];
  const form = (await api('POST', '/api/v3/forms', { name: 'Recorder', questions, thank_you: 'Thanks!' })).data;
  await api('POST', `/api/v3/forms/${form.id}/publish`, {});
  const slow = (await api('POST', '/api/v3/forms', { name: 'Slow', questions, remind_after_minutes: 1, expire_after_minutes: 2 })).data;
  await api('POST', `/api/v3/forms/${slow.id}/publish`, {});
  const handle = (uid: string) => client.workflow.getHandle(formSessionWorkflowId(account.id, uid));
  const customer = (n: number) => `+2557000005${String(n).padStart(2, '0')}`;
  const say = (to: string, text: string) => sim('POST', '/_sim/whatsapp/inbound', { from: to, phone_number_id: pnid, text });
  const send = async (formId: string, to: string, mode?: string) => {
    await sim('POST', '/_sim/whatsapp/window', { from: to, phone_number_id: pnid });
    return (await api('POST', `/api/v3/forms/${formId}/sends`, { to, ...(mode ? { mode } : {}) })).data;
  };

  const quiet = await send(slow.id, customer(4));
  const expired = save(TYPE, 'expired-no-reply', handle(quiet.id));

  const session = (formId: string, uid: string) => api('GET', `/api/v3/forms/${formId}/sessions/${uid}`).then((r) => r.data);
  const prompts = (to: string) =>
    sim('GET', `/_sim/whatsapp/messages?to=${encodeURIComponent(to)}`).then((r) => (r.messages as unknown[]).length);

  const native = await send(form.id, customer(1));
  await until(
    () => prompts(customer(1)),
    (n) => n >= 1,
    'the flow message',
  );
  await sim('POST', '/_sim/whatsapp/flows/complete', { flow_token: native.id, answers: { full_name: 'Asha', age: '12' } });
  await until(
    () => session(form.id, native.id),
    (s) => s.current_question === 'age',
    'age asked again',
  );
  await until(
    () => prompts(customer(1)),
    (n) => n >= 2,
    'the re-ask',
  );
  await say(customer(1), '30');
  await save(TYPE, 'native-reasked-submitted', handle(native.id));

  const giveUp = await send(form.id, customer(2), 'questions');
  await until(
    () => session(form.id, giveUp.id),
    (s) => s.current_question === 'full_name',
    'the first question',
  );
  await say(customer(2), 'Juma');
  await until(
    () => session(form.id, giveUp.id),
    (s) => s.current_question === 'age',
    'age',
  );
  for (const [n, text] of ['old', '7', 'x'].entries()) {
    await say(customer(2), text);
    await until(
      () => prompts(customer(2)),
      (k) => k >= 3 + n || n === 2,
      `wrong answer ${n + 1} read`,
    );
  }
  await save(TYPE, 'questions-invalid-answers', handle(giveUp.id));

  const cancelled = await send(form.id, customer(3), 'questions');
  await until(
    () => session(form.id, cancelled.id),
    (s) => s.current_question === 'full_name',
    'the first question',
  );
  await api('POST', `/api/v3/forms/${form.id}/sessions/${cancelled.id}/cancel`, {});
  await save(TYPE, 'cancelled', handle(cancelled.id));

  await expired;
});
