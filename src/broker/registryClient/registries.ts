// Which MCP Registries a search or an add asks: those named on the command line (or in the tool's
// arguments), else SWITCHBOARD_REGISTRIES (addresses separated by commas or spaces; a company's own
// registry, or several), else the official one.
import { normalizeRegistryUrl, OFFICIAL_REGISTRY } from '../../registry/registryApi';
import { RegistryClient } from './registryClient';

export const REGISTRIES_ENV = 'SWITCHBOARD_REGISTRIES';

/** The registries' base URLs, normalized and without duplicates; a bad address is an error naming it. */
export function configuredRegistries(explicit: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = (env[REGISTRIES_ENV] ?? '').split(/[\s,]+/).filter(Boolean);
  const raw = explicit.length ? explicit : fromEnv.length ? fromEnv : [OFFICIAL_REGISTRY];
  const where = explicit.length ? '--registry' : fromEnv.length ? REGISTRIES_ENV : 'the default';
  return [
    ...new Set(
      raw.map((r) => {
        try {
          return normalizeRegistryUrl(r);
        } catch (err) {
          throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
        }
      }),
    ),
  ];
}

/** One client per configured registry. */
export function registryClients(
  explicit: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): RegistryClient[] {
  return configuredRegistries(explicit, env).map((url) => new RegistryClient(url));
}
