/**
 * Runs tasks with at most `limit` at once, starting them in the given order. It waits for every
 * task it started, even when one fails, and only then reports the first failure: a run never
 * moves on (or releases its lease) while a sibling unit still runs.
 */
export async function runPool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await task(item).catch((error: unknown) => errors.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (errors.length > 0) throw errors[0];
}
