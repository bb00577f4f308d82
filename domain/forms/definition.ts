// A form's definition (docs/forms.md): typed questions with their rules, and the session's timers.
// The request schema (services/forms/schemas.ts) holds the shape of each field; what a schema cannot
// say (keys unique, a choice's options, bounds in order, a pattern that compiles) is checked here,
// so a malformed definition is refused with every field named and nothing is stored.

export const QUESTION_TYPES = ['text', 'number', 'choice', 'date', 'phone', 'email'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export const FORM_SESSION_MODES = ['native', 'questions'] as const;
export type FormSessionMode = (typeof FORM_SESSION_MODES)[number];

export const FORM_SESSION_STATUSES = ['active', 'submitted', 'expired', 'cancelled'] as const;
export type FormSessionStatus = (typeof FORM_SESSION_STATUSES)[number];

/** At most this many questions: one WhatsApp Flow screen takes 50 components (notes §2.3). */
export const MAX_QUESTIONS = 20;
/** A choice is asked as reply buttons (≤3) or a list (≤10 rows) where the form is asked question by question. */
export const MAX_OPTIONS = 10;

export type ChoiceOption = {
  id: string;
  title: string;
};

export type Question = {
  /** The answer's field name (snake_case), unique in the form. */
  key: string;
  type: QuestionType;
  label: string;
  required: boolean;
  /** choice: the options, ids unique. */
  options?: ChoiceOption[];
  /** number: bounds of the value; date: bounds as YYYY-MM-DD. */
  min?: number | string;
  max?: number | string;
  /** number: whole numbers only. */
  integer?: boolean;
  /** text: length bounds and a regular expression the whole answer must match. */
  min_length?: number;
  max_length?: number;
  pattern?: string;
  /** What the customer is told when an answer does not fit (else a message from the rule that failed). */
  error_message?: string;
};

export type FormDefinition = {
  name: string;
  /** The native form's title and the heading of the first question. */
  title: string;
  /** The message body that opens the form. */
  intro: string;
  /** The native form's button (WhatsApp's flow_cta: at most 20 characters). */
  submit_label: string;
  /** Sent when every answer is in; null sends nothing. */
  thank_you: string | null;
  /** Quiet minutes before the one reminder, and before the session expires (both from the last reply). */
  remind_after_minutes: number;
  expire_after_minutes: number;
  /** Answers to one question that may fail before the session ends (reason invalid_answers). */
  max_attempts: number;
  questions: Question[];
};

export const DEFINITION_DEFAULTS = {
  submit_label: 'Start',
  thank_you: null,
  remind_after_minutes: 60,
  // Typebot's WhatsApp sessions expire after 4 hours without an interaction (notes §2.6).
  expire_after_minutes: 240,
  max_attempts: 3,
} as const;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date written YYYY-MM-DD that exists (2026-02-30 does not). */
export function isCalendarDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Every problem of a definition the schema let through, by field path; empty when it is sound. */
export function definitionProblems(def: FormDefinition): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => void (errors[field] ??= []).push(message);
  if (def.questions.length === 0) add('questions', 'A form needs at least one question.');
  if (def.questions.length > MAX_QUESTIONS) add('questions', `A form has at most ${MAX_QUESTIONS} questions.`);
  if (def.remind_after_minutes >= def.expire_after_minutes)
    add('remind_after_minutes', 'The reminder must come before the session expires (remind_after_minutes < expire_after_minutes).');
  const keys = new Set<string>();
  def.questions.forEach((q, i) => {
    const at = `questions.${i}`;
    if (keys.has(q.key)) add(`${at}.key`, `The key ${q.key} is used by an earlier question.`);
    keys.add(q.key);
    const only = (field: keyof Question, types: QuestionType[]) => {
      if (q[field] !== undefined && !types.includes(q.type))
        add(`${at}.${field}`, `${field} applies to ${types.join(' and ')} questions only.`);
    };
    only('options', ['choice']);
    only('min', ['number', 'date']);
    only('max', ['number', 'date']);
    only('integer', ['number']);
    only('min_length', ['text']);
    only('max_length', ['text']);
    only('pattern', ['text']);
    if (q.type === 'choice') {
      const options = q.options ?? [];
      if (options.length === 0) add(`${at}.options`, 'A choice question needs at least one option.');
      if (options.length > MAX_OPTIONS) add(`${at}.options`, `A choice question has at most ${MAX_OPTIONS} options.`);
      const ids = new Set<string>();
      for (const o of options) {
        if (ids.has(o.id)) add(`${at}.options`, `The option id ${o.id} is used twice.`);
        ids.add(o.id);
      }
    }
    if (q.type === 'number') {
      for (const f of ['min', 'max'] as const)
        if (q[f] !== undefined && typeof q[f] !== 'number') add(`${at}.${f}`, `${f} of a number question must be a number.`);
      if (typeof q.min === 'number' && typeof q.max === 'number' && q.min > q.max) add(`${at}.min`, 'min must not be above max.');
    }
    if (q.type === 'date') {
      for (const f of ['min', 'max'] as const)
        if (q[f] !== undefined && (typeof q[f] !== 'string' || !isCalendarDate(q[f])))
          add(`${at}.${f}`, `${f} of a date question must be a date (YYYY-MM-DD).`);
      if (typeof q.min === 'string' && typeof q.max === 'string' && q.min > q.max) add(`${at}.min`, 'min must not be after max.');
    }
    if (q.type === 'text') {
      if (q.min_length !== undefined && q.max_length !== undefined && q.min_length > q.max_length)
        add(`${at}.min_length`, 'min_length must not be above max_length.');
      if (q.pattern !== undefined) {
        try {
          new RegExp(q.pattern, 'u');
        } catch {
          add(`${at}.pattern`, 'The pattern is not a valid regular expression.');
        }
      }
    }
  });
  return errors;
}
