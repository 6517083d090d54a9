/** Counts by endpoint, without zeros. */
export class EndpointCounts extends Map<string, number> {
  add(endpointId: string, n: number) {
    const next = (this.get(endpointId) ?? 0) + n;
    if (next === 0) this.delete(endpointId);
    else this.set(endpointId, next);
  }
}
