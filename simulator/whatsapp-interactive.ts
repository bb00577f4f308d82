// Interactive message limits (notes §1.4). These are the limits our contract also promises to
// customers, so a mismatch here shows up as a test failure rather than a production rejection.
import { arr, badParam, httpUrl, invalid, isObj, missing, obj, str, validateMedia } from './graph-errors.js';

const KINDS = ['button', 'list', 'cta_url', 'flow', 'location_request_message', 'product', 'product_list', 'catalog_message'];
const HEADERLESS = ['product', 'catalog_message'];
/** Meta's product list: at most 30 products over at most 10 sections (notes §3.3). */
const PRODUCT_LIST_MAX = 30;

export function validateInteractive(i: Record<string, unknown>): void {
  const kind = str(i, 'type', 'interactive.type', 64) as string;
  if (!KINDS.includes(kind)) throw badParam(`Param interactive.type must be one of ${KINDS.join(', ')} - got "${kind}".`);

  // List and product messages only take a text header; product_list requires one. A single-product
  // or catalogue message shows the product's own image, so Meta refuses any header on them.
  if (HEADERLESS.includes(kind) && i.header !== undefined && i.header !== null) {
    throw badParam(`Param interactive.header is not allowed for interactive type '${kind}'.`);
  }
  const header = obj(i, 'header', 'interactive.header', kind === 'product_list');
  if (header) validateHeader(header, ['list', 'product_list'].includes(kind));

  const body = obj(i, 'body', 'interactive.body', kind !== 'product');
  if (body) str(body, 'text', 'interactive.body.text', kind === 'list' ? 4096 : 1024);
  const footer = obj(i, 'footer', 'interactive.footer', false);
  if (footer) str(footer, 'text', 'interactive.footer.text', 60);

  const action = obj(i, 'action', 'interactive.action') as Record<string, unknown>;
  switch (kind) {
    case 'button':
      return buttons(action);
    case 'list':
      return list(action);
    case 'cta_url': {
      expectName(action, 'cta_url');
      const p = obj(action, 'parameters', 'interactive.action.parameters') as Record<string, unknown>;
      str(p, 'display_text', 'interactive.action.parameters.display_text', 20);
      httpUrl(p, 'url', 'interactive.action.parameters.url');
      return;
    }
    case 'flow': {
      expectName(action, 'flow');
      const p = obj(action, 'parameters', 'interactive.action.parameters') as Record<string, unknown>;
      str(p, 'flow_message_version', 'interactive.action.parameters.flow_message_version', 8);
      if (p.flow_id === undefined && p.flow_name === undefined) throw missing('interactive.action.parameters.flow_id');
      str(p, 'flow_cta', 'interactive.action.parameters.flow_cta', 30);
      if (p.flow_action !== undefined && !['navigate', 'data_exchange'].includes(String(p.flow_action))) {
        throw invalid("Param interactive.action.parameters.flow_action must be 'navigate' or 'data_exchange'.");
      }
      return;
    }
    case 'location_request_message':
      return expectName(action, 'send_location');
    case 'catalog_message': {
      expectName(action, 'catalog_message');
      const p = obj(action, 'parameters', 'interactive.action.parameters', false);
      if (p)
        str(p, 'thumbnail_product_retailer_id', 'interactive.action.parameters.thumbnail_product_retailer_id', 100, { required: false });
      return;
    }
    case 'product':
      str(action, 'catalog_id', 'interactive.action.catalog_id', 64);
      str(action, 'product_retailer_id', 'interactive.action.product_retailer_id', 100);
      return;
    case 'product_list':
      return productList(action);
  }
}

function validateHeader(header: Record<string, unknown>, textOnly: boolean): void {
  const type = str(header, 'type', 'interactive.header.type', 16) as string;
  if (type === 'text') {
    str(header, 'text', 'interactive.header.text', 60);
    return;
  }
  if (textOnly || !['image', 'video', 'document'].includes(type)) {
    throw badParam(`Param interactive.header.type '${type}' is not allowed for this message.`);
  }
  validateMedia(obj(header, type, `interactive.header.${type}`) as Record<string, unknown>, `interactive.header.${type}`, false);
}

function expectName(action: Record<string, unknown>, name: string): void {
  if (action.name === undefined) throw missing('interactive.action.name');
  if (action.name !== name) throw badParam(`Param interactive.action.name must be '${name}'.`);
}

function buttons(action: Record<string, unknown>): void {
  const list = arr(action, 'buttons', 'interactive.action.buttons', 1, 3);
  const titles = new Set<string>();
  const ids = new Set<string>();
  list.forEach((b, n) => {
    const path = `interactive.action.buttons[${n}]`;
    if (!isObj(b)) throw badParam(`Param ${path} must be a JSON object.`);
    if (b.type !== 'reply') throw badParam(`Param ${path}.type must be 'reply'.`);
    const reply = obj(b, 'reply', `${path}.reply`) as Record<string, unknown>;
    const id = str(reply, 'id', `${path}.reply.id`, 256) as string;
    const title = str(reply, 'title', `${path}.reply.title`, 20) as string;
    if (titles.has(title)) throw invalid(`Button titles must be unique; '${title}' is repeated.`);
    if (ids.has(id)) throw invalid(`Button ids must be unique; '${id}' is repeated.`);
    titles.add(title);
    ids.add(id);
  });
}

function list(action: Record<string, unknown>): void {
  str(action, 'button', 'interactive.action.button', 20);
  const sections = arr(action, 'sections', 'interactive.action.sections', 1, 10);
  const ids = new Set<string>();
  let rows = 0;
  sections.forEach((s, n) => {
    const path = `interactive.action.sections[${n}]`;
    if (!isObj(s)) throw badParam(`Param ${path} must be a JSON object.`);
    // A title is only mandatory once there is more than one section to tell apart.
    str(s, 'title', `${path}.title`, 24, { required: sections.length > 1 });
    const sectionRows = arr(s, 'rows', `${path}.rows`, 1, 10);
    rows += sectionRows.length;
    sectionRows.forEach((r, m) => {
      const rp = `${path}.rows[${m}]`;
      if (!isObj(r)) throw badParam(`Param ${rp} must be a JSON object.`);
      const id = str(r, 'id', `${rp}.id`, 200) as string;
      if (ids.has(id)) throw invalid(`Row ids must be unique; '${id}' is repeated.`);
      ids.add(id);
      str(r, 'title', `${rp}.title`, 24);
      str(r, 'description', `${rp}.description`, 72, { required: false });
    });
  });
  if (rows > 10) throw invalid(`A list message can have at most 10 rows in total, got ${rows}.`);
}

function productList(action: Record<string, unknown>): void {
  str(action, 'catalog_id', 'interactive.action.catalog_id', 64);
  const sections = arr(action, 'sections', 'interactive.action.sections', 1, 10);
  let products = 0;
  sections.forEach((s, n) => {
    const path = `interactive.action.sections[${n}]`;
    if (!isObj(s)) throw badParam(`Param ${path} must be a JSON object.`);
    str(s, 'title', `${path}.title`, 24);
    const items = arr(s, 'product_items', `${path}.product_items`, 1, PRODUCT_LIST_MAX);
    products += items.length;
    items.forEach((p, m) => {
      if (!isObj(p)) throw badParam(`Param ${path}.product_items[${m}] must be a JSON object.`);
      str(p, 'product_retailer_id', `${path}.product_items[${m}].product_retailer_id`, 100);
    });
  });
  if (products > PRODUCT_LIST_MAX) throw invalid(`A product list can have at most ${PRODUCT_LIST_MAX} products in total, got ${products}.`);
}
