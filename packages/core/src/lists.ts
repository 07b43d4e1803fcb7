/**
 * Page sizes of every list, paged by number or by cursor (docs/api/lists-and-pagination.md): a caller that asks for
 * none gets `default` items, and may ask for at most `max`.
 */
export const PAGE_LIMIT = { default: 20, max: 100 } as const;
