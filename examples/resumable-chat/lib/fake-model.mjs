// A deterministic fake model: the same prompt always streams the same tokens and the same tool call, at a configurable
// pace, so the browser tests and the load test are repeatable. A real model plugs in through the same interface:
//
//   model.stream(prompt, { signal }) -> AsyncIterable of
//     { type: 'text', text }                                   assistant tokens
//     { type: 'tool', toolCallId, tool, args, run: () => output }  a tool call (its output becomes a tool message)
//
// Holds: a prompt containing "[hold]" stops mid-answer until `release()` (used by the tests to close a tab, go offline
// or kill the server at a known point without sleeping). Holds only exist when the server runs with test hooks.

/** The tokens of the two assistant segments and the tool call the fake model answers `prompt` with. */
export function fakeScript(prompt) {
  const topic = prompt.replace('[hold]', '').trim().slice(0, 60) || 'that';
  return {
    first: words(`Let me look up "${topic}" in the notes first.`),
    tool: { tool: 'search_notes', args: { query: topic }, output: `3 notes mention "${topic}".` },
    second: words(
      `Here is what the notes say about "${topic}": the journal is append-only, every turn is written before the ` +
        'model starts, and a reconnecting browser receives exactly the records it missed, in order, once. ' +
        'If the server dies mid-answer, the partial text is kept and marked partial.',
    ),
  };
}

/** The committed transcript the fake model produces for `prompt` when nothing interrupts it. */
export function fakeAnswer(prompt) {
  const script = fakeScript(prompt);
  return { first: script.first.join(''), tool: script.tool.output, second: script.second.join('') };
}

function words(text) {
  return text.match(/\S+\s*/g) ?? [];
}

/**
 * The fake model. `tokenMs` is the delay between tokens (0: as fast as the event loop allows); `holds` enables the
 * "[hold]" gate.
 */
export function createFakeModel({ tokenMs = 40, holds = false } = {}) {
  let waiting = []; // resolvers of runs parked at the gate
  let heldListeners = [];

  async function pause(signal) {
    if (tokenMs > 0) await new Promise((resolve) => setTimeout(resolve, tokenMs));
    if (signal?.aborted) throw new Error('aborted');
  }

  return {
    name: 'fake',
    async *stream(prompt, { signal } = {}) {
      const script = fakeScript(prompt);
      for (const text of script.first) {
        await pause(signal);
        yield { type: 'text', text };
      }
      const { tool, args, output } = script.tool;
      yield { type: 'tool', toolCallId: 'call-1', tool, args, run: async () => output };
      const half = Math.floor(script.second.length / 2);
      for (const [index, text] of script.second.entries()) {
        if (index === half && holds && prompt.includes('[hold]')) {
          const released = new Promise((resolve) => waiting.push(resolve));
          for (const listener of heldListeners) listener();
          heldListeners = [];
          await released;
        }
        await pause(signal);
        yield { type: 'text', text };
      }
    },
    /** Resolves once some run is parked at the gate (test hook). */
    whenHeld() {
      if (waiting.length > 0) return Promise.resolve();
      return new Promise((resolve) => heldListeners.push(resolve));
    },
    /** Lets every parked run continue (test hook). */
    release() {
      const parked = waiting;
      waiting = [];
      for (const resolve of parked) resolve();
      return parked.length;
    },
  };
}
