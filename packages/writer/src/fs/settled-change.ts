/**
 * Margin between a change time and the moment it was read for an unchanged change time to prove that nothing changed
 * since. File systems stamp changes with a coarse clock (a scheduler tick on Linux, whole seconds on some): a change
 * made in the same tick as the read, just after it, would leave the change time as it was. A change time well before
 * the read cannot be shared by a later change. Stamps in whole seconds get two seconds.
 */
const FINE_CLOCK_MARGIN_MS = 100;
const COARSE_CLOCK_MARGIN_MS = 2000;

/** Whether `ctimeMs`, read at `readAt` (epoch ms), is old enough that any later change must move it. */
export function isSettled(ctimeMs: number | undefined, readAt: number): boolean {
  if (ctimeMs === undefined) return false;
  const margin = ctimeMs % 1000 === 0 ? COARSE_CLOCK_MARGIN_MS : FINE_CLOCK_MARGIN_MS;
  return ctimeMs < readAt - margin;
}
