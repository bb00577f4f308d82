// A payment's human reference (Resources > Payment: "PAY-<digits>-<digits>"; the UUID is the
// stable key). Ours is PAY-<yyyymmdd>-<8 digits>: the UTC day it was requested and eight random
// digits, unique per account (the insert retries on the rare collision). Random rather than a
// sequence so a reference says nothing about how many payments an account takes, and needs no
// counter row every payment of an account would queue on.

const SHAPE = /^PAY-(\d{1,16})-(\d{1,16})$/;

/** A new reference for a payment requested at `at`; `serial` (0 to 99,999,999) gives the eight digits, drawn at random by the caller. */
export function newReference(at: Date, serial: number): string {
  const day = at.toISOString().slice(0, 10).replaceAll('-', '');
  return `PAY-${day}-${String(Math.trunc(Math.abs(serial)) % 100_000_000).padStart(8, '0')}`;
}

/**
 * A reference as a path names it: trimmed and upper-cased (`pay-20261127-00000042` reads as
 * `PAY-20261127-00000042`); null when it has not the contract's shape, so it names nothing.
 */
export function parseReference(text: string): string | null {
  const s = text.trim().toUpperCase();
  return SHAPE.test(s) ? s : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a path segment names: a payment's UUID, its reference, or nothing (a 404 however it is spelled). */
export function paymentKey(text: string): { id: string } | { reference: string } | null {
  const t = text.trim();
  if (UUID.test(t)) return { id: t.toLowerCase() };
  const reference = parseReference(t);
  return reference ? { reference } : null;
}
