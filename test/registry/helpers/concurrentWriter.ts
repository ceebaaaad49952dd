// Child process for the concurrency test: hammers one shared name and one name of its own with
// upserts through the real RegistryWriter. Usage: node concurrentWriter.js <root> <id> <iterations>
// Every definition it writes is self-describing (description `w<id>-<i>`, i % 20 args each
// `<id>:<i>`), so a reader can tell a torn or interleaved file from a whole one.

import { RegistryWriter } from '../../../src/registry/writer';

export function definitionFor(name: string, id: number, i: number): Record<string, unknown> {
  return {
    name,
    description: `w${id}-${i}`,
    command: 'node',
    // Long enough that a torn write would be visible; varying so sizes differ between writes.
    args: Array.from({ length: i % 20 }, () => `${id}:${i}:${'x'.repeat(200)}`),
    env: { WRITER: String(id) },
  };
}

async function main(): Promise<void> {
  const [root, idText, itersText] = process.argv.slice(2);
  const id = Number(idText);
  const iterations = Number(itersText);
  const writer = new RegistryWriter(root);
  for (let i = 0; i < iterations; i++) {
    // Shared and own writes run concurrently within the process as well.
    await Promise.all([
      writer.upsert('server', definitionFor('shared', id, i)),
      writer.upsert('server', definitionFor(`own-${id}`, id, i)),
    ]);
    if (i % 10 === 0)
      await writer
        .remove('server', `gone-${id}`)
        .then(() => writer.upsert('server', definitionFor(`gone-${id}`, id, i)));
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
