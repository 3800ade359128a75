import type { JournalReader, RecordStore } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';

/** The end of the journal at `location` now (see JournalReader.end), or undefined when the store holds none there. */
export async function journalEnd(store: RecordStore, location: StoreLocation): Promise<number | undefined> {
  let reader: JournalReader;
  try {
    reader = await store.openReader(location);
  } catch (error) {
    if ((error as { code?: unknown } | undefined)?.code === 'not_found') return undefined;
    throw error;
  }
  try {
    return await reader.end();
  } finally {
    await reader.close();
  }
}
