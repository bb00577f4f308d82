import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer, { type Page } from 'puppeteer-core';
import { chromiumPath } from '../../scripts/browser.js';
import { personWithPassword } from '../support/people.js';
import { REDIRECT, authorizeUrl, clientId, mcpInitialize, pkce, resourceOf, token } from '../support/oauth.js';
import { PRE_TICKED_SCOPES } from '../../domain/oauth/index.js';

// The sign-in and consent pages in a real browser (Debian's chromium through puppeteer-core) on a
// phone screen: an assistant's authorization request opens the sign-in page, the person signs in,
// the consent page shows the app, where it returns and the account, with exactly the contract's
// capabilities ticked and no elevation; the person ticks Messaging and allows; the browser lands on
// the app's redirect with a code, which gives a token carrying what was ticked. The pages load
// nothing from anywhere, refuse nothing their policy would block, and never scroll sideways. A
// screenshot goes to test/artifacts/ on failure (and of each page on success).

const root = path.resolve(import.meta.dirname, '../..');
const PHONE = { width: 390, height: 844 };

async function screenshot(t: TestContext, page: Page, name: string): Promise<void> {
  const dir = path.join(root, 'test', 'artifacts');
  fs.mkdirSync(dir, { recursive: true });
  const shot = path.join(dir, `${name}-${Date.now()}.png`);
  await page.screenshot({ path: shot, fullPage: true }).catch(() => undefined);
  t.diagnostic(`screenshot: ${shot}`);
  process.stdout.write(`oauth page screenshot: ${shot}\n`);
}

test('on a phone: sign in, see the app and the account, tick Messaging, allow; the code gives a token with what was ticked', async (t) => {
  const executablePath = chromiumPath();
  assert.ok(executablePath, 'chromium is not installed (scripts/test.ts installs it when it runs this file)');
  const who = await personWithPassword({ name: `Kijiji Traders ${Date.now()}` });
  const client = await clientId({ client_name: 'Pocket Assistant' });
  const resource = resourceOf('messaging');
  const { verifier, challenge } = pkce();

  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage();
  let step = 'start';
  try {
    await page.setViewport({ ...PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const blocked: string[] = [];
    const outside: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    // The app's redirect URI is answered here (nothing listens there); any other origin is noted and refused.
    let landed: URL | null = null;
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      const url = r.url();
      if (url.startsWith(new URL(REDIRECT).origin)) {
        if (url.startsWith(REDIRECT)) landed = new URL(url);
        return void r.respond({
          status: 200,
          contentType: 'text/html',
          body: '<!doctype html><title>back in the app</title><p id="app">Connected</p>',
        });
      }
      if (!url.startsWith(new URL(resource).origin)) {
        outside.push(url);
        return void r.abort();
      }
      return void r.continue();
    });

    step = 'sign-in';
    await page.goto(authorizeUrl({ client_id: client, code_challenge: challenge, resource, state: 'phone' }), { waitUntil: 'load' });
    await page.waitForSelector('#sign-in');
    assert.equal(await page.$eval('h1', (el) => el.textContent), 'Sign in to connect Pocket Assistant');
    await noSidewaysScroll(page);
    await page.type('#email', who.email);
    await page.type('#password', who.password);
    await Promise.all([page.waitForNavigation(), page.click('#sign-in-button')]);

    step = 'consent';
    await page.waitForSelector('#consent');
    const shown = await page.evaluate(() => ({
      heading: document.querySelector('h1')?.textContent,
      client: document.querySelector('#client-name')?.textContent,
      host: document.querySelector('#redirect-host')?.textContent,
      account: document.querySelector('#account-name')?.textContent,
      resources: document.querySelector('#resources')?.textContent,
      ticked: [...document.querySelectorAll<HTMLInputElement>('input[name=scope]')].filter((i) => i.checked).map((i) => i.value),
      elevationTicked: [...document.querySelectorAll<HTMLInputElement>('#elevations input')].filter((i) => i.checked).length,
      elevations: document.querySelectorAll('#elevations input').length,
      capabilities: document.querySelectorAll('#capabilities input').length,
      buttons: [...document.querySelectorAll<HTMLButtonElement>('.actions button')].map((b) => ({
        text: b.textContent,
        height: b.getBoundingClientRect().height,
      })),
    }));
    assert.equal(shown.heading, 'Allow Pocket Assistant to use your account?');
    assert.equal(shown.client, 'Pocket Assistant');
    assert.equal(shown.host, '127.0.0.1:9');
    assert.match(shown.account ?? '', /^Kijiji Traders/);
    assert.equal(shown.resources, '/mcp/v1/messaging');
    assert.deepEqual([...shown.ticked].sort(), [...PRE_TICKED_SCOPES].sort());
    assert.equal(shown.capabilities, 25);
    assert.equal(shown.elevations, 8);
    assert.equal(shown.elevationTicked, 0, 'no elevation is ever ticked for the person');
    assert.deepEqual(
      shown.buttons.map((b) => b.text),
      ['Allow', 'Deny'],
    );
    assert.ok(
      shown.buttons.every((b) => b.height >= 44),
      'buttons a thumb can press',
    );
    await noSidewaysScroll(page);
    await screenshot(t, page, 'oauth-consent-phone');

    // The person ticks Messaging (a tap on its label) and allows.
    await page.click('label[for="scope-messaging"]');
    assert.equal(await page.$eval('#scope-messaging', (el) => (el as HTMLInputElement).checked), true);
    step = 'allow';
    await Promise.all([page.waitForNavigation(), page.click('#approve')]);
    await page.waitForSelector('#app');
    assert.ok(landed, 'the browser came back to the app');
    const back = landed as URL;
    assert.equal(back.searchParams.get('state'), 'phone');
    assert.deepEqual(blocked, [], 'the pages need nothing their policy refuses');
    assert.deepEqual(outside, [], 'the pages load nothing from anywhere else');

    step = 'token';
    const issued = await token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: client,
      resource,
    });
    assert.equal(issued.status, 200, issued.text);
    assert.deepEqual(issued.body.scope.split(' ').sort(), ['mcp:messaging', 'mcp:use', ...PRE_TICKED_SCOPES].sort());
    assert.equal((await mcpInitialize('/mcp/v1/messaging', issued.body.access_token)).status, 200);
  } catch (err) {
    await screenshot(t, page, `oauth-failed-at-${step}`);
    throw err;
  } finally {
    await browser.close();
  }
});

async function noSidewaysScroll(page: Page): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= PHONE.width, `the page scrolls sideways: ${width}px on a ${PHONE.width}px screen`);
}
