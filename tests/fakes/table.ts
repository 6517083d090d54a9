// In-memory ports with the adapters' semantics: stored values are copies, so changing an object
// without saving it changes nothing, exactly as with the database.
export const copy = <T extends object>(value: T): T =>
  Object.assign(Object.create(Object.getPrototypeOf(value)), structuredClone({ ...value }));

export class Table<T extends object> {
  readonly rows = new Map<string, T>();
  get(key: string): T | null {
    const row = this.rows.get(key);
    return row ? copy(row) : null;
  }
  put(key: string, row: T) {
    this.rows.set(key, copy(row));
  }
  find(match: (row: T) => boolean): T | null {
    for (const row of this.rows.values()) if (match(row)) return copy(row);
    return null;
  }
}
