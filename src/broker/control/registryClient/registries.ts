// Which MCP Registries a search or an add asks: those named on the command line (or in the tool's
// arguments), else SWITCHBOARD_REGISTRIES (addresses separated by commas or spaces; a company's own
// registry, or several), else the official one; less those the administrator's policy refuses.
import { normalizeRegistryUrl, OFFICIAL_REGISTRY } from '../../../registry/registryApi';
import { currentPolicy, policyFile, registryBlock } from '../../../registry/policy';
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

/**
 * One client per configured registry the administrator's policy allows. A registry named on the
 * command line that the policy refuses is an error; one from the environment or the default is
 * left out, and when none is left the search fails with the policy's reasons.
 */
export function registryClients(
  explicit: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): RegistryClient[] {
  const policy = currentPolicy(policyFile(env));
  const urls = configuredRegistries(explicit, env);
  const blocks = urls.map((url) => registryBlock(policy, url));
  const named = explicit.length ? blocks.find((b) => b !== undefined) : undefined;
  if (named) throw new Error(named.message);
  const allowed = urls.filter((_, i) => !blocks[i]);
  if (!allowed.length) throw new Error(blocks.map((b) => b!.message).join('; '));
  return allowed.map((url) => new RegistryClient(url));
}
