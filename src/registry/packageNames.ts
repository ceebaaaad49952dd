// What a package name looks like in each registry a server.json can name (its `registryType`),
// and which runners an import knows how to call for it. A server.json is someone else's text: an
// "identifier" that is not a package name becomes an argument of npx, uvx or docker, where
// `--call=<shell>`, `git+https://…`, `./local` or `-v /:/host` mean something quite different from a
// package. A name that is not one is refused; versions must be one specific version (the schema's rule).

/** npm: an optional @scope/, then a name; no leading `.`, `_` or `-` (npm's own rules, old capitals allowed). */
const NPM_NAME = /^(?:@[A-Za-z0-9][A-Za-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*$/;
/** PyPI: PEP 508 names. */
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
/** NuGet package ids. */
const NUGET_ID = /^[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*$/;
/** OCI: [registry[:port]/]path[:tag][@sha256:digest], the distribution reference grammar (lowercase path). */
const OCI_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const OCI_DOMAIN =
  '(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\\.(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?))*(?::[0-9]+)?';
const OCI_REFERENCE = new RegExp(
  `^(?:${OCI_DOMAIN}/)?${OCI_COMPONENT}(?:/${OCI_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`,
);
/** One specific version: letters, digits and `.+-_!`, starting with a letter or digit (no ranges, no spaces). */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_!-]*$/;

const NAME_RULES: Record<string, { pattern: RegExp; max: number; what: string }> = {
  npm: { pattern: NPM_NAME, max: 214, what: 'an npm package name (e.g. @scope/name)' },
  pypi: { pattern: PYPI_NAME, max: 200, what: 'a PyPI project name' },
  nuget: { pattern: NUGET_ID, max: 100, what: 'a NuGet package id' },
  oci: { pattern: OCI_REFERENCE, max: 255, what: 'an image reference (e.g. ghcr.io/owner/image:tag)' },
};

/** The runners an import builds a command for, per registry type (their argument order is known). */
export const RUNNERS_FOR: Readonly<Record<string, readonly string[]>> = {
  npm: ['npx', 'bunx'],
  pypi: ['uvx'],
  oci: ['docker', 'podman'],
  nuget: ['dnx'],
};

/** Why `identifier` is not a package name of `registryType`, or undefined when it is one. */
export function packageNameProblem(registryType: string, identifier: string): string | undefined {
  const rule = NAME_RULES[registryType];
  if (!rule) return undefined;
  if (identifier.length > rule.max || !rule.pattern.test(identifier)) {
    return `'${identifier.slice(0, 120)}' is not ${rule.what}; it would reach the runner as an argument of its own`;
  }
  return undefined;
}

/** Why `version` is not one specific version, or undefined. */
export function packageVersionProblem(version: string): string | undefined {
  if (version === 'latest') return "'latest' is not a version: name one specific version";
  if (version.length > 255 || !VERSION.test(version) || /(^|\.)[xX*](\.|$)/.test(version))
    return `'${version.slice(0, 60)}' is not one specific version (no ranges, spaces or leading '-')`;
  return undefined;
}

/** Why `hint` is not a runner this import calls for `registryType`, or undefined. */
export function runtimeHintProblem(registryType: string, hint: string): string | undefined {
  const known = RUNNERS_FOR[registryType];
  if (!known || known.includes(hint)) return undefined;
  return `runtimeHint '${hint.slice(0, 60)}' is not a runner this import calls for ${registryType} packages (${known.join(', ')})`;
}

/** Whether `name` is a package name for the runner's registry (npm runners, PyPI runners, container runners). */
export function isRegistryPackage(runner: string, name: string): boolean {
  const type = ['npx', 'npm exec', 'bunx', 'pnpm dlx', 'yarn dlx'].includes(runner)
    ? 'npm'
    : ['uvx', 'uv tool run', 'pipx run'].includes(runner)
      ? 'pypi'
      : ['docker run', 'podman run'].includes(runner)
        ? 'oci'
        : undefined;
  if (!type) return true;
  // npm and PyPI runners take name@version / name==version: the name is what is checked.
  const bare = type === 'npm' ? name.replace(/(?<=.)@[^/@]*$/, '') : type === 'pypi' ? name.split(/==|@|\[/)[0] : name;
  return packageNameProblem(type, bare) === undefined;
}

/** The registries the runners download from unless told otherwise (npx, uvx, dnx). */
const DEFAULT_REGISTRIES: Record<string, readonly string[]> = {
  npm: ['https://registry.npmjs.org'],
  pypi: ['https://pypi.org', 'https://pypi.org/simple'],
  nuget: ['https://api.nuget.org/v3/index.json'],
};

/**
 * Why a `registryBaseUrl` cannot be honoured, or undefined: the command an import writes fetches
 * from the runner's default registry, where a package of the same name may be someone else's.
 */
export function registryBaseUrlProblem(registryType: string, base: string): string | undefined {
  const defaults = DEFAULT_REGISTRIES[registryType];
  if (!defaults || defaults.includes(base.replace(/\/+$/, ''))) return undefined;
  return (
    `the package is published on ${base.slice(0, 120)}, but the command this import writes downloads from ` +
    `${defaults[0]}, where a package of the same name may be another one; add this server by hand`
  );
}
