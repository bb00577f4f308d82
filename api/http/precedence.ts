import type { RouteDef } from './registry.js';

// Routing order is computed, not written: the router tries routes in registration order, so where
// two paths can match the same URL (`/api/v3/catalogues/orders` and `/api/v3/catalogues/{catalogue}`)
// the one with a literal segment at the first place they differ must come first. Sorting every route
// by its segments' kinds (literal before parameter, position by position) gives that order for any
// set of paths, so a new family's routes need no hand-placed position in a list.

export const isParam = (segment: string) => segment.startsWith('{');

/** Whether `path` is a more specific reading of `other`: same shape, and a literal where `other` has a parameter. */
export function shadows(path: string, other: string): boolean {
  const a = path.split('/');
  const b = other.split('/');
  if (path === other || a.length !== b.length) return false;
  return a.every((s, i) => s === b[i] || isParam(b[i])) && a.some((s, i) => !isParam(s) && isParam(b[i]));
}

/** Literal segments before parameters, position by position; equal shapes keep their given order (a stable sort). */
export function comparePrecedence(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = Number(isParam(x[i])) - Number(isParam(y[i]));
    if (d !== 0) return d;
  }
  // Paths of different lengths never match the same URL; ordering them by length keeps the comparison
  // a total order (lexicographic), which a sort needs to give a meaningful result.
  return x.length - y.length;
}

/** The routes in the order the router must try them. */
export function byPrecedence<R extends Pick<RouteDef, 'path'>>(routes: readonly R[]): R[] {
  return [...routes].sort((a, b) => comparePrecedence(a.path, b.path));
}
