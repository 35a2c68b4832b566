/// <reference lib="dom" />
// What the browser pages (apps/api/pages/verify.ts, apps/graphql/pages/explorer.ts) share; bundled
// into each by tools/build/pages.mjs. Browser code only: nothing here runs in Node.

/** The element with this id (the pages' HTML has every id their scripts ask for). */
export const byId = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** An element with attributes and children: text is set as text, never parsed as HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}
