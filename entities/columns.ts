import { p } from '@mikro-orm/core';

// Columns most tables share, written once so every table keeps them alike.

/** `created_at`, set when the row is first written. */
export const createdAt = () => p.datetime().onCreate(() => new Date());

/** `created_at` and `updated_at`, the latter moved on every write through the ORM. */
export const timestamps = () => ({
  createdAt: createdAt(),
  updatedAt: p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date()),
});
