import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../adapters/persistence/database/open.ts';

// PGlite runs no checkpointer of its own: a process killed would replay at its next start all the WAL written since it
// opened the folder (14 s after 1.3 GB on a loaded test machine), and pg_wal would grow without end.
const test = suite('the embedded database on a data folder');

test('takes checkpoints while it runs: after a kill, only the WAL written since the last one is replayed', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pbi-checkpoints-'));
  const database = await openDatabase({ pgliteDir: join(root, 'pglite'), embeddedCheckpointMs: 200 });
  try {
    const sql = <T>(text: string) => database.orm.em.fork().getConnection().execute<T[]>(text);
    await sql('create table wal_filler (body text)');
    await sql('insert into wal_filler select repeat(md5(g::text), 32) from generate_series(1, 5000) g'); // ~5 MB of WAL
    const walSinceCheckpoint = async () =>
      Number(
        (
          await sql<{ behind: string }>(
            'select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint as behind from pg_control_checkpoint()',
          )
        )[0]!.behind,
      );
    const deadline = Date.now() + 10_000;
    let behind = await walSinceCheckpoint();
    while (behind > 1_000_000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      behind = await walSinceCheckpoint();
    }
    assert.ok(behind < 1_000_000, `${behind} bytes of WAL since the last checkpoint, 10 s after the writes`);
  } finally {
    await database.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
