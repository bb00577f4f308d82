// Product messages into a chat (contract: "Send-product rules", Limits "Product send"): the Cloud API
// interactive objects of the three kinds, built from the provider catalogue id and retailer ids
// (never local ids). Pure: the service has already resolved the shop and checked the products.

/** Limits "Product send", plus the provider's product-list ceiling of 30 products in all. */
export const PRODUCT_SEND_LIMITS = {
  body: 1024,
  footer: 60,
  headerText: 60,
  sectionsMin: 1,
  sectionsMax: 10,
  sectionTitle: 24,
  productsInList: 30,
  retailerId: 100,
} as const;

export interface ProductListSection {
  title: string;
  retailerIds: string[];
}

/** Blank text counts as not given: the provider refuses an empty body or footer object. */
const textOf = (t: string | null | undefined) => (t !== undefined && t !== null && t.trim() !== '' ? { text: t } : null);

export function singleProductInteractive(o: {
  catalogueId: string;
  retailerId: string;
  body?: string | null;
  footer?: string | null;
}): Record<string, unknown> {
  const body = textOf(o.body);
  const footer = textOf(o.footer);
  return {
    type: 'product',
    ...(body ? { body } : {}),
    ...(footer ? { footer } : {}),
    action: { catalog_id: o.catalogueId, product_retailer_id: o.retailerId },
  };
}

export function productListInteractive(o: {
  catalogueId: string;
  headerText: string;
  body: string;
  footer?: string | null;
  sections: ProductListSection[];
}): Record<string, unknown> {
  const footer = textOf(o.footer);
  return {
    type: 'product_list',
    header: { type: 'text', text: o.headerText },
    body: { text: o.body },
    ...(footer ? { footer } : {}),
    action: {
      catalog_id: o.catalogueId,
      sections: o.sections.map((s) => ({ title: s.title, product_items: s.retailerIds.map((id) => ({ product_retailer_id: id })) })),
    },
  };
}

/** The whole catalogue: the provider shows the catalogue connected to the sending number, so no id is sent. */
export function catalogueInteractive(o: {
  body: string;
  footer?: string | null;
  thumbnailRetailerId?: string | null;
}): Record<string, unknown> {
  const footer = textOf(o.footer);
  return {
    type: 'catalog_message',
    body: { text: o.body },
    ...(footer ? { footer } : {}),
    action: {
      name: 'catalog_message',
      ...(o.thumbnailRetailerId ? { parameters: { thumbnail_product_retailer_id: o.thumbnailRetailerId } } : {}),
    },
  };
}
