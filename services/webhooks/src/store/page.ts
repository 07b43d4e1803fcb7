import type { DeliveryPage, DeliveryPageQuery, DeliveryRecord } from "./types.js";

/**
 * A page from the rows a store read for it: `limit + 1` rows, nearest to the cursor first (below it newest
 * first, above it oldest first, from an end in the order asked). The extra row only says that more lie beyond.
 */
export function pageOf(rows: DeliveryRecord[], query: DeliveryPageQuery): DeliveryPage {
  const items = rows.slice(0, query.limit);
  const readAscending = query.after !== undefined || (query.before === undefined && query.order === "asc");
  if (readAscending !== (query.order === "asc")) items.reverse();
  return { items, hasMore: rows.length > query.limit };
}
