import { Kind, parse } from 'graphql';
import type { FieldNode, FragmentDefinitionNode, OperationDefinitionNode } from 'graphql';
import { selectedUnder } from './records';

/** The `chain` field node of a document and its fragments, as a resolver's info carries them. */
function chainInfo(source: string): { fieldNodes: FieldNode[]; fragments: Record<string, FragmentDefinitionNode> } {
  const doc = parse(source);
  const fragments = Object.fromEntries(
    doc.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  const found: FieldNode[] = [];
  const walk = (node: { selectionSet?: { selections: readonly unknown[] } }) => {
    for (const sel of (node.selectionSet?.selections ?? []) as (
      FieldNode | { kind: string; selectionSet?: { selections: readonly unknown[] } }
    )[]) {
      if (sel.kind === Kind.FIELD && (sel as FieldNode).name.value === 'chain') found.push(sel as FieldNode);
      walk(sel as { selectionSet?: { selections: readonly unknown[] } });
    }
  };
  walk(
    doc.definitions.find(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    ) as OperationDefinitionNode,
  );
  return { fieldNodes: found, fragments };
}

describe('selectedUnder (what a chain page prefetches)', () => {
  it('collects the node fields through inline fragments and named fragments, once per cycle', () => {
    const info = chainInfo(`{ linkedRecord(txId: "x") { ... on LinkedRecord { chain(first: 2) {
      edges { cursor node { txId ...N ... on LinkedRecord { confirmation { confirmedBlocks } } } } } } } }
      fragment N on LinkedRecord { position ...B }
      fragment B on Record { content { text } ...N }`);
    expect([...selectedUnder(info, ['edges', 'node'])].sort()).toEqual(['confirmation', 'content', 'position', 'txId']);
    expect([...selectedUnder(info, ['edges'])].sort()).toEqual(['cursor', 'node']);
  });

  it('is empty when the path is not selected', () => {
    expect(
      selectedUnder(chainInfo(`{ linkedRecord(txId: "x") { ... on LinkedRecord { chain { totalCount } } } }`), [
        'edges',
        'node',
      ]).size,
    ).toBe(0);
    expect(
      selectedUnder(chainInfo(`{ linkedRecord(txId: "x") { ... on LinkedRecord { chain { edges { cursor } } } } }`), [
        'edges',
        'node',
      ]).size,
    ).toBe(0);
  });
});
