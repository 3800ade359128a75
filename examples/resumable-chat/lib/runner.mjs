// Streams one model answer into a LiveRun. The hub persists and fans out; this only translates the model's steps into
// the run's intents (seed 003): text -> delta (segments open and close by themselves), tool -> start/result/end, and
// the end -> done, error or cancel. Deltas are awaited so a fast model cannot outrun the journal's buffer.

/**
 * Runs `model` on `prompt` into `run`. Resolves when the run has a finishing record (or the session is gone); never
 * rejects. `signal` (the run's) aborts the model when the run was cancelled by id or by the server's shutdown: the
 * session has ended the run then (its open segment kept as partial), so the worker only stops.
 */
export async function streamAnswer({ model, prompt, run, signal, log }) {
  try {
    for await (const step of model.stream(prompt, { signal })) {
      if (signal.aborted) break;
      if (step.type === 'text') await run.delta(step.text);
      else if (step.type === 'tool') await callTool(run, step);
    }
    if (!signal.aborted) await run.done();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    try {
      if (!signal.aborted) await run.error({ message, name: 'ModelError' });
    } catch (finishError) {
      // The session itself failed or closed: its next open recovers the run (interrupted, partial text kept).
      log({ event: 'run_unfinished', requestId: run.requestId, error: String(finishError?.message ?? finishError) });
    }
  }
}

async function callTool(run, step) {
  const { toolCallId, tool, args } = step;
  await run.toolStart({ toolCallId, tool, args });
  let output;
  let isError = false;
  try {
    output = String(await step.run());
  } catch (error) {
    output = error instanceof Error ? error.message : String(error);
    isError = true;
  }
  await run.toolResult({ toolCallId, output, ...(isError ? { isError } : {}) });
  await run.toolEnd({ toolCallId, ...(isError ? { isError } : {}) });
}
