/**
 * Freezes a parsed JSON value in depth, so that a snapshot handed out cannot change the writer's message list. Walks
 * with an explicit stack, not recursion: a valid message may nest as deep as its line allows (thousands of levels),
 * and a recursive walk would end in a bare `RangeError` there.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const member of Object.values(next)) stack.push(member);
  }
  return value;
}
