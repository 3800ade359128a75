/// <reference lib="dom" />
// The example's page in a real browser (Debian's chromium, driven by playwright-core): the AI SDK's own chat engine,
// loaded from its installed ESM files through the page's import map, against server.mjs in a child process. A reload
// mid-answer continues the answer in the same bubble; a server SIGKILLed mid-answer and restarted shows the partial
// answer as interrupted, and a new message is answered. What the user sees is asserted, then `turnjournal check`.
// Synchronisation is on DOM states, never sleeps. (The DOM library is referenced for the page.evaluate functions.)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockAnswer } from '../model.mjs';
import { CHROMIUM, checkStore, startServer, store } from './harness.js';

const SHOTS = mkdtempSync(join(tmpdir(), 'tj-ai-chat-browser-'));
/** The mock model's pace: its answer to "hello" (60 words) takes about 5 s, the time a reload has to land in it. */
const WORD_MS = 80;
let browser: Browser;

beforeAll(async () => {
  console.log(`ai-sdk-chat browser tests: screenshots in ${SHOTS}`);
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  } catch (error) {
    throw new Error(`cannot start Chromium at ${CHROMIUM} (set CHROMIUM_PATH): ${(error as Error).message}`);
  }
});
afterAll(async () => {
  await browser?.close();
});

/** A page in a context of its own; fails the test on an uncaught error in the page; screenshot at the end. */
async function withPage(name: string, body: (page: Page) => Promise<void>): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  let failed = false;
  try {
    await body(page);
    expect(pageErrors).toEqual([]);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    const file = join(SHOTS, `${name}${failed ? '-FAILED' : ''}.png`);
    await page.screenshot({ path: file, fullPage: true });
    if (failed) console.log(`screenshot of the failure: ${file}; errors in the page: ${pageErrors.join('; ')}`);
    await context.close();
  }
}

interface Bubble {
  role: string;
  id: string;
  text: string;
  streaming: boolean;
  interrupted: boolean;
}

/** The transcript as the user reads it: every bubble, in order. */
function transcript(page: Page): Promise<Bubble[]> {
  return page.$$eval('#transcript .msg', (nodes) =>
    nodes.map((node) => ({
      role: (node as HTMLElement).dataset.role ?? '',
      id: (node as HTMLElement).dataset.id ?? '',
      text: node.querySelector('.text')?.textContent ?? '',
      streaming: node.classList.contains('streaming'),
      interrupted: node.classList.contains('interrupted'),
    })),
  );
}

/** What app.mjs records: the statuses the page showed since it was loaded, and whether its resume request is over. */
interface PageRecord {
  statuses: string[];
  resumed: boolean;
}
const pageRecord = (page: Page) => page.evaluate(() => (window as unknown as { chatPage: PageRecord }).chatPage);
const statuses = async (page: Page) => (await pageRecord(page)).statuses;

/** Waits until the page's resume request is over and the chat shows `status` (after an answer too). */
async function settle(page: Page, status: 'ready' | 'error' = 'ready'): Promise<void> {
  await page.waitForFunction(
    (wanted) => {
      const record = (window as unknown as { chatPage?: PageRecord }).chatPage;
      return record?.resumed === true && record.statuses.at(-1) === wanted;
    },
    status,
    { polling: 50 },
  );
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#input', text);
  await page.click('#send');
}

/** Waits until the streaming answer shows at least `words` words; returns its bubble. */
async function streamedWords(page: Page, words: number): Promise<Bubble> {
  await page.waitForFunction(
    (n) => (document.querySelector('.msg.assistant.streaming .text')?.textContent ?? '').split(' ').length > n,
    words,
    { polling: 20 },
  );
  return (await transcript(page)).at(-1) as Bubble;
}

const answer = (prompt: string) => mockAnswer(prompt).join('');
const bubble = (role: string, text: string, interrupted = false) =>
  expect.objectContaining({ role, text, streaming: false, interrupted });

describe('the AI SDK chat page in Chromium', () => {
  it('a reload mid-answer: the answer continues in the same bubble', async () => {
    const root = store();
    const { url, child } = await startServer(root, { wordMs: WORD_MS });
    await withPage('reload-mid-answer', async (page) => {
      await page.goto(`${url}/?chat=reload`);
      await settle(page); // nothing to resume: the resume request answered 204
      await send(page, 'hello');
      const before = await streamedWords(page, 5);

      await page.reload();
      await settle(page);
      // The answer came back through the resume request, streaming (not whole from the first render) ...
      expect(await statuses(page)).toEqual(['ready', 'submitted', 'streaming', 'ready']);
      const after = await transcript(page);
      // ... into one bubble: the same message, its text from the start, to the end.
      expect(after).toEqual([bubble('user', 'hello'), bubble('assistant', answer('hello'))]);
      expect(after[1]?.id).toBe(before.id);
      expect(after[1]?.text.startsWith(before.text)).toBe(true);

      // A reload after the end renders the same chat from the journal, with nothing to resume.
      await page.reload();
      await settle(page);
      expect(await transcript(page)).toEqual(after);
      expect(await statuses(page)).toEqual(['ready']); // the resume request answered 204
    });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    expect((await checkStore(root)).findings).toEqual([]);
  });

  it('a server killed mid-answer: after a restart the partial answer shows as interrupted, a new message works', async () => {
    const root = store();
    const first = await startServer(root, { wordMs: WORD_MS });
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    await withPage('server-killed', async (page) => {
      await page.goto(`${first.url}/?chat=killed`);
      await settle(page);
      await send(page, 'hello');
      const before = await streamedWords(page, 5);
      first.child.kill('SIGKILL');
      await page.waitForSelector('#status[data-state="error"]'); // the page's stream broke

      second = await startServer(root, { port: Number(new URL(first.url).port), wordMs: WORD_MS });
      await page.reload();
      await settle(page, 'error');
      const [user, partial] = await transcript(page);
      expect(user).toEqual(bubble('user', 'hello'));
      // The words the journal kept (at least those the page had shown), marked interrupted, with the SDK's error.
      expect(partial).toEqual(expect.objectContaining({ role: 'assistant', id: before.id, interrupted: true }));
      expect(partial?.text.startsWith(before.text)).toBe(true);
      expect(answer('hello').startsWith(partial?.text ?? '')).toBe(true);
      expect(partial?.text.length).toBeLessThan(answer('hello').length);
      expect(await page.textContent('#error')).toMatch(/interrupted by a server restart/);

      await send(page, 'again');
      await page.waitForFunction(() => document.querySelectorAll('.msg').length === 4, undefined, { polling: 50 });
      await settle(page);
      const expected = [
        bubble('user', 'hello'),
        bubble('assistant', partial?.text ?? '', true),
        bubble('user', 'again'),
        bubble('assistant', answer('again')),
      ];
      expect(await transcript(page)).toEqual(expected);
      expect(await page.isHidden('#error')).toBe(true);

      // A reload renders the same chat from the journal: the partial answer still interrupted, nothing to resume.
      await page.reload();
      await settle(page);
      expect(await transcript(page)).toEqual(expected);
    });
    second?.child.kill('SIGTERM');
    if (second !== undefined) await new Promise((resolve) => second?.child.once('exit', resolve));
    expect((await checkStore(root)).findings).toEqual([]);
  });
});
