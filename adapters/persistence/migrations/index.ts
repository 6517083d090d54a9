import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';

/** Listed explicitly: no file globbing, so the same list works under tsx and from a build. */
export const migrationsList = [{ name: 'Migration20261122000000_initial', class: Migration20261122000000_initial }];
