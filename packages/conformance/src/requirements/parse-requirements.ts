import { ConformanceError } from '../errors.js';
/** BCP 14 levels a requirement can have; the first keyword in its text decides. */
export const REQUIREMENT_LEVELS = [
  'MUST NOT',
  'MUST',
  'REQUIRED',
  'SHALL NOT',
  'SHALL',
  'SHOULD NOT',
  'SHOULD',
  'RECOMMENDED',
  'MAY',
  'OPTIONAL',
] as const;
/** A BCP 14 level. */
export type RequirementLevel = (typeof REQUIREMENT_LEVELS)[number];

/** One requirement of the spec, as written: `- **TJ-FRAME-001** A reader MUST …`. */
export interface Requirement {
  /** Stable id, e.g. `TJ-FRAME-001`. */
  readonly id: string;
  /** First BCP 14 keyword of the text. */
  readonly level: RequirementLevel;
  /** Heading of the section the requirement is in. */
  readonly section: string;
  /** The requirement's text without its id. */
  readonly text: string;
}

const ITEM = /^\s*[-*]\s+\*\*(TJ-[A-Z]+-\d{3})\*\*\s*(.*)$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const KEYWORD = new RegExp(`\\b(${REQUIREMENT_LEVELS.map((l) => l.replace(' ', '\\s+')).join('|')})\\b`);

/**
 * Extracts every requirement from the spec's markdown. A requirement is a list item that starts with its bold id; its
 * text runs until the next list item, heading or blank line. Throws a {@link ConformanceError} `invalid_requirements` on a duplicate id or an
 * item with no BCP 14 keyword, because either makes the id → requirement map ambiguous.
 */
export function parseRequirements(markdown: string): Requirement[] {
  const out: Requirement[] = [];
  const seen = new Set<string>();
  let section = '';
  let current: { id: string; section: string; lines: string[] } | undefined;
  const flush = () => {
    if (current === undefined) return;
    const text = current.lines.join(' ').replace(/\s+/g, ' ').trim();
    const match = KEYWORD.exec(text);
    if (match === null)
      throw new ConformanceError('invalid_requirements', `${current.id}: no BCP 14 keyword in "${text.slice(0, 80)}"`);
    const level = (match[1] ?? '').replace(/\s+/, ' ') as RequirementLevel;
    out.push({ id: current.id, level, section: current.section, text });
    current = undefined;
  };
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.trimStart().startsWith('```')) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const heading = HEADING.exec(line);
    const item = ITEM.exec(line);
    if (heading !== null) {
      flush();
      section = (heading[2] ?? '').trim();
    } else if (item !== null) {
      flush();
      const id = item[1] ?? '';
      if (seen.has(id)) throw new ConformanceError('invalid_requirements', `${id} is defined twice`);
      seen.add(id);
      current = { id, section, lines: [item[2] ?? ''] };
    } else if (line.trim() === '' || /^\s*[-*]\s/.test(line) || /^\s*>/.test(line)) {
      flush();
    } else if (current !== undefined) {
      current.lines.push(line.trim());
    }
  }
  flush();
  return out;
}
