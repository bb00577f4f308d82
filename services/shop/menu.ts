import type { EntityManager } from '@mikro-orm/postgresql';
import { slugify, withSuffix } from '../../domain/shop/cart.js';
import {
  categoryOf,
  hasCategoryWithoutSlug,
  lockCategories,
  menuProducts,
  productOptions,
  setCategorySlug,
  shopCategories,
  type CategoryRow,
  type MenuProductRow,
} from '../catalogues/index.js';
import { orderable } from './carts.js';

// What a shop offers on its page and to links: categories (addressed by id or slug) and their
// products with sizes and add-ons.

export type { CategoryRow };

/**
 * Gives every category of the shop without a slug one made from its name (unique per shop: a taken
 * slug gets -2, -3…). Slugs are made on first use: the first link or page of the shop that needs
 * them. The rows are locked, so two first uses agree on one slug.
 */
export async function ensureCategorySlugs(em: EntityManager, catalogueId: number): Promise<void> {
  if (!(await hasCategoryWithoutSlug(em, catalogueId))) return;
  await em.transactional(async (tx) => {
    const rows = await lockCategories(tx, catalogueId);
    const taken = new Set(rows.flatMap((r) => (r.slug ? [r.slug] : [])));
    for (const r of rows) {
      if (r.slug) continue;
      const base = slugify(r.name);
      let n = 1;
      while (taken.has(withSuffix(base, n))) n++;
      const slug = withSuffix(base, n);
      taken.add(slug);
      await setCategorySlug(tx, r.id, slug);
    }
  });
}

/** A category of the shop by its id (digits) or slug (any case). */
export async function categoryByIdOrSlug(em: EntityManager, catalogueId: number, ref: string): Promise<CategoryRow | null> {
  await ensureCategorySlugs(em, catalogueId);
  if (/^\d{1,10}$/.test(ref)) {
    const byId = await categoryOf(em, catalogueId, { id: Number(ref) });
    if (byId) return byId;
  }
  return categoryOf(em, catalogueId, { slug: ref.trim().toLowerCase() });
}

export interface MenuOption {
  id: number;
  name: string;
  price: number;
}
export interface MenuProduct extends MenuProductRow {
  variants: MenuOption[];
  addons: MenuOption[];
  orderable: boolean;
}

/** The shop's menu: its categories (those with products) and its published, live products with their options. */
export async function loadMenu(em: EntityManager, catalogueId: number): Promise<{ categories: CategoryRow[]; products: MenuProduct[] }> {
  await ensureCategorySlugs(em, catalogueId);
  const rows = await menuProducts(em, catalogueId);
  const { variants, addons } = await productOptions(
    em,
    rows.map((p) => Number(p.id)),
  );
  const of = (options: typeof variants, pid: number) =>
    options.filter((r) => Number(r.product_id) === pid).map((r) => ({ id: Number(r.id), name: r.name, price: Number(r.price) }));
  const products: MenuProduct[] = rows.map((p) => ({
    ...p,
    variants: of(variants, Number(p.id)),
    addons: of(addons, Number(p.id)),
    orderable: orderable(p),
  }));
  const used = new Set(products.map((p) => p.category_id).filter((c) => c !== null));
  const categories = (await shopCategories(em, catalogueId)).filter((c) => used.has(c.id));
  return { categories, products };
}
