import type { FigureRow } from '../lib/types.js';

/** Why writer rows have no value yet. */
export const WRITER_PENDING = 'pending (writer not built)';

/** A row whose subject does not exist yet: its floor (when any) is measured, its value is not. */
export function pendingRow(
  row: Pick<FigureRow, 'id' | 'name' | 'unit' | 'floor' | 'direction' | 'target' | 'ratioDefinition' | 'details'> & {
    readonly floorUnit?: string;
    readonly reason?: string;
    readonly note?: string;
  },
): FigureRow {
  const { reason, note, ...rest } = row;
  return {
    ...rest,
    value: null,
    ratio: null,
    met: null,
    status: 'pending',
    note: [reason ?? WRITER_PENDING, note].filter(Boolean).join('; '),
  };
}
