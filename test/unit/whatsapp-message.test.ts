import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { prepareWhatsAppMessage, type PreparedWhatsAppMessage, type WhatsAppSendInput } from '../../domain/messaging/whatsapp-message.js';
import { buildCloudApiPayload } from '../../providers/whatsapp-cloud/payload.js';

const s = (n: number, ch = 'a') => ch.repeat(n);
const URL_IMG = 'https://cdn.example.com/a.jpg';
const WAMID = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA';

function ok(input: WhatsAppSendInput): PreparedWhatsAppMessage {
  const { errors, prepared } = prepareWhatsAppMessage(input);
  assert.deepEqual(errors, {});
  assert.ok(prepared);
  return prepared;
}

function fails(input: WhatsAppSendInput, key: string, pattern?: RegExp): Record<string, string[]> {
  const { errors, prepared } = prepareWhatsAppMessage(input);
  assert.equal(prepared, null);
  assert.ok(errors[key], `expected an error on ${key}, got ${JSON.stringify(errors)}`);
  if (pattern)
    assert.ok(
      errors[key].some((m) => pattern.test(m)),
      `${key}: ${JSON.stringify(errors[key])} !~ ${pattern}`,
    );
  return errors;
}

const button = (id: string, title: string) => ({ type: 'reply', reply: { id, title } });
const buttonMsg = (buttons: unknown[], bodyText: unknown = 'Pick one') => ({
  interactive: { type: 'button', body: { text: bodyText }, action: { buttons } },
});
const listMsg = (rows: unknown[], extra: Record<string, unknown> = {}) => ({
  interactive: { type: 'list', body: { text: 'Menu' }, action: { button: 'Open', sections: [{ title: 'S', rows }] }, ...extra },
});

describe('message_type resolution', () => {
  it('defaults to text', () => {
    assert.equal(ok({ message: 'hi' }).kind, 'text');
  });
  it('message_type wins over type', () => {
    const p = ok({ message_type: 'text', type: 'image', message: 'hi' });
    assert.equal(p.kind, 'text');
  });
  it('type is used when message_type is absent', () => {
    assert.equal(ok({ type: 'image', media_url: URL_IMG, media_type: 'image' }).kind, 'image');
  });
  it('accepts any case and surrounding spaces', () => {
    assert.equal(ok({ message_type: ' Text ', message: 'hi' }).kind, 'text');
  });
  it('refuses an unknown message_type on message_type', () => {
    fails({ message_type: 'carousel', message: 'hi' }, 'message_type', /invalid/);
  });
  it('refuses an unknown type on type', () => {
    fails({ type: 'carousel', message: 'hi' }, 'type', /invalid/);
  });
  it('an unknown type is ignored when message_type is valid', () => {
    assert.equal(ok({ message_type: 'text', type: 'carousel', message: 'hi' }).kind, 'text');
  });
  it('infers template, interactive, reaction and media in that order', () => {
    assert.equal(ok({ template: { name: 't' } }).kind, 'template');
    assert.equal(ok(buttonMsg([button('1', 'Yes')])).kind, 'interactive');
    assert.equal(ok({ reaction: { message_id: WAMID, emoji: '👍' } }).kind, 'reaction');
    for (const t of ['image', 'video', 'audio', 'document', 'sticker']) {
      assert.equal(ok({ media_url: URL_IMG, media_type: t }).kind, t);
    }
  });
  it('inferred media needs media_type, and one of the five kinds', () => {
    fails({ media_url: URL_IMG }, 'media_type', /required/);
    fails({ media_url: URL_IMG, media_type: 'image/jpeg' }, 'media_type', /invalid/);
    fails({ media_url: URL_IMG, media_type: 'gif' }, 'media_type', /invalid/);
  });
});

describe('text', () => {
  it('needs message or body', () => {
    fails({}, 'message', /required/);
    fails({ message: '   ' }, 'message', /required/);
    fails({ message_type: 'text' }, 'message', /required/);
  });
  it('message wins over body; body alone is enough; a blank message does not shadow body', () => {
    assert.equal(ok({ message: 'm', body: 'b' }).previewBody, 'm');
    assert.equal(ok({ body: 'b' }).previewBody, 'b');
    assert.equal(ok({ message: '', body: 'b' }).previewBody, 'b');
  });
  it('message and body are limited to 4096 characters', () => {
    assert.equal(ok({ message: s(4096) }).previewBody.length, 4096);
    fails({ message: s(4097) }, 'message', /4096/);
    ok({ body: s(4096) });
    fails({ body: s(4097) }, 'body', /4096/);
  });
  it('counts characters, not UTF-16 units', () => {
    ok({ message: s(4096, '😀') });
    fails({ message: s(4097, '😀') }, 'message', /4096/);
  });
  it('refuses a non-string message', () => {
    fails({ message: 42 as unknown as string }, 'message', /string/);
  });
  it('media_url, template, interactive or reaction cannot ride along an explicit text', () => {
    fails({ message_type: 'text', message: 'hi', media_url: URL_IMG }, 'media_url');
    fails({ message_type: 'text', message: 'hi', template: { name: 't' } }, 'template');
    fails({ message_type: 'text', message: 'hi', ...buttonMsg([button('1', 'Y')]) }, 'interactive');
    fails({ message_type: 'text', reaction: { message_id: WAMID, emoji: '👍' } }, 'reaction');
  });
  it('builds a text payload with preview_url false and a reply context', () => {
    const p = ok({ message: 'Hello', in_reply_to_gateway_id: WAMID });
    assert.deepEqual(p.metadata, { source: 'api', in_reply_to: WAMID });
    assert.deepEqual(buildCloudApiPayload(p, '+255 712 345 678', WAMID), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'text',
      text: { body: 'Hello', preview_url: false },
      context: { message_id: WAMID },
    });
  });
  it('omits context without a reply target', () => {
    const payload = buildCloudApiPayload(ok({ message: 'Hello' }), '255712345678', null);
    assert.equal('context' in payload, false);
  });
});

describe('in_reply_to_gateway_id', () => {
  it('refuses a local message uid', () => {
    fails({ message: 'hi', in_reply_to_gateway_id: 'msg_abcdefghijklmnopqrst' }, 'in_reply_to_gateway_id', /gateway_message_id/);
  });
  it('accepts a provider id up to 191 characters', () => {
    ok({ message: 'hi', in_reply_to_gateway_id: s(191) });
    fails({ message: 'hi', in_reply_to_gateway_id: s(192) }, 'in_reply_to_gateway_id', /191/);
  });
});

describe('template', () => {
  it('needs template.name', () => {
    fails({ message_type: 'template' }, 'template.name', /^The template\.name field is required\.$/);
    fails({ template: { language: 'en' } }, 'template.name', /required/);
    fails({ template: { name: '' } }, 'template.name', /required/);
  });
  it('refuses a non-object template', () => {
    fails({ message_type: 'template', template: 'hello' as never }, 'template', /object/);
  });
  it('name is limited to 191, language to 20, language defaults to en', () => {
    assert.deepEqual(ok({ template: { name: s(191) } }).templateParams, { name: s(191), language: 'en', components: [] });
    fails({ template: { name: s(192) } }, 'template.name', /191/);
    assert.equal(ok({ template: { name: 't', language: s(20) } }).templateParams?.language, s(20));
    fails({ template: { name: 't', language: s(21) } }, 'template.language', /20/);
  });
  it('forwards components as given', () => {
    const components = [
      { type: 'header', parameters: [{ type: 'image', image: { link: URL_IMG } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Jane' },
          { type: 'currency', currency: { fallback_value: '$10', code: 'USD', amount_1000: 10000 } },
        ],
      },
      { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'YES' }] },
    ];
    const p = ok({ template: { name: 'order_update', language: 'en_US', components } });
    assert.deepEqual(p.templateParams, { name: 'order_update', language: 'en_US', components });
  });
  it('checks the outline of components', () => {
    fails({ template: { name: 't', components: {} } }, 'template.components', /array/);
    fails({ template: { name: 't', components: ['x'] } }, 'template.components.0', /object/);
    fails({ template: { name: 't', components: [{ parameters: [] }] } }, 'template.components.0.type', /required/);
    fails({ template: { name: 't', components: [{ type: 'body' }] } }, 'template.components.0.parameters', /required/);
    fails(
      { template: { name: 't', components: [{ type: 'body', parameters: [{ text: 'x' }] }] } },
      'template.components.0.parameters.0.type',
      /required/,
    );
    fails(
      { template: { name: 't', components: [{ type: 'body', parameters: [{ type: 'text' }] }] } },
      'template.components.0.parameters.0.text',
      /required/,
    );
  });
  it('Rule 2: a message alongside a template is the local preview only', () => {
    const p = ok({ template: { name: 'promo', language: 'sw' }, message: 'Promo sent' });
    assert.equal(p.previewBody, 'Promo sent');
    const payload = buildCloudApiPayload(p, '255712345678', null);
    assert.equal(JSON.stringify(payload).includes('Promo sent'), false);
  });
  it('without a message the preview names the template', () => {
    assert.equal(ok({ template: { name: 'promo', language: 'sw' } }).previewBody, '[template: promo (sw)]');
  });
  it('Rule 1: a template cannot be combined with media_url or interactive', () => {
    fails({ template: { name: 't' }, media_url: URL_IMG, media_type: 'image' }, 'media_url', /template/);
    fails({ message_type: 'template', template: { name: 't' }, media_url: URL_IMG }, 'media_url', /template/);
    fails({ template: { name: 't' }, ...buttonMsg([button('1', 'Y')]) }, 'interactive', /template/);
  });
  it('builds a template payload with components and a language code', () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Jane' }] }];
    const p = ok({ template: { name: 'hello', language: 'en_US', components } });
    assert.deepEqual(buildCloudApiPayload(p, '255712345678', null), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'template',
      template: { name: 'hello', language: { code: 'en_US' }, components },
    });
  });
  it('leaves components out when there are none', () => {
    const payload = buildCloudApiPayload(ok({ template: { name: 'hello' } }), '255712345678', null);
    assert.deepEqual(payload.template, { name: 'hello', language: { code: 'en' } });
  });
});

describe('media', () => {
  it('an explicit media type needs media_url and media_type equal to it', () => {
    fails({ message_type: 'image', media_type: 'image' }, 'media_url', /required/);
    fails({ message_type: 'image', media_url: URL_IMG }, 'media_type', /required/);
    fails({ message_type: 'image', media_url: URL_IMG, media_type: 'video' }, 'media_type', /must be image/);
  });
  it('media_url must be an http(s) URL of at most 2048 characters', () => {
    const base = 'https://cdn.example.com/';
    ok({ media_url: base + s(2048 - base.length), media_type: 'image' });
    fails({ media_url: base + s(2049 - base.length), media_type: 'image' }, 'media_url', /2048/);
    fails({ media_url: 'ftp://cdn.example.com/a.jpg', media_type: 'image' }, 'media_url', /URL/);
    fails({ media_url: 'not a url', media_type: 'image' }, 'media_url', /URL/);
    fails({ media_url: 'https://', media_type: 'image' }, 'media_url', /URL/);
    ok({ media_url: 'http://cdn.example.com/a.jpg', media_type: 'image' });
  });
  it('message becomes the caption for image, video and document', () => {
    for (const t of ['image', 'video', 'document']) {
      const p = ok({ media_url: URL_IMG, media_type: t, message: 'Look' });
      assert.equal(p.caption, 'Look');
      assert.equal(p.previewBody, 'Look');
      assert.equal(p.mediaUrl, URL_IMG);
      assert.equal(p.mediaType, t);
    }
  });
  it('audio and sticker take no caption; the message is the local preview only', () => {
    for (const t of ['audio', 'sticker']) {
      const p = ok({ media_url: URL_IMG, media_type: t, message: 'Listen' });
      assert.equal(p.caption, null);
      assert.equal(p.previewBody, 'Listen');
    }
  });
  it('without a message the preview names the media kind', () => {
    assert.equal(ok({ media_url: URL_IMG, media_type: 'image' }).previewBody, '[image]');
  });
  it('builds an image payload with caption and reply context', () => {
    const p = ok({ message_type: 'image', media_url: URL_IMG, media_type: 'image', message: 'Look', in_reply_to_gateway_id: WAMID });
    assert.deepEqual(buildCloudApiPayload(p, '255712345678', WAMID), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'image',
      image: { link: URL_IMG, caption: 'Look' },
      context: { message_id: WAMID },
    });
  });
  it('builds an audio payload without caption', () => {
    const p = ok({ media_url: 'https://cdn.example.com/a.ogg', media_type: 'audio', message: 'Listen' });
    assert.deepEqual(buildCloudApiPayload(p, '255712345678', null), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'audio',
      audio: { link: 'https://cdn.example.com/a.ogg' },
    });
  });
  it('names a document after the last segment of its link', () => {
    const p = ok({ media_url: 'https://cdn.example.com/docs/Invoice%20May.pdf?sig=1', media_type: 'document' });
    assert.deepEqual(buildCloudApiPayload(p, '255712345678', null).document, {
      link: 'https://cdn.example.com/docs/Invoice%20May.pdf?sig=1',
      filename: 'Invoice May.pdf',
    });
  });
  it('Rule 1: interactive and top-level media cannot be combined', () => {
    fails({ ...buttonMsg([button('1', 'Y')]), media_url: URL_IMG, media_type: 'image' }, 'media_url', /interactive/);
    fails({ message_type: 'image', media_url: URL_IMG, media_type: 'image', ...buttonMsg([button('1', 'Y')]) }, 'media_url', /interactive/);
  });
});

describe('interactive', () => {
  it('needs an interactive object with a known type', () => {
    fails({ message_type: 'interactive' }, 'interactive', /required/);
    fails({ interactive: [] }, 'interactive', /object/);
    fails({ interactive: { body: { text: 'x' } } }, 'interactive.type', /required/);
    fails({ interactive: { type: 'carousel' } }, 'interactive.type', /invalid/);
  });
  it('passes the other known types through unvalidated', () => {
    for (const type of ['cta_url', 'flow', 'product', 'product_list', 'catalog_message', 'location_request_message']) {
      const interactive = { type, anything: { goes: true } };
      assert.deepEqual(ok({ interactive }).metadata, { source: 'api', interactive });
    }
  });
  describe('button', () => {
    it('allows 1 to 3 reply buttons', () => {
      ok(buttonMsg([button('1', 'A'), button('2', 'B'), button('3', 'C')]));
      fails(
        buttonMsg([button('1', 'A'), button('2', 'B'), button('3', 'C'), button('4', 'D')]),
        'interactive.action.buttons',
        /more than 3/,
      );
      fails(buttonMsg([]), 'interactive.action.buttons', /at least 1/);
      fails({ interactive: { type: 'button', body: { text: 'x' }, action: {} } }, 'interactive.action.buttons', /required/);
      fails({ interactive: { type: 'button', body: { text: 'x' } } }, 'interactive.action', /required/);
    });
    it('each button is a reply with id up to 200 and title up to 20', () => {
      ok(buttonMsg([button(s(200), s(20))]));
      fails(buttonMsg([button(s(201), 'A')]), 'interactive.action.buttons.0.reply.id', /200/);
      fails(buttonMsg([button('1', 'A'), button('2', s(21))]), 'interactive.action.buttons.1.reply.title', /20/);
      fails(buttonMsg([button('', 'A')]), 'interactive.action.buttons.0.reply.id', /required/);
      fails(buttonMsg([button('1', '')]), 'interactive.action.buttons.0.reply.title', /required/);
      fails(buttonMsg([{ type: 'url', reply: { id: '1', title: 'A' } }]), 'interactive.action.buttons.0.type', /reply/);
      fails(buttonMsg([{ type: 'reply' }]), 'interactive.action.buttons.0.reply', /required/);
    });
    it('body text is required and limited to 1024', () => {
      ok(buttonMsg([button('1', 'A')], s(1024)));
      fails(buttonMsg([button('1', 'A')], s(1025)), 'interactive.body.text', /1024/);
      fails(buttonMsg([button('1', 'A')], ''), 'interactive.body.text', /required/);
      fails({ interactive: { type: 'button', action: { buttons: [button('1', 'A')] } } }, 'interactive.body.text', /required/);
    });
    it('previews the body text, or the message when given', () => {
      assert.equal(ok(buttonMsg([button('1', 'A')], 'Pick')).previewBody, 'Pick');
      assert.equal(ok({ ...buttonMsg([button('1', 'A')], 'Pick'), message: 'Local' }).previewBody, 'Local');
    });
    it('builds an interactive payload carrying the object as given', () => {
      const input = buttonMsg([button('yes', 'Yes'), button('no', 'No')], 'Confirm?');
      const p = ok(input);
      assert.deepEqual(buildCloudApiPayload(p, '255712345678', null), {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '255712345678',
        type: 'interactive',
        interactive: input.interactive,
      });
    });
  });
  describe('list', () => {
    it('accepts a list with rows', () => {
      ok(listMsg([{ id: 'r1', title: s(24), description: s(72) }]));
    });
    it('row title up to 24, description up to 72', () => {
      fails(listMsg([{ id: 'r1', title: s(25) }]), 'interactive.action.sections.0.rows.0.title', /24/);
      fails(listMsg([{ id: 'r1', title: 'ok', description: s(73) }]), 'interactive.action.sections.0.rows.0.description', /72/);
      fails(listMsg([{ id: 'r1' }]), 'interactive.action.sections.0.rows.0.title', /required/);
    });
    it('needs action.button, sections and rows', () => {
      fails(
        { interactive: { type: 'list', body: { text: 'x' }, action: { sections: [{ rows: [{ id: '1', title: 'a' }] }] } } },
        'interactive.action.button',
        /required/,
      );
      fails({ interactive: { type: 'list', body: { text: 'x' }, action: { button: 'Open' } } }, 'interactive.action.sections', /required/);
      fails(
        { interactive: { type: 'list', body: { text: 'x' }, action: { button: 'Open', sections: [] } } },
        'interactive.action.sections',
        /non-empty/,
      );
      fails(listMsg([]), 'interactive.action.sections.0.rows', /non-empty/);
    });
    it('body limited to 1024', () => {
      ok(listMsg([{ id: '1', title: 'a' }], { body: { text: s(1024) } }));
      fails(listMsg([{ id: '1', title: 'a' }], { body: { text: s(1025) } }), 'interactive.body.text', /1024/);
    });
  });
});

describe('reaction', () => {
  it('needs an emoji of at most 16 characters', () => {
    fails({ reaction: { message_id: WAMID } }, 'reaction.emoji', /required/);
    fails({ reaction: { message_id: WAMID, emoji: '' } }, 'reaction.emoji', /required/);
    ok({ reaction: { message_id: WAMID, emoji: s(16, '👍') } });
    fails({ reaction: { message_id: WAMID, emoji: s(17, '👍') } }, 'reaction.emoji', /16/);
  });
  it('target message_id up to 191, and never a local uid', () => {
    ok({ reaction: { message_id: s(191), emoji: '👍' } });
    fails({ reaction: { message_id: s(192), emoji: '👍' } }, 'reaction.message_id', /191/);
    fails({ reaction: { message_id: 'msg_abcdefghijklmnopqrst', emoji: '👍' } }, 'reaction.message_id', /gateway_message_id/);
  });
  it('takes the target from in_reply_to_gateway_id when message_id is omitted', () => {
    const p = ok({ message_type: 'reaction', reaction: { emoji: '👍' }, in_reply_to_gateway_id: WAMID });
    assert.deepEqual(p.metadata, { source: 'api', reaction: { message_id: WAMID, emoji: '👍' } });
    assert.equal(p.previewBody, '[reaction: 👍]');
  });
  it('reaction.message_id wins over in_reply_to_gateway_id', () => {
    const p = ok({ reaction: { message_id: 'wamid.A', emoji: '👍' }, in_reply_to_gateway_id: 'wamid.B' });
    assert.deepEqual(p.metadata.reaction, { message_id: 'wamid.A', emoji: '👍' });
  });
  it('needs a target', () => {
    fails({ reaction: { emoji: '👍' } }, 'reaction.message_id', /required/);
    fails({ message_type: 'reaction' }, 'reaction.emoji', /required/);
  });
  it('refuses a non-object reaction', () => {
    fails({ reaction: 'x' as never }, 'reaction', /object/);
  });
  it('Rule 1: a reaction cannot carry text, media, template or interactive content', () => {
    const r = { reaction: { message_id: WAMID, emoji: '👍' } };
    fails({ ...r, message: 'hi' }, 'message', /reaction/);
    fails({ ...r, body: 'hi' }, 'body', /reaction/);
    fails({ ...r, media_url: URL_IMG, media_type: 'image' }, 'media_url', /reaction/);
    fails({ ...r, template: { name: 't' } }, 'template', /reaction/);
    fails({ ...r, ...buttonMsg([button('1', 'Y')]) }, 'interactive', /reaction/);
    fails({ message_type: 'reaction', message: 'hi', in_reply_to_gateway_id: WAMID }, 'message', /reaction/);
  });
  it('builds a reaction payload without context even when a reply target is passed', () => {
    const p = ok({ reaction: { message_id: WAMID, emoji: '👍' } });
    assert.deepEqual(buildCloudApiPayload(p, '255712345678', WAMID), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'reaction',
      reaction: { message_id: WAMID, emoji: '👍' },
    });
  });
});

describe('prepared shape', () => {
  it('fills the nullable fields per kind', () => {
    const text = ok({ message: 'hi' });
    assert.deepEqual(text, {
      kind: 'text',
      previewBody: 'hi',
      caption: null,
      mediaUrl: null,
      mediaType: null,
      templateParams: null,
      metadata: { source: 'api' },
    });
  });
  it('survives a JSON round trip, as workflow arguments do', () => {
    const p = ok({ media_url: URL_IMG, media_type: 'video', message: 'Clip' });
    const copy = JSON.parse(JSON.stringify(p)) as PreparedWhatsAppMessage;
    assert.deepEqual(buildCloudApiPayload(copy, '255712345678', null), buildCloudApiPayload(p, '255712345678', null));
  });
  it('collects several errors at once', () => {
    const { errors } = prepareWhatsAppMessage({ template: { name: s(192), language: s(21) }, message: s(4097) });
    assert.deepEqual(Object.keys(errors).sort(), ['message', 'template.language', 'template.name']);
  });
});
