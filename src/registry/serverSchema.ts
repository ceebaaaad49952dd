// The data model of a server file (`mcp-servers.d/<name>.yaml`): how it starts, restarts and times out,
// who answers its requests, how it signs in, what it may reach (grants, filesystem, network) and its
// tool filters. One concern, one schema: the fields are many because a server definition is, and the
// cross-field checks at the end need them all in one object.
//
// Field descriptions become hover text in the editor (via the generated JSON Schema), so they
// are written for the person editing the YAML.

import { z } from 'zod';
import { globList, nameSchema, noDuplicates, positiveMs } from './schemaParts';

const RestartSchema = z
  .object({
    maxRetries: z.number().int().min(0).default(5).meta({
      description: 'How many consecutive crashes are restarted before the crash-loop breaker stops the server.',
    }),
    backoffMs: z.number().int().min(10).default(500).meta({
      description: 'Delay before the first restart; doubles after each crash.',
    }),
    maxBackoffMs: z.number().int().min(10).default(30000).meta({ description: 'Upper bound of the restart delay.' }),
    resetAfterMs: z.number().int().min(0).default(60000).meta({
      description: 'A server that stays up this long has its crash count reset.',
    }),
    maxPerHour: z
      .number()
      .int()
      .min(1)
      .default(30)
      .meta({
        description:
          'At most this many automatic restarts or reconnects in any hour, however long it stayed up in between: ' +
          'then it stops (failed) until restarted by hand. A vendor may suspend an account that retries all day.',
      }),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.maxBackoffMs < r.backoffMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxBackoffMs'],
        message: `'restart.maxBackoffMs' (${r.maxBackoffMs}) must not be smaller than 'restart.backoffMs' (${r.backoffMs})`,
      });
    }
  });

const TimeoutsSchema = z
  .object({
    startupMs: positiveMs('How long the server may take to start and answer initialize.', 30000),
    callMs: positiveMs('Default time limit for one tool call.', 60000),
  })
  .strict();

/** Who answers a request a server sends its client (see docs/endpoint.md "What passes through"). */
const clientFeatureRule = (what: string) =>
  z
    .enum(['caller', 'editor', 'deny'])
    .default('caller')
    .meta({
      description:
        `Who answers this server's ${what} requests. caller (default): the client whose call caused it when it ` +
        'declared the capability, else VS Code when the Switchboard extension is connected, else a clear refusal. ' +
        'editor: always VS Code (the operator). deny: always refused, naming this setting.',
    });

const ClientFeaturesSchema = z
  .object({
    elicitation: clientFeatureRule('elicitation (form and url)'),
    sampling: clientFeatureRule('sampling (createMessage)'),
  })
  .strict();

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .meta({ description: 'Endpoint of a remote (sse or http) server.' });

const OAuthSchema = z
  .object({
    type: z.literal('oauth').meta({ description: 'Sign in with OAuth 2.1 (the MCP authorization spec).' }),
    scopes: z
      .array(
        z
          .string()
          .min(1)
          .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, { error: 'a scope has no spaces or quotes' }),
      )
      .superRefine(noDuplicates('auth.scopes'))
      .optional()
      .meta({ description: "Scopes to ask for; by default the server's advertised scopes." }),
    clientId: z.string().min(1).optional().meta({
      description: 'A client id registered with the authorization server; without it the broker registers itself.',
    }),
    clientSecretFile: z.string().min(1).optional().meta({
      description:
        'A file (outside the workspace, e.g. ~/.config/...) holding the client secret of a confidential clientId.',
    }),
    clientMetadataUrl: z
      .url({ protocol: /^https$/, error: 'must be an https:// URL of a hosted client metadata document' })
      .optional()
      .meta({ description: 'Client ID Metadata Document URL, for authorization servers that require one.' }),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.clientSecretFile !== undefined && a.clientId === undefined) {
      const message = "'auth.clientSecretFile' needs 'auth.clientId' (the client the secret belongs to)";
      ctx.addIssue({ code: 'custom', path: ['clientSecretFile'], message });
    }
  });

/** An authentication provider id of VS Code: github and microsoft are built in; an extension can add more. */
const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const VscodeAuthSchema = z
  .object({
    type: z.literal('vscode').meta({
      description: 'Use an account VS Code is signed in to (the Accounts menu): VS Code hands the broker its token.',
    }),
    provider: z
      .string()
      .regex(PROVIDER_ID, { error: 'a provider is an authentication provider id such as github or microsoft' })
      .meta({
        description: "VS Code's authentication provider: github, microsoft, or another extension's provider id.",
        examples: ['github', 'microsoft'],
      }),
    scopes: z
      .array(z.string().min(1).regex(/^\S+$/, { error: 'a scope has no spaces' }))
      .superRefine(noDuplicates('auth.scopes'))
      .default([])
      .meta({
        description: 'Scopes the session needs, e.g. [repo] for github or [https://graph.microsoft.com/.default].',
      }),
  })
  .strict();

export type OAuthSettings = z.output<typeof OAuthSchema>;
export type VscodeAuthSettings = z.output<typeof VscodeAuthSchema>;
export type ServerAuth = OAuthSettings | VscodeAuthSettings;

/** `${input:NAME}`: a secret the person enters once (VS Code's password box, or `switchboard secret set NAME`). */
export const INPUT_REFERENCE = /\$\{input:([A-Za-z0-9_.-]+)\}/g;
export const INPUT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The names of the inputs a definition's env and header values refer to, in order of first use. */
export function inputsReferenced(def: Pick<ServerDef, 'env' | 'headers'>): string[] {
  const names = new Set<string>();
  for (const value of [...Object.values(def.env), ...Object.values(def.headers)])
    for (const m of value.matchAll(INPUT_REFERENCE)) names.add(m[1]);
  return [...names];
}

const InputSchema = z
  .object({
    description: z
      .string()
      .optional()
      .meta({ description: 'What to enter, shown in the prompt (e.g. "Linear API key").' }),
    password: z.boolean().default(true).meta({ description: 'Hide what is typed (default true).' }),
  })
  .strict();

const pathList = (what: string) =>
  z
    .array(z.string().min(1, { error: 'a path must not be empty' }))
    .default([])
    .meta({ description: `${what} Relative to the registry root, absolute, or ~/ for the home directory.` });

const FilesystemSchema = z
  .object({
    read: pathList('Directories and files the server may read (besides the registry root, which it always reads).'),
    write: pathList('Directories and files the server may read and write.'),
  })
  .strict();

// host, *.domain or an IP, with an optional :port; [v6]:port for IPv6.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST_PATTERN = new RegExp(`^(?:(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?$`);

const NetworkSchema = z
  .object({
    allow: z
      .array(
        z.string().regex(HOST_PATTERN, {
          error: "a host is a name (api.github.com), '*.' and a domain (*.example.com) or an IP, optionally :port",
        }),
      )
      .min(1, { error: "'network.allow' needs at least one host; remove 'network' for the whole network" })
      .meta({
        description:
          'Hosts the server may reach (api.github.com, *.example.com, 127.0.0.1:8080); without a port, 80 and 443.',
      }),
  })
  .strict();

export const ServerDefSchema = z
  .object({
    name: nameSchema,
    description: z.string().optional().meta({ description: 'Shown in the console and to agents listing servers.' }),
    trust: z
      .enum(['builtin', 'trusted', 'community'])
      .default('community')
      .meta({
        description:
          "builtin and trusted servers start once the operator accepts the workspace's trusted servers " +
          '(a workspace can request a tier, not grant it); a community server stays inert until the operator approves it.',
      }),
    transport: z.enum(['stdio', 'sse', 'http']).default('stdio').meta({
      description: 'stdio: a child process; sse: legacy HTTP+SSE; http: Streamable HTTP.',
    }),
    command: z.string().min(1, { error: "'command' must not be empty" }).optional().meta({
      description: 'Executable to run (stdio only), e.g. npx, node, uvx.',
    }),
    args: z.array(z.string()).default([]).meta({ description: 'Arguments passed to the command (stdio only).' }),
    cwd: z.string().min(1).optional().meta({
      description: 'Working directory of the process, relative to the workspace root (stdio only).',
    }),
    env: z
      .record(
        z.string().regex(ENV_NAME, { error: 'an environment variable name must be letters, digits and _' }),
        z.string(),
      )
      .default({})
      .meta({ description: 'Extra environment variables (stdio only). Quote numbers: PORT: "3000".' }),
    envFile: z.string().min(1).optional().meta({
      description:
        "A dotenv file, relative to the workspace root, whose values are passed only with the 'secrets' grant.",
    }),
    url: httpUrl.optional(),
    headers: z.record(z.string().min(1), z.string()).default({}).meta({
      description: 'HTTP headers sent to a remote server.',
    }),
    auth: z
      .discriminatedUnion('type', [OAuthSchema, VscodeAuthSchema])
      .optional()
      .meta({
        description:
          'How the broker signs in to a remote (sse or http) server: { type: oauth } (the broker signs in) or ' +
          '{ type: vscode, provider: github } (an account of VS Code). Tokens are kept per user, outside the workspace.',
      }),
    inputs: z
      .record(z.string().regex(INPUT_NAME, { error: 'an input name is letters, digits, _, . or -' }), InputSchema)
      .optional()
      .meta({
        description:
          'How to ask for the ${input:NAME} values used in env and headers: a description and whether to hide it. ' +
          "Values are entered once (VS Code, or 'switchboard secret set NAME'), kept per user, and passed only with the 'secrets' grant.",
      }),
    grants: z
      .array(z.enum(['network', 'secrets', 'filesystem']))
      .default([])
      .superRefine(noDuplicates('grants'))
      .meta({
        description: 'Capabilities the server may use: network, secrets (env files and secret variables), filesystem.',
        uniqueItems: true,
      }),
    filesystem: FilesystemSchema.optional().meta({
      description:
        "With the 'filesystem' grant: the paths it covers (stdio, enforced on Linux with bubblewrap). " +
        'Without this key the grant means the whole file system.',
    }),
    network: NetworkSchema.optional().meta({
      description:
        "With the 'network' grant: only these hosts, through the broker's proxy (stdio, Linux with bubblewrap). " +
        'Without this key the grant means the whole network.',
    }),
    allowedTools: globList('Only tools matching one of these globs are exposed.').optional(),
    excludeTools: globList('Tools matching any of these globs are hidden (wins over allowedTools).').optional(),
    onToolChange: z
      .enum(['quarantine-tools', 'quarantine-server'])
      .optional()
      .meta({
        description:
          'When the tools differ from the ones pinned at approval: quarantine-tools (the default) holds back the ' +
          'changed and new tools, the others keep working; quarantine-server holds back every tool of the server. ' +
          'Until the operator reviews the change.',
      }),
    redactResults: z
      .boolean()
      .optional()
      .meta({
        description:
          'Whether the secret values the broker hands this server (env, env file, ${input:…}, tokens) are redacted ' +
          'from its results, progress and log messages (default true). false only for a server whose job is ' +
          "returning a credential; it is part of the operator's approval.",
      }),
    holdFlaggedTools: z
      .boolean()
      .optional()
      .meta({
        description:
          'Hold back tools whose names or descriptions the scanner flags (instructions to the model, hidden text, ' +
          "requests for credentials) like changed tools, until the operator reviews them. Part of the operator's approval.",
      }),
    pins: z
      .object({
        resources: z
          .enum(['first-use', 'strict'])
          .optional()
          .meta({
            description:
              'first-use (the default): a resource URI never seen is listed and its name and description recorded; ' +
              'only a recorded URI whose metadata changed is held back. strict: a new URI is held back too, until ' +
              "the operator reviews it (for a server whose resources are a fixed set). Part of the operator's approval.",
          }),
      })
      .strict()
      .optional()
      .meta({ description: 'How the rug-pull pins treat what the server lists beyond its tools and prompts.' }),
    enabled: z.boolean().default(true).meta({ description: 'Set to false to keep the definition without running it.' }),
    lifecycle: z
      .enum(['eager', 'lazy'])
      .optional()
      .meta({
        description:
          'eager: runs as soon as it may; lazy: starts on the first call, prompt or resource read that needs it ' +
          "and stops after 'idleStopMs' without use. " +
          'Default: lazy for community servers, eager for trusted and builtin.',
      }),
    idleStopMs: positiveMs('A lazy server unused this long is stopped; the next call starts it again.', 600000),
    restart: RestartSchema.prefault({}).meta({ description: 'Restart policy after a crash.' }),
    timeouts: TimeoutsSchema.prefault({}).meta({ description: 'Time limits in milliseconds.' }),
    clientFeatures: ClientFeaturesSchema.prefault({}).meta({
      description: 'Who answers the requests this server sends its client: the caller, the editor (VS Code) or nobody.',
    }),
  })
  .strict()
  .superRefine((s, ctx) => {
    // Cross-field rules: a transport decides which of the connection fields make sense. These only
    // run once every field has the right type, so a person sees one layer of mistakes at a time.
    if (s.transport === 'stdio') {
      if (s.command === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['command'],
          message: "a stdio server needs a 'command' (the program to run)",
        });
      }
      if (s.url !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: "a stdio server must not have a 'url'; set 'transport: http' (or sse) for a remote server",
        });
      }
      if (s.auth !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['auth'],
          message:
            "a stdio server must not have 'auth': sign-in is for remote (http or sse) servers; " +
            "pass a stdio server's credentials in 'env' or 'envFile'",
        });
      }
      for (const key of ['filesystem', 'network'] as const) {
        if (s[key] !== undefined && !s.grants.includes(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `'${key}' says what the '${key}' grant covers; add '${key}' to 'grants' (or remove '${key}')`,
          });
        }
      }
    } else {
      if (s.url === undefined)
        ctx.addIssue({ code: 'custom', path: ['url'], message: `a remote (${s.transport}) server needs a 'url'` });
      for (const key of ['command', 'args', 'envFile', 'filesystem', 'network'] as const) {
        const present = key === 'args' ? s.args.length > 0 : s[key] !== undefined;
        if (present) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `a remote (${s.transport}) server must not have '${key}'; it is for stdio servers`,
          });
        }
      }
    }
  });

export type ServerDef = z.output<typeof ServerDefSchema>;
export type Lifecycle = 'eager' | 'lazy';

/**
 * A server's lifecycle, its tier's default where the file says none: a community server is lazy
 * (nothing third-party runs that no agent asked for), a trusted or builtin one eager (the
 * workspace's own servers are expected to be there, with no first-call wait).
 */
export function lifecycleOf(def: Pick<ServerDef, 'lifecycle' | 'trust'>): Lifecycle {
  return def.lifecycle ?? (def.trust === 'community' ? 'lazy' : 'eager');
}
