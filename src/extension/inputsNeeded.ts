// Which `${input:NAME}` secrets the registry's servers use, and which nobody entered yet. Pure (no
// `vscode`), so Enter Secret's choices and the hand-over after a broker restart are unit tested.
import type { InputStatus, ServerStatus } from '../broker/control/controlApi';

/** One input name across every server that uses it. */
export interface InputUse {
  name: string;
  description?: string;
  password: boolean;
  /** Where the broker has its value now (absent: nobody entered it). */
  source?: InputStatus['source'];
  servers: string[];
}

/** Every input the servers reference, once per name, sorted by name. */
export function referencedInputs(servers: readonly ServerStatus[]): InputUse[] {
  const byName = new Map<string, InputUse>();
  for (const s of servers) {
    for (const i of s.inputs ?? []) {
      const use = byName.get(i.name);
      if (!use) {
        byName.set(i.name, {
          name: i.name,
          ...(i.description ? { description: i.description } : {}),
          password: i.password,
          ...(i.source ? { source: i.source } : {}),
          servers: [s.name],
        });
        continue;
      }
      use.servers.push(s.name);
      use.description ??= i.description;
      // Hidden while typed if any server that uses it says so.
      use.password ||= i.password;
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The inputs the broker has no value for: what Enter Secret offers first. */
export function missingInputs(servers: readonly ServerStatus[]): InputUse[] {
  return referencedInputs(servers).filter((i) => i.source === undefined);
}

/**
 * The inputs to hand the broker from the editor's secret storage: referenced, without a value in
 * the broker, and stored in the editor. A value from the per-user store is left alone.
 */
export function inputsToRestore(servers: readonly ServerStatus[], stored: ReadonlySet<string>): string[] {
  return missingInputs(servers)
    .filter((i) => stored.has(i.name))
    .map((i) => i.name);
}

/** The password box's title: the server, then what to enter. */
export function inputTitle(server: string, input: Pick<InputStatus, 'name' | 'description'>): string {
  return `${server}: ${input.description ?? input.name}`;
}
