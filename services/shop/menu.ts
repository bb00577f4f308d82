import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../entities/db.js';
import { slugify, withSuffix } from '../../domain/shop/cart.js';
import { orderable, type ProductForLine } from './carts.js';

// What a shop offers on its page and to links: categories (addressed by id or slug) and their
// products with sizes and add-ons.

export interface CategoryRow {
  id: number;
  name: string;
  slug: string | null;
}

/**
 * Gives every category of the shop without a slug one made from its name (unique per shop: a taken
 * slug gets -2, -3…). Slugs are made on first use: the first link or page of the shop that needs
 * them. The rows are locked, so two first uses agree on one slug.
 */
export async function ensureCategorySlugs(em: EntityManager, catalogueId: number): Promise<void> {
  const missing = await one(em, 'select 1 from product_categories where catalogue_id = ? and slug is null limit 1', [catalogueId]);
  if (!missing) return;
  await em.transactional(async (tx) => {
    const rows = await many<CategoryRow>(
      tx,
      'select id, name, slug from product_categories where catalogue_id = ? order by id for update',
      [catalogueId],
    );
    const taken = new Set(rows.flatMap((r) => (r.slug ? [r.slug] : [])));
    for (const r of rows) {
      if (r.slug) continue;
      const base = slugify(r.name);
      let n = 1;
      while (taken.has(withSuffix(base, n))) n++;
      const slug = withSuffix(base, n);
      taken.add(slug);
      await exec(tx, 'update product_categories set slug = ? where id = ? and slug is null', [slug, r.id]);
    }
  });
}

/** A category of the shop by its id (digits) or slug (any case). */
export async function categoryByIdOrSlug(em: EntityManager, catalogueId: number, ref: string): Promise<CategoryRow | null> {
  await ensureCategorySlugs(em, catalogueId);
  if (/^\d{1,10}$/.test(ref)) {
    const byId = await one<CategoryRow>(em, 'select id, name, slug from product_categories where catalogue_id = ? and id = ?', [
      catalogueId,
      Number(ref),
    ]);
    if (byId) return byId;
  }
  return one<CategoryRow>(em, 'select id, name, slug from product_categories where catalogue_id = ? and slug = ?', [
    catalogueId,
    ref.trim().toLowerCase(),
  ]);
}

export interface MenuOption {
  id: number;
  name: string;
  price: number;
}
export interface MenuProduct extends ProductForLine {
  description: string | null;
  image_url: string | null;
  category_id: number | null;
  variants: MenuOption[];
  addons: MenuOption[];
  orderable: boolean;
}

/** The shop's menu: its categories (those with products) and its published, live products with their options. */
export async function loadMenu(em: EntityManager, catalogueId: number): Promise<{ categories: CategoryRow[]; products: MenuProduct[] }> {
  await ensureCategorySlugs(em, catalogueId);
  const products = await many<MenuProduct>(
    em,
    `select id, sku, name, description, image_url, price, sale_price, currency, availability, visibility, retired_at, category_id
       from products where catalogue_id = ? and retired_at is null and visibility = 'published' and availability <> 'discontinued'
      order by name, id limit 1000`,
    [catalogueId],
  );
  const ids = products.map((p) => Number(p.id));
  const options = async (table: 'product_variants' | 'product_addons') =>
    ids.length
      ? many<{ id: string; product_id: string; name: string; price: string }>(
          em,
          `select id, product_id, name, price from ${table} where product_id = any(?::bigint[]) order by position, id`,
          [ids],
        )
      : [];
  const variants = await options('product_variants');
  const addons = await options('product_addons');
  const of = (rows: typeof variants, pid: number) =>
    rows.filter((r) => Number(r.product_id) === pid).map((r) => ({ id: Number(r.id), name: r.name, price: Number(r.price) }));
  for (const p of products) {
    p.variants = of(variants, Number(p.id));
    p.addons = of(addons, Number(p.id));
    p.orderable = orderable(p);
  }
  const used = new Set(products.map((p) => p.category_id).filter((c) => c !== null));
  const categories = (
    await many<CategoryRow>(em, 'select id, name, slug from product_categories where catalogue_id = ? order by name, id', [catalogueId])
  ).filter((c) => used.has(c.id));
  return { categories, products };
}
