/// <reference lib="dom" />
// The resumable chat in a real browser (Debian's chromium, driven by playwright-core): the scenarios of issue 16, and
// "tab closed mid-stream" again with two servers on one PostgreSQL database behind a round-robin proxy (issue 36).
// Each asserts what the user sees (the DOM) and what the journals hold (`turnjournal check` clean, one turn per send).
// Synchronisation is on DOM states and server events (test hooks that answer when the event happened), never sleeps.
// (The DOM library is referenced for the functions that page.evaluate runs in the browser.)
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { type Browser, type BrowserContext, chromium, type Page, type WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer, fakeScript } from '../lib/fake-model.mjs';
import {
  CHROMIUM,
  type ChatServer,
  checkStore,
  committedMessages,
  EXAMPLE,
  eventRecords,
  journalDirectory,
  startServer,
} from './harness.js';
import { type RoundRobinProxy, startRoundRobinProxy } from './round-robin-proxy.js';

const SHOTS = mkdtempSync(join(tmpdir(), 'tj-chat-browser-'));
const WORK = mkdtempSync(join(tmpdir(), 'tj-chat-stores-'));
let browser: Browser;

beforeAll(async () => {
  console.log(`resumable-chat browser tests: screenshots in ${SHOTS}`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  postgres?.stop();
});

/** The throwaway PostgreSQL of the scenarios that run on a database, started by the first of them. */
let postgres: PostgresServer | undefined;

/**
 * Two chat servers on one PostgreSQL store, behind a round-robin proxy: the browser sees one address and each of its
 * connections reaches the next server. Test hooks go to both servers: `held` answers from the one whose model is
 * parked (the session's owner), `release` and `idle` ask both.
 */
async function startCluster(store: string): Promise<{ server: ChatServer; proxy: RoundRobinProxy; root: string }> {
  postgres ??= startPostgres();
  const root = `${postgres.connectionString}?store=${store}`;
  const servers = [await startServer({ root }), await startServer({ root })];
  const proxy = await startRoundRobinProxy(servers.map((server) => server.port));
  const server: ChatServer = {
    url: proxy.url,
    port: Number(new URL(proxy.url).port),
    root,
    process: (servers[0] as ChatServer).process,
    hook: (path) =>
      path === 'held'
        ? Promise.race(servers.map((one) => one.hook(path)))
        : Promise.all(servers.map((one) => one.hook(path))).then((answers) => answers[0]),
    async kill() {
      await Promise.all(servers.map((one) => one.kill()));
      await proxy.close();
    },
    async stop() {
      await Promise.all(servers.map((one) => one.stop()));
      await proxy.close();
    },
  };
  return { server, proxy, root };
}

interface Scenario {
  server: ChatServer;
  root: string;
  context: BrowserContext;
  /** Opens the chat page of `sessionId` in the scenario's context (shared localStorage: one user, one browser). */
  open(sessionId: string): Promise<Page>;
}

/**
 * Runs one scenario with its own store, server and browser context; screenshots every open page at the end. With
 * `cluster`, the store is a PostgreSQL store of that name and the server two servers behind a round-robin proxy, whose
 * record `cluster.check` receives once the body passed.
 */
function scenario(
  name: string,
  body: (s: Scenario) => Promise<void>,
  cluster?: { readonly store: string; check(proxy: RoundRobinProxy): void },
) {
  it(name, async () => {
    let root: string;
    let server: ChatServer;
    let proxy: RoundRobinProxy | undefined;
    if (cluster === undefined) {
      root = join(WORK, name.replace(/\W+/g, '-'));
      mkdirSync(root);
      server = await startServer({ root });
    } else ({ root, server, proxy } = await startCluster(cluster.store));
    const context = await browser.newContext({ viewport: { width: 900, height: 760 } });
    context.setDefaultTimeout(20_000);
    const pages: Page[] = [];
    const s: Scenario = {
      server,
      root,
      context,
      async open(sessionId) {
        const page = await context.newPage();
        pages.push(page);
        await page.goto(`${s.server.url}?session=${sessionId}&backoff=100&backoffMax=400`);
        return page;
      },
    };
    let failed = false;
    try {
      await body(s);
      if (cluster !== undefined) cluster.check(proxy as RoundRobinProxy);
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const label = name.replace(/\W+/g, '-');
      for (const [index, page] of pages.entries()) {
        if (page.isClosed()) continue;
        const file = join(SHOTS, `${label}-${index}${failed ? '-FAILED' : ''}.png`);
        await page.bringToFront(); // a tab behind another paints no frames to capture
        await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        if (failed) console.log(`screenshot of the failure: ${file}`);
      }
      await context.close();
      await s.server.stop();
    }
  });
}

// ---- what the user sees ----------------------------------------------------------------------------------------------

async function waitLive(page: Page) {
  await page.waitForSelector('#status[data-state="live"]');
}

async function send(page: Page, text: string) {
  await page.fill('#input', text);
  await page.click('#send');
}

/** Waits until the run of the last user message has finished (no streaming bubble, no "answering" note). */
async function waitFinished(page: Page, userMessages: number) {
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('.msg.user').length === n &&
      document.querySelector('.msg.streaming') === null &&
      document.querySelector('.note.running') === null,
    userMessages,
    // Polled, not per animation frame: a tab that is not in front gets no animation frames.
    { polling: 50 },
  );
}

/** The transcript as the user reads it: role and text of every bubble, in order. */
function transcript(page: Page) {
  return page.$$eval('#transcript .msg', (nodes) =>
    nodes.map((node) => ({
      role: (node as HTMLElement).dataset.role,
      partial: node.classList.contains('partial'),
      streaming: node.classList.contains('streaming'),
      text: node.querySelector('.text')?.textContent ?? '',
    })),
  );
}

function expectedTranscript(prompt: string) {
  const answer = fakeAnswer(prompt);
  return [
    { role: 'user', partial: false, streaming: false, text: prompt },
    { role: 'assistant', partial: false, streaming: false, text: answer.first },
    { role: 'tool', partial: false, streaming: false, text: answer.tool },
    { role: 'assistant', partial: false, streaming: false, text: answer.second },
  ];
}

/** The text of the second segment up to the fake model's "[hold]" gate. */
function heldText(prompt: string) {
  const second = fakeScript(prompt).second;
  return second.slice(0, Math.floor(second.length / 2)).join('');
}

/** Waits until the session's event log holds `text` at the end of its deltas (written: what a SIGKILL keeps). */
async function untilLogged(s: Scenario, sessionId: string, text: string) {
  const directory = await journalDirectory(s.root);
  const deltas = () =>
    eventRecords(directory, sessionId)
      .filter((record) => record.type === 'chat.delta')
      .map((record) => String(record.payload?.text ?? ''))
      .join('');
  for (let tries = 0; tries < 500 && !deltas().endsWith(text); tries++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(deltas().endsWith(text), `the log's deltas end with the text the page shows`).toBe(true);
}

/** Sends a "[hold]" prompt and waits until the model is parked and the page shows everything before the gate. */
async function sendAndHold(s: Scenario, page: Page, prompt: string) {
  const held = s.server.hook('held');
  await send(page, prompt);
  await held;
  await page.waitForFunction(
    (text) => document.querySelector('.msg.streaming .text')?.textContent === text,
    heldText(prompt),
    { polling: 50 },
  );
}

// ---- what the journals hold -------------------------------------------------------------------------------------------

/** `turnjournal check` is clean and the session holds exactly `turns` (turn id and state), in order. */
async function expectJournals(s: Scenario, sessionId: string, turns: [string, string][]) {
  const report = await checkStore(s.root);
  expect(report.clean).toBe(true);
  expect(report.summary.findings.error).toBe(0);
  // The report lists turns by id; the event log's runs are in send order.
  const session = report.sessions.find((entry) => entry.session_id === sessionId);
  const byId = (a: [string, string], b: [string, string]) => a[0].localeCompare(b[0]);
  expect(session?.turns.map((turn): [string, string] => [turn.turn_id, turn.state]).sort(byId)).toEqual(
    [...turns].sort(byId),
  );
  const starts = eventRecords(await journalDirectory(s.root), sessionId).filter(
    (record) => record.type === 'chat.started',
  );
  expect(starts.map((record) => record.payload?.request_id)).toEqual(turns.map(([id]) => id));
  return report;
}

async function requestIds(page: Page) {
  return page.$$eval('.msg.user', (nodes) => nodes.map((node) => (node as HTMLElement).dataset.request ?? ''));
}

/** Every frame one page's sockets send and receive, per socket in order of opening. */
function recordFrames(page: Page) {
  const sockets: { sent: Record<string, unknown>[]; received: Record<string, unknown>[] }[] = [];
  page.on('websocket', (socket: WebSocket) => {
    const entry = { sent: [] as Record<string, unknown>[], received: [] as Record<string, unknown>[] };
    sockets.push(entry);
    socket.on('framesent', (frame) => entry.sent.push(JSON.parse(String(frame.payload))));
    socket.on('framereceived', (frame) => entry.received.push(JSON.parse(String(frame.payload))));
  });
  return sockets;
}

/**
 * Scenario 2's body: a tab closed mid-stream and reopened resumes from its saved cursor and shows the whole answer
 * once. `sessionId` names the session (and the store's screenshot).
 */
async function closeTabMidStream(s: Scenario, sessionId: string) {
  const prompt = '[hold] Close the tab';
  const first = await s.open(sessionId);
  await waitLive(first);
  await sendAndHold(s, first, prompt);
  await first.close();
  const again = await s.context.newPage();
  const frames = recordFrames(again);
  await again.goto(`${s.server.url}?session=${sessionId}&backoff=100`);
  await waitLive(again);
  // The reopened tab rendered its saved transcript and asked only for what came after it.
  const hello = frames[0]?.sent[0] as { type: string; lastSeq: number | null };
  expect(hello.type).toBe('hello');
  expect(typeof hello.lastSeq).toBe('number');
  expect(frames[0]?.received[0]).toMatchObject({ type: 'snapshot', mode: 'resume' });
  await s.server.hook('release');
  await waitFinished(again, 1);
  expect(await transcript(again)).toEqual(expectedTranscript(prompt));
  const stats = await again.evaluate(() => (window as unknown as { __chat: { stats: object } }).__chat.stats);
  expect(stats).toMatchObject({ duplicates: 0, gaps: 0, snapshots: 0 });
  const seqs = (frames[0]?.received ?? []).flatMap((f) => (typeof f.seq === 'number' ? [f.seq] : []));
  expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i)); // consecutive: no gap, no repeat
  expect(seqs[0]).toBe((hello.lastSeq as number) + 1);
  const [requestId] = await requestIds(again);
  await expectJournals(s, sessionId, [[requestId as string, 'completed']]);
  await again.screenshot({ path: join(SHOTS, `2-reopened-${sessionId}.png`) });
}

describe('resumable chat in Chromium', () => {
  scenario('1 send: the answer streams token by token and is committed', async (s) => {
    const page = await s.open('s1');
    await waitLive(page);
    // Every text the streaming bubble showed, as the DOM changed.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('.msg.streaming .text')?.textContent;
        if (text !== undefined && text !== seen.at(-1)) seen.push(text);
      }).observe(document.getElementById('transcript') as HTMLElement, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    const prompt = 'What is a turn journal?';
    await send(page, prompt);
    await waitFinished(page, 1);
    expect(await transcript(page)).toEqual(expectedTranscript(prompt));
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    const answer = fakeAnswer(prompt);
    // Token by token: many intermediate states, each a prefix of a segment's final text.
    expect(seen.length).toBeGreaterThan(20);
    for (const text of seen) expect(answer.first.startsWith(text) || answer.second.startsWith(text)).toBe(true);
    const [requestId] = await requestIds(page);
    await expectJournals(s, 's1', [[requestId as string, 'completed']]);
    expect(committedMessages(s.root, 's1').map((m) => m.content)).toEqual(
      expectedTranscript(prompt).map((m) => m.text),
    );
  });

  scenario('2 close the tab mid-stream, reopen: the whole answer, once', (s) => closeTabMidStream(s, 's2'));

  scenario(
    '2b close the tab mid-stream, reopen on the other server (PostgreSQL, two servers, round-robin): the whole answer, once',
    (s) => closeTabMidStream(s, 's2b'),
    {
      store: 'tab_closed',
      check(proxy) {
        // The first tab's socket reached one server (which owns the session and runs the model); the reopened tab's
        // the other, which served the resume and the rest of the answer as a follower, from the database.
        expect(proxy.webSockets).toEqual([0, 1]);
        expect(proxy.unexpectedErrors).toEqual([]);
      },
    },
  );

  scenario('3 offline mid-stream and back: only the missed events are sent', async (s) => {
    const prompt = '[hold] Go offline';
    const page = await s.open('s3');
    const frames = recordFrames(page);
    await waitLive(page);
    await sendAndHold(s, page, prompt);
    const lastSeq = await page.evaluate(
      () => (window as unknown as { __chat: { model: () => { lastSeq: number } } }).__chat.model().lastSeq,
    );
    await s.context.setOffline(true);
    await page.waitForSelector('#status[data-state="offline"]');
    await s.server.hook('release');
    await s.server.hook('idle'); // the answer finished while the page was offline
    const socketsBefore = frames.length;
    await s.context.setOffline(false);
    await waitFinished(page, 1);
    await waitLive(page);
    expect(frames.length).toBe(socketsBefore + 1);
    const resumed = frames.at(-1) as { sent: Record<string, unknown>[]; received: Record<string, unknown>[] };
    // The cursor travels with the epoch of its log (TJ-LIVE-022), as the log's first record holds it.
    const epoch = eventRecords(s.root, 's3')[0]?.epoch;
    expect(typeof epoch).toBe('string');
    expect(resumed.sent[0]).toEqual({ type: 'hello', clientId: expect.any(String), lastSeq, epoch });
    // Exactly the records after lastSeq, each once, in order, framed by the resume header and the live marker.
    const missed = eventRecords(s.root, 's3').filter((record) => record.seq > lastSeq);
    const recordFramesReceived = resumed.received.filter((f) => typeof f.seq === 'number');
    expect(recordFramesReceived.map((f) => f.seq)).toEqual(missed.map((record) => record.seq));
    expect(recordFramesReceived.map((f) => f.type)).toEqual(missed.map((record) => record.type));
    expect(resumed.received[0]).toMatchObject({ type: 'snapshot', mode: 'resume', after: lastSeq });
    expect(resumed.received.filter((f) => typeof f.seq !== 'number').map((f) => f.type)).toEqual(['snapshot', 'live']);
    // The text is identical to an uninterrupted run; the answer finished while away, so it is marked as missed.
    expect(await transcript(page)).toEqual(expectedTranscript(prompt));
    await page.waitForSelector('.note.missed');
    const [requestId] = await requestIds(page);
    await expectJournals(s, 's3', [[requestId as string, 'completed']]);
    console.log(`scenario 3: ${recordFramesReceived.length} record frames after reconnect for ${missed.length} missed`);
  });

  scenario('4 SIGKILL mid-turn, restart: interrupted, partial kept, a new message works', async (s) => {
    const prompt = '[hold] Crash the server';
    const page = await s.open('s4');
    await waitLive(page);
    await sendAndHold(s, page, prompt);
    // Tokens reach the page at once and the log within `deltaFlushMs` (TJ-LIVE-007: a crash loses at most that much):
    // the kill comes once the text shown is written, so that the partial kept is all of it, whatever the load.
    await untilLogged(s, 's4', heldText(prompt));
    await s.server.kill();
    await page.waitForSelector('#status[data-state="reconnecting"]');
    // While the server is down nothing answers: the page says so instead of a frozen "Answering…".
    await page.waitForSelector('.note.paused');
    expect(await page.textContent('.note.running')).toContain('Waiting for the server');
    expect(await page.isHidden('#stop')).toBe(true);
    s.server = await startServer({ root: s.root, port: s.server.port });
    await page.waitForSelector('.note.interrupted');
    await waitLive(page);
    // The tab stayed open and showed the run's end: not "ended while you were away", and acknowledged as shown.
    expect(await page.$$('.note.missed')).toEqual([]);
    expect(await page.isHidden('#missed')).toBe(true);
    const answer = fakeAnswer(prompt);
    expect(await transcript(page)).toEqual([
      { role: 'user', partial: false, streaming: false, text: prompt },
      { role: 'assistant', partial: false, streaming: false, text: answer.first },
      { role: 'tool', partial: false, streaming: false, text: answer.tool },
      { role: 'assistant', partial: true, streaming: false, text: heldText(prompt) },
    ]);
    expect(await page.textContent('.note.interrupted')).toContain('Interrupted by a server restart');
    const next = 'After the restart';
    await send(page, next);
    await waitFinished(page, 2);
    expect((await transcript(page)).slice(4)).toEqual(expectedTranscript(next));
    const [crashed, after] = await requestIds(page);
    await expectJournals(s, 's4', [
      [crashed as string, 'interrupted'],
      [after as string, 'completed'],
    ]);
    const cancelled = eventRecords(s.root, 's4').find((record) => record.type === 'chat.cancelled');
    expect(cancelled?.payload).toEqual({ request_id: crashed, reason: 'server_startup_recovery' });
    const partial = committedMessages(s.root, 's4').find((message) => message.partial === true);
    expect(partial?.content).toBe(heldText(prompt));
    const acks = eventRecords(s.root, 's4').filter((record) => record.type === 'delivery.ack');
    expect(acks.map((record) => record.payload?.request_id)).toContain(crashed);
    await page.screenshot({ path: join(SHOTS, '4-after-restart.png') });
    if (process.env.TJ_UPDATE_SCREENSHOT === '1')
      await page.screenshot({ path: join(EXAMPLE, 'screenshot.png'), fullPage: true });
  });

  scenario('5 two tabs on one session stay in sync', async (s) => {
    const a = await s.open('s5');
    const b = await s.open('s5');
    await Promise.all([waitLive(a), waitLive(b)]);
    await send(a, 'Sent from tab A');
    await Promise.all([waitFinished(a, 1), waitFinished(b, 1)]);
    await send(b, 'Sent from tab B');
    await Promise.all([waitFinished(a, 2), waitFinished(b, 2)]);
    const expected = [...expectedTranscript('Sent from tab A'), ...expectedTranscript('Sent from tab B')];
    expect(await transcript(a)).toEqual(expected);
    expect(await transcript(b)).toEqual(expected);
    const ids = await requestIds(a);
    expect(await requestIds(b)).toEqual(ids);
    await expectJournals(
      s,
      's5',
      ids.map((id) => [id, 'completed']),
    );
  });

  scenario('6 double-click send, and resend after a lost acceptance: exactly one turn each', async (s) => {
    const page = await s.open('s6');
    const frames = recordFrames(page);
    await waitLive(page);
    // Two clicks in one task: both chat.send frames leave before any answer can arrive.
    await page.fill('#input', 'Double click');
    await page.evaluate(() => {
      const button = document.getElementById('send') as HTMLButtonElement;
      button.click();
      button.click();
    });
    await waitFinished(page, 1);
    // The second click finds the first send unconfirmed: it is the same turn, kept by the client, not sent again.
    const sends = frames.flatMap((f) => f.sent).filter((f) => f.type === 'chat.send');
    expect(sends).toHaveLength(1);
    const accepted = frames.flatMap((f) => f.received).filter((f) => f.type === 'chat.accepted');
    expect(accepted.map((f) => f.created)).toEqual([true]);

    // The server takes the turn but the connection dies before its acceptance: the page resends the same requestId.
    await s.server.hook('drop-next-accept');
    await send(page, 'Lost acceptance');
    await waitFinished(page, 2);
    await waitLive(page);
    const resends = frames.flatMap((f) => f.sent).filter((f) => f.type === 'chat.send');
    expect(resends).toHaveLength(3);
    expect(resends[2]?.requestId).toBe(resends[1]?.requestId);
    expect(frames.length).toBe(2); // the resend went out on the new connection
    expect((frames[1]?.received ?? []).find((f) => f.type === 'chat.accepted')).toMatchObject({ created: false });
    expect(await transcript(page)).toEqual([
      ...expectedTranscript('Double click'),
      ...expectedTranscript('Lost acceptance'),
    ]);
    const ids = await requestIds(page);
    expect(ids).toEqual([sends[0]?.requestId, resends[1]?.requestId]);
    await expectJournals(
      s,
      's6',
      ids.map((id) => [id, 'completed']),
    );
  });

  scenario('7 the answer finishes while the page is closed: missed indicator, ack clears it', async (s) => {
    const prompt = '[hold] Finish while away';
    const first = await s.open('s7');
    await waitLive(first);
    await sendAndHold(s, first, prompt);
    await first.close();
    await s.server.hook('release');
    await s.server.hook('idle');
    const [requestId] = committedMessages(s.root, 's7').map((message) => message.request_id as string);
    expect(eventRecords(s.root, 's7').filter((record) => record.type === 'delivery.ack')).toEqual([]);
    const page = await s.open('s7');
    await page.waitForSelector(`.note.missed[data-request="${requestId}"]`);
    expect(await page.isVisible('#missed')).toBe(true);
    expect(await transcript(page)).toEqual(expectedTranscript(prompt));
    await page.screenshot({ path: join(SHOTS, '7-missed.png') });
    await page.click(`.note.missed[data-request="${requestId}"] button`);
    await page.waitForSelector('.note.missed', { state: 'detached' });
    expect(await page.isHidden('#missed')).toBe(true);
    const clientId = await page.evaluate(() => (window as unknown as { __chat: { clientId: string } }).__chat.clientId);
    const acks = eventRecords(s.root, 's7').filter((record) => record.type === 'delivery.ack');
    expect(acks.map((record) => record.payload)).toEqual([
      { request_id: requestId, client_id: clientId, through_seq: expect.any(Number) },
    ]);
    const report = await expectJournals(s, 's7', [[requestId as string, 'completed']]);
    expect(report.event_logs.find((log) => log.session_id === 's7')?.undelivered).toEqual([]);
  });

  scenario(
    '8 the session is created again while the page is closed: the page shows the new conversation only',
    async (s) => {
      const page = await s.open('s8');
      await waitLive(page);
      await send(page, 'The old conversation');
      await waitFinished(page, 1);
      await page.close(); // its model and cursor (with the old log's epoch) stay in localStorage
      // An operator removes the session's files; the new conversation, written from another browser, outgrows the
      // cursor the page holds (TJ-LIVE-020: without the epoch the page would get the new log's records after it).
      await s.server.stop();
      rmSync(join(s.root, 's8'), { recursive: true, force: true });
      for (const name of readdirSync(join(s.root, '_turn_journal')))
        if (name.startsWith('s8')) rmSync(join(s.root, '_turn_journal', name), { force: true });
      s.server = await startServer({ root: s.root, port: s.server.port });
      const elsewhere = await browser.newContext();
      const other = await elsewhere.newPage();
      await other.goto(`${s.server.url}?session=s8&backoff=100&backoffMax=400`);
      await waitLive(other);
      await send(other, 'The new conversation');
      await waitFinished(other, 1);
      await send(other, 'Its second turn');
      await waitFinished(other, 2);
      await elsewhere.close();
      const again = await s.open('s8');
      const frames = recordFrames(again);
      await waitLive(again);
      await waitFinished(again, 2);
      expect(await transcript(again)).toEqual([
        ...expectedTranscript('The new conversation'),
        ...expectedTranscript('Its second turn'),
      ]);
      const received = frames.flatMap((f) => f.received);
      expect(received.filter((f) => f.type === 'snapshot').map((f) => f.mode)).toEqual(['resume', 'reset']);
      const epoch = eventRecords(s.root, 's8')[0]?.epoch;
      expect(typeof epoch).toBe('string');
      const model = await again.evaluate(
        () => (window as unknown as { __chat: { model: () => { epoch: string | null } } }).__chat.model().epoch,
      );
      expect(model).toBe(epoch);
    },
  );

  scenario('9 Stop cancels the run by id: the written text is kept as partial, the turn interrupted', async (s) => {
    const prompt = '[hold] Stop me';
    const page = await s.open('s9');
    const frames = recordFrames(page);
    await waitLive(page);
    await sendAndHold(s, page, prompt);
    expect(await page.isVisible('#stop')).toBe(true);
    await page.click('#stop');
    await page.waitForSelector('.note.interrupted');
    expect(await page.textContent('.note.interrupted')).toContain('Stopped');
    await s.server.hook('release'); // the parked worker sees its aborted signal and ends
    await s.server.hook('idle');
    await waitFinished(page, 1);
    const answer = fakeAnswer(prompt);
    expect(await transcript(page)).toEqual([
      { role: 'user', partial: false, streaming: false, text: prompt },
      { role: 'assistant', partial: false, streaming: false, text: answer.first },
      { role: 'tool', partial: false, streaming: false, text: answer.tool },
      { role: 'assistant', partial: true, streaming: false, text: heldText(prompt) },
    ]);
    expect(await page.isHidden('#stop')).toBe(true);
    expect(await page.$$('.note.missed')).toEqual([]);
    const [requestId] = await requestIds(page);
    const cancels = frames.flatMap((f) => f.sent).filter((f) => f.type === 'chat.cancel');
    expect(cancels).toEqual([{ type: 'chat.cancel', requestId }]);
    await expectJournals(s, 's9', [[requestId as string, 'interrupted']]);
    const cancelled = eventRecords(s.root, 's9').filter((record) => record.type === 'chat.cancelled');
    expect(cancelled.map((record) => record.payload)).toEqual([{ request_id: requestId, reason: 'client_cancelled' }]);
  });
});
