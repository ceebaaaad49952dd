// The extension's settings (`switchboard.*`), typed, each with its one default, read in one place.
// No `vscode` import: it reads through the one method of WorkspaceConfiguration it needs, so the
// defaults are unit tested against package.json.

export const SECTION = 'switchboard';

export interface Settings {
  /** Registry root relative to the workspace folder. */
  registryRoot: string;
  /** The client in clients.d/ whose token VS Code's own MCP client uses; '' for per-server definitions. */
  editorClient: string;
  perServer: boolean;
  autoStart: boolean;
  idleExitSeconds: number;
  /** MCP Registries Add Server from Registry… searches; empty: the environment's, else the official one. */
  registries: string[];
  /** The broker the editor starts records traces and metrics (SWITCHBOARD_TELEMETRY=1). */
  telemetry: boolean;
}

/** Each setting's key under `switchboard.`, as package.json declares it. */
export const SETTING_KEYS: { readonly [K in keyof Settings]: string } = {
  registryRoot: 'registryRoot',
  editorClient: 'editorClient',
  perServer: 'mcpProvider.perServer',
  autoStart: 'broker.autoStart',
  idleExitSeconds: 'broker.idleExitSeconds',
  registries: 'registries',
  telemetry: 'telemetry.enabled',
};

/** The same defaults as package.json's `contributes.configuration` (a unit test holds them equal). */
export const DEFAULTS: Readonly<Settings> = {
  registryRoot: '.',
  editorClient: 'copilot',
  perServer: false,
  autoStart: true,
  idleExitSeconds: 300,
  registries: [],
  telemetry: false,
};

/** The part of `vscode.WorkspaceConfiguration` read here. */
export interface ConfigurationReader {
  get<T>(key: string): T | undefined;
}

/** `switchboard.broker.autoStart` for `autoStart`: what `affectsConfiguration` takes. */
export function settingId(key: keyof Settings): string {
  return `${SECTION}.${SETTING_KEYS[key]}`;
}

export function readSettings(config: ConfigurationReader): Settings {
  const raw = <K extends keyof Settings>(key: K): unknown => config.get(SETTING_KEYS[key]);
  const flag = (key: 'perServer' | 'autoStart' | 'telemetry'): boolean => {
    const v = raw(key);
    return typeof v === 'boolean' ? v : DEFAULTS[key];
  };
  const registryRoot = raw('registryRoot');
  const editorClient = raw('editorClient');
  const idleExitSeconds = raw('idleExitSeconds');
  const registries = raw('registries');
  return {
    // An emptied field means the folder itself, as '.' does.
    registryRoot: typeof registryRoot === 'string' && registryRoot ? registryRoot : DEFAULTS.registryRoot,
    // Set to empty (or null), it asks for per-server definitions: only an unset value takes the default.
    editorClient:
      editorClient === undefined ? DEFAULTS.editorClient : typeof editorClient === 'string' ? editorClient : '',
    perServer: flag('perServer'),
    autoStart: flag('autoStart'),
    telemetry: flag('telemetry'),
    idleExitSeconds:
      typeof idleExitSeconds === 'number' && Number.isFinite(idleExitSeconds)
        ? idleExitSeconds
        : DEFAULTS.idleExitSeconds,
    // Addresses only: anything else in the list is left out here and never reaches the client.
    registries: Array.isArray(registries)
      ? registries.filter((r): r is string => typeof r === 'string' && r.trim() !== '')
      : DEFAULTS.registries,
  };
}
