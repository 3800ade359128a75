/**
 * Runs the clean-up of an operation that failed with `primary` (closing what it opened, removing its temporary file)
 * and returns what the caller throws: `primary` itself. The clean-up's own failure is not what the caller must see
 * first, and it is not dropped either: it is kept on `primary`, in its `suppressed` list (see `WriterError.suppressed`).
 * A `primary` that cannot carry it (not an extensible object) comes back as an `AggregateError` of both.
 */
export async function afterFailure(primary: unknown, cleanUp: () => Promise<unknown>): Promise<unknown> {
  try {
    await cleanUp();
    return primary;
  } catch (failure) {
    if (typeof primary !== 'object' || primary === null || !Object.isExtensible(primary))
      return new AggregateError([primary, failure], 'an operation failed, and so did its clean-up');
    const holder = primary as { suppressed?: unknown };
    if (Array.isArray(holder.suppressed)) holder.suppressed.push(failure);
    else holder.suppressed = [failure];
    return primary;
  }
}
