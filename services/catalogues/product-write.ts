import type { EntityManager } from '@mikro-orm/postgresql';
import { dropRecordsIfUnused, recordNamed } from './store/products.js';
import { recordName } from '../../domain/catalogues/product-input.js';

// Pieces of a product write shared by the single-product paths and the batch/feed rows: brand and
// category records made on first use, and telling a unique-value race from a real failure.

export interface RecordIds {
  /** undefined: not sent (keep what the product has); null: cleared. */
  brandId: number | null | undefined;
  categoryId: number | null | undefined;
  /** Records this call made (a refused write removes them again when nothing else uses them). */
  created: { brandId?: number; categoryId?: number };
}

/**
 * The brand and category records of the shop named by this text, made on first use (unique by name
 * per shop, so concurrent first uses meet on one record). Text is trimmed; blank or null clears;
 * undefined leaves the product's own value alone.
 */
export async function brandAndCategoryIds(
  em: EntityManager,
  catalogueId: number,
  brand: string | null | undefined,
  category: string | null | undefined,
): Promise<RecordIds> {
  const created: RecordIds['created'] = {};
  const brandRec = await recordOf(em, 'product_brands', catalogueId, recordName(brand));
  const categoryRec = await recordOf(em, 'product_categories', catalogueId, recordName(category));
  if (brandRec?.created) created.brandId = brandRec.id;
  if (categoryRec?.created) created.categoryId = categoryRec.id;
  return {
    brandId: brandRec === undefined ? undefined : (brandRec?.id ?? null),
    categoryId: categoryRec === undefined ? undefined : (categoryRec?.id ?? null),
    created,
  };
}

async function recordOf(
  em: EntityManager,
  table: 'product_brands' | 'product_categories',
  catalogueId: number,
  name: string | null | undefined,
): Promise<{ id: number; created: boolean } | null | undefined> {
  if (name === undefined || name === null) return name;
  return recordNamed(em, table, catalogueId, name);
}

/** Removes records a refused write made, unless a product took them up meanwhile. */
export async function dropUnusedRecords(em: EntityManager, created: RecordIds['created']): Promise<void> {
  await dropRecordsIfUnused(em, created);
}

/** A unique constraint refused the statement (PostgreSQL 23505), however the driver wrapped it. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown; name?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e.code === '23505' || e.name === 'UniqueConstraintViolationException') return true;
  }
  return false;
}
