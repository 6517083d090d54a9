/** Filters shared by both partner listings (SPEC §4.2, CONTRACT §8). */
export interface OrderFilter {
  /** Only orders with `updatedAt >= updatedSince`. */
  updatedSince: Date | null;
  /** Leave out the statuses that need no partner action. */
  active: boolean;
}

export const PAGE_SIZE = { default: 50, max: 200 } as const;

/** pageSize above the maximum is answered as the maximum (SPEC §8). */
export const clampPageSize = (pageSize: number) => Math.min(pageSize, PAGE_SIZE.max);
