import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { CountryCode } from 'libphonenumber-js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import {
  checkAnswer,
  flowMessage,
  nativeAnswers,
  pickedId,
  questionText,
  unanswered,
  type FormDefinition,
  type Question,
} from '../../domain/forms/index.js';
import type { RequestContext } from '../platform/context.js';
import { toE164 } from '../platform/phones.js';
import { iso } from '../platform/time.js';
import { accountCountry, accountForContext } from '../account/index.js';
import { sendChatInteractive, sendChatText, type CustomerReply } from '../messaging/index.js';
import { emitEvent } from '../webhooks/index.js';
import { signalWorkflow } from '../../temporal/starters.js';
import { formSessionStarter, formSessionWorkflowId } from '../../workflows/forms/form-session.starter.js';
import type { FormReply, FormPrompt, ReplyOutcome } from '../../workflows/forms/form-session.js';
import { activeSessionOfCustomer, addPrompt, sessionContext, sessionOf, updateActiveSession } from './store.js';

// The steps of a form session (docs/forms.md), run by its workflow's activities: send a prompt (the
// native form, a question, the reminder, the thanks), read a reply (validate, store what fits,
// submit when every answer is in), expire. Each is safe to repeat: a prompt already noted as sent
// is not sent again, a reply already read is ignored, and a session that ended changes no more.
// The customer's replies reach the session's workflow through the chat ingress (receiveFormReply).

export interface SessionStepDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
  temporal: Client;
}

type Ctx = NonNullable<Awaited<ReturnType<typeof sessionContext>>>;

const promptKey = (p: FormPrompt) => (p.kind === 'question' ? `ask:${p.key}:${p.attempt}` : p.kind);

function questionMessage(def: FormDefinition, q: Question, problem: string | null, reminder: boolean) {
  const index = def.questions.indexOf(q);
  const text = `${reminder ? 'Reminder: ' : ''}${questionText(def, q, index, problem)}`.slice(0, 4096);
  if (q.type !== 'choice') return { text };
  // A choice is a list (up to 10 rows, titles up to 24): the customer taps instead of typing.
  const interactive = {
    type: 'list',
    body: { text },
    action: { button: 'Choose', sections: [{ rows: (q.options ?? []).map((o) => ({ id: o.id, title: o.title })) }] },
  };
  return { text, interactive };
}

async function systemContext(deps: SessionStepDeps, ctx: Ctx, em: RequestContext['em']): Promise<RequestContext | null> {
  const account = await accountForContext(em, ctx.account_id);
  if (!account) return null;
  return { account, actor: { kind: 'system', process: `form-session:${ctx.uid}` }, em, log: deps.log };
}

/**
 * Sends one prompt of the session, once: `open` (the native form, or the first question), a question
 * (re-asked with why the last answer did not fit), the one reminder, the thanks. Answers what the
 * session now waits on; nothing is sent for a session that ended (the thanks: once it submitted).
 */
export async function sendFormPrompt(deps: SessionStepDeps, input: { accountId: number; sessionUid: string; prompt: FormPrompt }) {
  const em = deps.orm.em.fork();
  const ctx = await sessionContext(em, input.accountId, input.sessionUid);
  const p = input.prompt;
  if (!ctx || ctx.status !== (p.kind === 'thanks' ? 'submitted' : 'active')) return { sent: false };
  const key = promptKey(p);
  if (ctx.prompts.includes(key)) return { sent: false };
  const def = ctx.definition;
  const rc = await systemContext(deps, ctx, em);
  if (!rc) return { sent: false };
  const send = { to: ctx.recipient, senderId: ctx.sender_id, metadata: { form_session: ctx.uid, form_prompt: key }, answered: false };
  const messageDeps = { temporal: deps.temporal, config: deps.config };
  const waitingOn = p.kind === 'open' && ctx.mode === 'questions' ? (unanswered(def, ctx.answers)[0]?.key ?? null) : ctx.current_question;
  if (p.kind === 'thanks') {
    if (def.thank_you === null) return { sent: false };
    await sendChatText(rc, messageDeps, { ...send, body: def.thank_you });
  } else if (waitingOn === null) {
    // The native form: opened, or opened again as the reminder.
    const interactive = flowMessage(def, ctx.form_uid, ctx.version, ctx.uid, p.kind === 'remind');
    await sendChatInteractive(rc, messageDeps, { ...send, interactive, previewBody: `${def.title}: ${def.intro}` });
  } else {
    const q = def.questions.find((x) => x.key === (p.kind === 'question' ? p.key : waitingOn))!;
    const m = questionMessage(def, q, p.kind === 'question' ? p.problem : null, p.kind === 'remind');
    if (m.interactive) await sendChatInteractive(rc, messageDeps, { ...send, interactive: m.interactive, previewBody: m.text });
    else await sendChatText(rc, messageDeps, { ...send, body: m.text });
  }
  // Noted after the send: a crash between the two is the one way a prompt goes out twice (docs/forms.md).
  await em.transactional(async (tx) => {
    await addPrompt(tx, ctx.id, key);
    if (p.kind === 'open' && waitingOn !== null) await updateActiveSession(tx, ctx.id, { current_question: waitingOn });
    if (p.kind === 'remind') await updateActiveSession(tx, ctx.id, { reminded: true });
  });
  return { sent: true };
}

const eventFields = (ctx: Ctx, answers: Record<string, unknown>) => ({
  form_id: ctx.form_uid,
  session_id: ctx.uid,
  version: ctx.version,
  recipient: ctx.recipient,
  conversation_id: ctx.conversation_id,
  answers,
});

/**
 * Reads one customer reply: the native form's fields (each checked; those that fit are kept and the
 * first that does not is asked again in the chat), or the chat answer to the question waited on.
 * Every answer in: submitted, with form.submitted in the same transaction. Too many answers that
 * did not fit one question: expired (invalid_answers), with form.expired.
 */
export async function takeFormReply(
  deps: SessionStepDeps,
  input: { accountId: number; sessionUid: string; reply: FormReply },
): Promise<ReplyOutcome> {
  const em = deps.orm.em.fork();
  const region = ((await accountCountry(em, input.accountId)) ?? undefined) as CountryCode | undefined;
  const phone = (raw: string) => toE164(raw, region);
  return em.transactional(async (tx): Promise<ReplyOutcome> => {
    const ctx = await sessionContext(tx, input.accountId, input.sessionUid, true);
    if (!ctx || ctx.status !== 'active') return { outcome: 'ended' };
    if (ctx.replies_seen.includes(input.reply.uid)) return { outcome: 'ignored' };
    const seen = [...ctx.replies_seen, input.reply.uid].slice(-100);
    const def = ctx.definition;
    const answers: Record<string, unknown> = { ...ctx.answers };
    const problems = new Map<string, string>();
    let attempts = ctx.invalid_attempts;
    const { fields, text } = input.reply;
    if (fields) {
      for (const q of unanswered(def, answers)) {
        if (!(q.key in fields) && !q.required) {
          answers[q.key] = null;
          continue;
        }
        const r = checkAnswer(q, fields[q.key], phone);
        if (r.ok) answers[q.key] = r.value;
        else problems.set(q.key, r.error);
      }
      attempts = problems.size ? 1 : 0;
    } else if (ctx.current_question !== null) {
      const q = def.questions.find((x) => x.key === ctx.current_question)!;
      const r = checkAnswer(q, text, phone);
      if (r.ok) {
        answers[q.key] = r.value;
        attempts = 0;
      } else {
        problems.set(q.key, r.error);
        attempts += 1;
      }
    } else {
      // A chat message while the native form is open: the form stays open, the message is only seen.
      await updateActiveSession(tx, ctx.id, { replies_seen: seen });
      return { outcome: 'ignored' };
    }
    const left = unanswered(def, answers);
    if (left.length === 0) {
      await updateActiveSession(tx, ctx.id, {
        answers,
        current_question: null,
        invalid_attempts: 0,
        replies_seen: seen,
        status: 'submitted',
        submitted: true,
        ended: true,
      });
      await emitEvent(tx, ctx.account_id, 'form.submitted', { ...eventFields(ctx, answers), submitted_at: new Date().toISOString() });
      return { outcome: 'submitted', thanks: def.thank_you !== null };
    }
    if (attempts >= def.max_attempts) {
      await updateActiveSession(tx, ctx.id, {
        answers,
        current_question: null,
        replies_seen: seen,
        status: 'expired',
        end_reason: 'invalid_answers',
        ended: true,
      });
      await emitEvent(tx, ctx.account_id, 'form.expired', { ...eventFields(ctx, answers), reason: 'invalid_answers' });
      return { outcome: 'expired' };
    }
    const next = left[0];
    await updateActiveSession(tx, ctx.id, { answers, current_question: next.key, invalid_attempts: attempts, replies_seen: seen });
    return { outcome: 'ask', key: next.key, problem: problems.get(next.key) ?? null, attempt: problems.has(next.key) ? attempts : 0 };
  });
}

/** Ends a session nobody answered in time (reason no_reply), with form.expired; a session that ended already stays as it is. */
export async function expireFormSession(deps: SessionStepDeps, input: { accountId: number; sessionUid: string; reason: string }) {
  const em = deps.orm.em.fork();
  return em.transactional(async (tx) => {
    const ctx = await sessionContext(tx, input.accountId, input.sessionUid, true);
    if (!ctx || ctx.status !== 'active') return { expired: false, status: ctx?.status ?? null };
    await updateActiveSession(tx, ctx.id, { status: 'expired', end_reason: input.reason, current_question: null, ended: true });
    await emitEvent(tx, ctx.account_id, 'form.expired', {
      ...eventFields(ctx, ctx.answers),
      reason: input.reason,
      expired_at: iso(new Date()),
    });
    return { expired: true, status: 'expired' };
  });
}

/**
 * The chat ingress's reply hook: a native form's answer finds its session by the flow_token (the
 * session's uid) within the account the message came to, and only when the customer is the
 * session's own; a chat message goes to the customer's newest session of that account waiting on a
 * question. Another account's session is never looked at. A workflow that cannot be told is left to
 * its own timer (the reminder re-asks), as the hook's contract says.
 */
export async function receiveFormReply(deps: { orm: MikroORM; temporal: Client; log?: Logger }, reply: CustomerReply): Promise<void> {
  if (reply.channelType !== 'whatsapp') return;
  const em = deps.orm.em.fork();
  const interactive = reply.metadata.interactive;
  const native = nativeAnswers(interactive);
  const session = native
    ? await sessionOf(em, reply.accountId, native.flowToken)
    : await activeSessionOfCustomer(em, reply.accountId, reply.customer);
  if (!session || session.status !== 'active' || session.recipient !== reply.customer) return;
  const signal: FormReply = { uid: reply.uid, text: pickedId(interactive) ?? reply.body, fields: native ? native.fields : null };
  try {
    await signalWorkflow(deps.temporal, formSessionStarter, formSessionWorkflowId(reply.accountId, session.uid), 'reply', signal);
  } catch (err) {
    deps.log?.warn({ err, session: session.uid }, 'form session workflow not told of a reply; its timer re-asks');
  }
}
