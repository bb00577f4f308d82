import { isCalendarDate, type FormDefinition, type Question } from './definition.js';

// Whether a customer's answer fits its question, and the value stored when it does. An answer that
// does not fit is never stored: the customer is told why and asked again (docs/forms.md). Answers
// arrive as chat text (question by question) or as the native form's fields, which WhatsApp sends
// as strings even for numbers (notes §2.5): both are read the same way.

export type AnswerCheck = { ok: true; value: string | number | null } | { ok: false; error: string };

/** How a phone answer becomes E.164 (libphonenumber lives in services; the account's country as region). */
export type PhoneReader = (raw: string) => string | null;

/** Words that skip an optional question asked in the chat. */
const SKIP = new Set(['skip', '-', 'ruka']);
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@.]{2,63}$/;

const fail = (q: Question, error: string): AnswerCheck => ({ ok: false, error: q.error_message ?? error });

function readDate(s: string): string | null {
  if (isCalendarDate(s)) return s;
  // 31/12/2026 and 31.12.2026: the day first, as East Africa writes it.
  const m = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(s);
  if (!m) return null;
  const iso = `${m[3]}-${m[2].padStart(2, '0')}-${m[1].padStart(2, '0')}`;
  return isCalendarDate(iso) ? iso : null;
}

/** Checks one answer; `raw` is what the customer sent (a string, or a value of the native form's answers). */
export function checkAnswer(q: Question, raw: unknown, phone: PhoneReader): AnswerCheck {
  const text = raw === null || raw === undefined ? '' : typeof raw === 'string' ? raw.trim() : typeof raw === 'number' ? String(raw) : null;
  if (text === null) return fail(q, 'That answer cannot be read.');
  if (text === '' || (!q.required && SKIP.has(text.toLowerCase()))) {
    return q.required ? fail(q, 'This question needs an answer.') : { ok: true, value: null };
  }
  switch (q.type) {
    case 'text': {
      const len = [...text].length;
      if (q.min_length !== undefined && len < q.min_length) return fail(q, `Please write at least ${q.min_length} characters.`);
      if (len > (q.max_length ?? 1000)) return fail(q, `Please write at most ${q.max_length ?? 1000} characters.`);
      if (q.pattern !== undefined && !new RegExp(`^(?:${q.pattern})$`, 'u').test(text))
        return fail(q, 'That answer is not in the expected form.');
      return { ok: true, value: text };
    }
    case 'number': {
      const cleaned = text.replace(/[\s,_]/g, '');
      const n = /^[-+]?(\d+(\.\d+)?|\.\d+)$/.test(cleaned) ? Number(cleaned) : NaN;
      if (!Number.isFinite(n)) return fail(q, 'Please answer with a number.');
      if (q.integer && !Number.isInteger(n)) return fail(q, 'Please answer with a whole number.');
      if (typeof q.min === 'number' && n < q.min) return fail(q, `Please answer with a number of at least ${q.min}.`);
      if (typeof q.max === 'number' && n > q.max) return fail(q, `Please answer with a number of at most ${q.max}.`);
      return { ok: true, value: n };
    }
    case 'choice': {
      const options = q.options ?? [];
      const lower = text.toLowerCase();
      const byIndex = /^\d{1,2}$/.test(text) ? options[Number(text) - 1] : undefined;
      const hit = options.find((o) => o.id === text) ?? options.find((o) => o.title.toLowerCase() === lower) ?? byIndex;
      if (!hit) return fail(q, `Please choose one of: ${options.map((o, i) => `${i + 1}. ${o.title}`).join(', ')}.`);
      return { ok: true, value: hit.id };
    }
    case 'date': {
      const d = readDate(text);
      if (!d) return fail(q, 'Please answer with a date, for example 2026-12-31 or 31/12/2026.');
      if (typeof q.min === 'string' && d < q.min) return fail(q, `Please give a date on or after ${q.min}.`);
      if (typeof q.max === 'string' && d > q.max) return fail(q, `Please give a date on or before ${q.max}.`);
      return { ok: true, value: d };
    }
    case 'phone': {
      const e164 = phone(text);
      return e164 ? { ok: true, value: e164 } : fail(q, 'Please answer with a phone number, with its country code.');
    }
    case 'email': {
      if (!EMAIL.test(text)) return fail(q, 'Please answer with an e-mail address.');
      const at = text.lastIndexOf('@');
      return { ok: true, value: `${text.slice(0, at)}@${text.slice(at + 1).toLowerCase()}` };
    }
  }
}

/** The questions still to answer, in the form's order: those with no accepted answer yet. */
export function unanswered(def: FormDefinition, answers: Record<string, unknown>): Question[] {
  return def.questions.filter((q) => !(q.key in answers));
}

/** The chat text that asks one question (question by question); a choice's options are numbered. */
export function questionText(def: FormDefinition, q: Question, index: number, problem: string | null): string {
  const head = problem ? `${problem}\n\n` : '';
  const optional = q.required ? '' : ' (optional: reply "skip" to leave it)';
  const options = q.type === 'choice' ? `\n${(q.options ?? []).map((o, i) => `${i + 1}. ${o.title}`).join('\n')}` : '';
  return `${head}${index + 1}/${def.questions.length}. ${q.label}${optional}${options}`;
}
