import { describe, expect, it } from 'vitest';
import { canonicalDigest, canonicalJson } from '../../src/turn/canonical-json.js';

describe('canonicalJson (spec §4.6)', () => {
  it('sorts members and prints numbers in shortest form, at every level', () => {
    expect(canonicalJson({ b: [1.0, { d: null, c: 'x\u2028' }], a: true })).toBe(
      '{"a":true,"b":[1,{"c":"x\u2028","d":null}]}',
    );
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson('s')).toBe('"s"');
  });

  it('writes values nested 100,000 levels deep, far beyond the call stack (TJ-DERIVE-014)', () => {
    const depth = 100_000;
    const array = JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(canonicalJson(array)).toBe(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    const object = JSON.parse(`${'{"b":1,"a":'.repeat(depth)}0${'}'.repeat(depth)}`);
    expect(canonicalJson(object)).toBe(`${'{"a":'.repeat(depth)}0${',"b":1}'.repeat(depth)}`);
  });

  it('gives equal values equal digests and different values different ones, at any depth', () => {
    const depth = 50_000;
    const a = JSON.parse(`${'{"y":1,"x":'.repeat(depth)}[1,2]${'}'.repeat(depth)}`);
    const b = JSON.parse(`${'{"x":'.repeat(depth)}[1.0,2]${',"y":1}'.repeat(depth)}`);
    const c = JSON.parse(`${'{"x":'.repeat(depth)}[2,1]${',"y":1}'.repeat(depth)}`);
    expect(canonicalDigest(a).equals(canonicalDigest(b))).toBe(true);
    expect(canonicalDigest(a).equals(canonicalDigest(c))).toBe(false);
    expect(canonicalDigest(a)).toHaveLength(16);
  });
});
