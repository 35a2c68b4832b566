import { z } from 'zod';
import { compose, slice, variable } from './variable';

describe('compose', () => {
  const A = variable('A', 'a', z.string().default('a'));

  it('places each variable where its slice puts it, and a shared variable once', () => {
    const { schema, variables } = compose(
      slice({ a: A, group: { b: variable('B', 'b', z.coerce.number().default(1)) } }),
      slice({ a: A, c: variable('C', 'c', z.string().optional(), A) }),
    );
    expect(variables.map((v) => v.env)).toEqual(['A', 'B', 'C']);
    expect(schema.parse({ B: '2', OTHER: 'x' })).toEqual({ a: 'a', group: { b: 2 }, c: 'a' });
    expect(schema.parse({ A: 'z', C: 'c' })).toEqual({ a: 'z', group: { b: 1 }, c: 'c' });
  });

  it('reports a broken rule on the variable it names, after every variable parsed', () => {
    const { schema } = compose(
      slice({ a: A }, (c) => (c.a === 'bad' ? { env: 'A', message: 'may not be bad' } : undefined)),
    );
    const result = schema.safeParse({ A: 'bad' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ path: ['A'], message: 'may not be bad' })]);
  });

  it('refuses a name or a key two slices declare differently, and a fallback outside the composition', () => {
    expect(() => compose(slice({ a: A }), slice({ b: variable('A', 'again', z.string()) }))).toThrow(
      /A is declared twice/,
    );
    expect(() => compose(slice({ a: A }), slice({ a: variable('B', 'b', z.string()) }))).toThrow(
      /key a is declared twice/,
    );
    expect(() => compose(slice({ c: variable('C', 'c', z.string().optional(), A) }))).toThrow(/C falls back to A/);
  });
});
