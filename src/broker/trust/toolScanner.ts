// Guardrails, what a tool says about itself (issue 33 item 4): the names, descriptions, parameter
// names and descriptions of tools, prompts and a server's instructions, scanned for the signs of
// the published poisoning attacks — hidden text (zero-width, Unicode tag characters, bidi
// controls, terminal escapes), instructions addressed to the model that the user must not see,
// requests to read credentials or to pass file contents or the conversation as arguments, and
// references to other tools. Pure; measured on a labelled set (bench/data/tool-poisoning.json,
// `npm run bench -- --only scanner`; docs/guardrails.md has the figures and what it misses).
import type { Prompt, Tool } from '../shared/mcpTypes';

export type Severity = 'high' | 'medium';

export type ScanSign = 'hidden-text' | 'model-directive' | 'credential-access' | 'exfiltration' | 'other-tools';

export interface ScanFinding {
  sign: ScanSign;
  severity: Severity;
  /** Where it was found: `description`, `parameter 'x'`, `name`, `instructions`, `prompt 'p'`. */
  where: string;
  /** The words that matched, as a person can read them (hidden text decoded and marked). */
  excerpt: string;
}

/** What a sign means, for the summary and the tree. */
export const SIGN_LABELS: Record<ScanSign, string> = {
  'hidden-text': 'hidden text',
  'model-directive': 'instructions to the model',
  'credential-access': 'asks for credentials',
  exfiltration: 'asks to pass data out',
  'other-tools': 'steers other tools',
};

/** Which tools are the server's own and which belong to other servers (names as the upstream lists them). */
export interface ScanContext {
  ownTools?: readonly string[];
  otherTools?: readonly string[];
}

const TAG_CHARS = /[\u{E0000}-\u{E007F}]+/gu;
const ZERO_WIDTH = /[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD]/;
const BIDI = /[\u202A-\u202E\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex -- terminal escapes and control characters are what is looked for
const CONTROL = /\u001b\[|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** Markup and phrases that address the model rather than describe the tool. */
const DIRECTIVES: [RegExp, Severity][] = [
  [/<\/?\s*(important|system|instructions?|secret|hidden)\s*>/i, 'medium'],
  [/\[\/?\s*(instructions?|system)\b[^\]]*\]/i, 'medium'],
  [/<!--[\s\S]*?-->/, 'medium'],
  [
    /\bignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|other)\s+(instructions|rules|directions)/i,
    'high',
  ],
  [/\bsystem\s+override\b|\byou\s+are\s+now\s+(in|allowed|a)\b|\bmaintenance\s+mode\b/i, 'high'],
  [
    /\b(do\s+not|don'?t|never|without)\s+(tell|telling|mention|mentioning|inform|informing|disclos\w*|show|showing|notify\w*|ask\w*|alert\w*)\s+(this\s+|it\s+|anything\s+)?(to\s+)?(the\s+)?user/i,
    'high',
  ],
  [/\b(keep\s+(this|it)\s+(hidden|secret)|the\s+user\s+(does\s+not|doesn'?t)\s+need\s+to\s+know)/i, 'high'],
  // "succeeds silently" describes the tool; "silently read …" tells the model what to do.
  [
    /\b(silently|quietly|secretly|covertly)\s+(read|include|send|pass|add|call|run|append|forward|copy|upload|post)\b/i,
    'high',
  ],
  [/\bnever\s+(show|mention)\s+(the|this|it)\b/i, 'high'],
  [
    /\b(note|instructions?|message|hidden\s+note)\s+(to|for)\s+the\s+(ai|model|assistant|language\s+model|llm|agent)s?\b/i,
    'high',
  ],
  [/\b(for|to)\s+(ai|llm)\s+(agents?|models?|assistants?)\b/i, 'medium'],
  [/\b(assistant|ai\s+model|language\s+model)\s*[:,]?\s*\(?\s*(must|should|read|send|always)\b/i, 'high'],
  [/\bthis\s+overrides\b|\bfrom\s+now\s+on\b|\bbefore\s+every\s+(tool\s+call|answer|response)/i, 'high'],
  [/\b(curl|wget)\b[^|\n]{0,120}\|\s*(ba|z)?sh\b|\bdownload\s+and\s+(run|execute)\b/i, 'high'],
  [/\bexport\s+HISTFILE\b/i, 'high'],
];

/** Files and stores that hold credentials. */
const SENSITIVE_PATHS =
  /(~\/|\$HOME\/|\/home\/\w+\/)?\.(ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|git-credentials|bash_history|zsh_history)\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\bmcp\.json\b|\/etc\/(passwd|shadow)\b|\bsecring\b|\bhosts\.yml\b|\bcookies?\s+(database|db|file|jar)\b|\*\.(pem|key)\b|(^|[\s`'"(])\.env\b/i;
/** Words for secrets; a finding only with a verb that moves them (below) in the same sentence. */
const SECRET_WORDS =
  /\b(api[\s_-]?keys?|private\s+(ssh\s+)?keys?|passwords?|secret[\s_-]?(access[\s_-]?)?keys?|access\s+tokens?|credentials|(\w+_)?(token|secret|api_key)\b(?=[^a-z]|$)|environment\s+variables|session\s+tokens?|printenv)/i;
const MOVING_VERBS =
  /\b(read|include|includ\w+|pass|send|paste|fill|append|provide|embed|save|put|supply|forward|attach|copy|copied|dump)\b/i;

/**
 * Where a secret is to go, or who is to move it: "Read a secret from Vault" describes a tool; "read
 * the API key and put it in the note" or "you must include the token" asks the model to move it.
 */
const SENT_SOMEWHERE =
  /\b(argument|parameter|field|param|as\s+(the\s+)?[`'"]?\w+|in(to)?\s+(the\s+)?[`'"]?\w+\s*[`'"]?\s*(argument|parameter|field|param)?|with\s+(the|this|every)\s+(request|call|tool)|you|yourself|must|always|first|also|assistant|model)\b/i;
/** "The password is read from the environment, never passed as an argument" reassures; it asks nothing. */
const REASSURANCE = /\b(never|not)\s+(be\s+)?(passed|sent|included|given|shown|returned)\b/i;

/** Requests to hand over what the model has seen or read. */
const EXFILTRATION: RegExp[] = [
  /\b(conversation|chat)\s+(history|so\s+far|log)|\bentire\s+(conversation|chat)|\bprevious\s+(messages|tool\s+results)|\blast\s+messages\b|\bfull\s+list\s+of\s+last\s+messages/i,
  /\b(your|the)\s+(full\s+|complete\s+|entire\s+)?system\s+prompt\b/i,
  /\bpass\s+(its|their|the|them|it)\s+(content|contents|output)?\s*(as|in|into)\b/i,
  /\b(read|cat)\b[^.\n]{0,80}\b(and|then)\s+(pass|include|send|put|append|embed|paste)\b/i,
  /\b(include|append|embed|put|paste|pass)\s+(the\s+|its\s+|their\s+)?(full\s+|entire\s+|complete\s+)?(contents?|output|value)\s+of\b/i,
  /\b(forward|copy|send)\s+(every|all|each)\s+(message|email|file)s?\b/i,
];
/** Parameter names that ask for what a tool has no business receiving. */
const SUSPICIOUS_PARAMETER =
  /(^|_)(ssh|id_rsa|private_key|system_prompt|conversation_history|chat_history|env_dump|password|credentials?)(_|$)|content_from_reading/i;

/** Phrases that steer the use of other tools. */
const OTHER_TOOLS: [RegExp, Severity][] = [
  [
    /\b(when|whenever|before|after)\s+(\([^)]*\)\s*)?(you\s+)?(use|using|call|calling|invok\w+)?\s*(the\s+|any\s+)?[\w.-]+\s+(tool\s+)?(is\s+)?(used|invoked|called|available)\b/i,
    'medium',
  ],
  [
    /\b(when|whenever|before)\s+(you\s+)?(use|using|call|calling|read|reading)\s+(the\s+|any\s+)?[`'"]?[\w.-]+_[\w.-]+/i,
    'medium',
  ],
  [
    /\binstead\s+of\s+(using\s+)?(the\s+|any\s+)?[\w.-]+(\s+tool)?|\bprefer\s+this\s+tool\b|\bover\s+the\s+[\w.-]+\s+tool\b/i,
    'medium',
  ],
  [/\b(never|do\s+not|don'?t)\s+(call|use)\s+(those|the\s+other|that|the\s+[\w.-]+\s+(server|tool))/i, 'medium'],
  [/\b(always|only)\s+(use|call)\s+this\s+(tool|one)\b|\breplaces\s+[\w-]+_[\w-]+/i, 'medium'],
  [
    /\b(change|set)\s+the\s+(recipient|destination|account|base\s+branch)\b|\bsend\s+all\s+(emails|messages)\s+to\b/i,
    'high',
  ],
  [/\b(side\s+effect|very\s+important\s+side)\b[^.]{0,60}\btool\b/i, 'high'],
];

const MAX_EXCERPT = 80;

/** Text a person can read: hidden characters shown as escapes, tag characters decoded and marked. */
function visible(text: string): string {
  const decoded = text.replace(TAG_CHARS, (tags) => {
    const ascii = [...tags].map((c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000)).join('');
    return `⟦hidden: ${ascii}⟧`;
  });
  return decoded
    .replace(
      // eslint-disable-next-line no-control-regex -- control characters are what is made visible
      /[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD\u202A-\u202E\u2066-\u2069\u0000-\u0008\u000B-\u001F\u007F]/g,
      (c) => (c === '\n' ? ' ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    )
    .replace(/\s+/g, ' ')
    .trim();
}

function excerpt(text: string, index = 0, length = MAX_EXCERPT): string {
  const start = Math.max(0, index - 20);
  const piece = visible(text.slice(start, start + length + 20));
  return (start > 0 ? '…' : '') + (piece.length > MAX_EXCERPT ? `${piece.slice(0, MAX_EXCERPT)}…` : piece);
}

/** The text the model reads: tag characters decoded (they are read), other hidden characters dropped. */
function asReadByModel(text: string): string {
  return text
    .replace(TAG_CHARS, (tags) => [...tags].map((c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000)).join(''))
    .replace(/[\u200B-\u200F\u2060-\u2064\uFEFF\u00AD]/g, '')
    .replace(/\u001b\[[0-9;]*[A-Za-z]/g, ' '); // eslint-disable-line no-control-regex -- terminal escapes
}

/** Sentences, so a secret word and a verb far apart in a long description do not pair up. */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim());
}

/**
 * The findings in one piece of text. `instructions` are addressed to the model by design, so the
 * markup and phrases of a directive are not counted there; hidden text and requests for secrets are.
 */
export function scanText(text: string, where: string, ctx: ScanContext = {}, instructions = false): ScanFinding[] {
  const out: ScanFinding[] = [];
  const add = (sign: ScanSign, severity: Severity, at: string, index?: number) =>
    out.push({ sign, severity, where, excerpt: excerpt(at, index) });
  const hidden = text.search(TAG_CHARS);
  if (hidden >= 0) add('hidden-text', 'high', text, hidden);
  else if (ZERO_WIDTH.test(text) || BIDI.test(text) || CONTROL.test(text)) {
    const at = text.search(new RegExp(`${ZERO_WIDTH.source}|${BIDI.source}|${CONTROL.source}`));
    add('hidden-text', 'high', text, at);
  }
  const read = asReadByModel(text);
  if (!instructions) {
    for (const [pattern, severity] of DIRECTIVES) {
      const m = pattern.exec(read);
      if (m) {
        add('model-directive', severity, read, m.index);
        break;
      }
    }
  }
  const path = SENSITIVE_PATHS.exec(read);
  if (path) add('credential-access', 'high', read, path.index);
  else {
    const asked = sentences(read).find(
      (s) => SECRET_WORDS.test(s) && MOVING_VERBS.test(s) && SENT_SOMEWHERE.test(s) && !REASSURANCE.test(s),
    );
    if (asked) add('credential-access', 'high', asked);
  }
  for (const pattern of EXFILTRATION) {
    const m = pattern.exec(read);
    if (m) {
      add('exfiltration', 'high', read, m.index);
      break;
    }
  }
  const steer = otherTools(read, ctx);
  if (steer) out.push({ sign: 'other-tools', severity: steer.severity, where, excerpt: excerpt(read, steer.index) });
  return out;
}

function otherTools(text: string, ctx: ScanContext): { severity: Severity; index: number } | undefined {
  let found: { severity: Severity; index: number } | undefined;
  for (const [pattern, severity] of OTHER_TOOLS) {
    const m = pattern.exec(text);
    if (!m) continue;
    // A reference to one of the server's own tools ("use read_text_file instead") is its own business.
    const own = (ctx.ownTools ?? []).some((name) => m[0].includes(name));
    if (own) continue;
    if (!found || severity === 'high') found = { severity, index: m.index };
    if (severity === 'high') break;
  }
  if (found) return found;
  // Another server's tool named outright (names with a separator: plain words would match prose).
  for (const name of ctx.otherTools ?? []) {
    if (!/[_-]/.test(name) || (ctx.ownTools ?? []).includes(name)) continue;
    const at = text.search(new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`));
    if (at >= 0) return { severity: 'medium', index: at };
  }
  return undefined;
}

/** The parameters of a JSON Schema with their descriptions, nested objects and arrays included. */
function parameters(schema: unknown, prefix = ''): { name: string; description?: string }[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return [];
  const out: { name: string; description?: string }[] = [];
  for (const [name, value] of Object.entries(props)) {
    const p = value as { description?: unknown; title?: unknown; items?: unknown };
    const full = prefix ? `${prefix}.${name}` : name;
    const text = [p.title, p.description].filter((t): t is string => typeof t === 'string').join(' ');
    out.push({ name: full, ...(text ? { description: text } : {}) });
    out.push(...parameters(p, full), ...parameters(p.items, full));
  }
  return out;
}

/** Every finding in a tool's definition: its name, title, description and parameters. */
export function scanTool(tool: Tool, ctx: ScanContext = {}): ScanFinding[] {
  const out: ScanFinding[] = [];
  const own = { ...ctx, ownTools: [...(ctx.ownTools ?? []), tool.name] };
  out.push(...scanText(tool.name, 'name', own).filter((f) => f.sign === 'hidden-text'));
  const title = (tool as { title?: unknown }).title;
  if (typeof title === 'string') out.push(...scanText(title, 'title', own));
  if (typeof tool.description === 'string') out.push(...scanText(tool.description, 'description', own));
  for (const p of parameters(tool.inputSchema)) {
    const where = `parameter '${visible(p.name)}'`;
    out.push(...scanText(p.name, where, own).filter((f) => f.sign === 'hidden-text'));
    if (SUSPICIOUS_PARAMETER.test(p.name))
      out.push({ sign: 'exfiltration', severity: 'high', where, excerpt: visible(p.name) });
    if (p.description) out.push(...scanText(p.description, where, own));
  }
  return out;
}

/** Every finding in a prompt's description and arguments. */
export function scanPrompt(prompt: Prompt, ctx: ScanContext = {}): ScanFinding[] {
  const where = `prompt '${visible(prompt.name)}'`;
  const out = [...scanText(prompt.name, where, ctx).filter((f) => f.sign === 'hidden-text')];
  if (typeof prompt.description === 'string') out.push(...scanText(prompt.description, where, ctx));
  for (const arg of (prompt as { arguments?: { name: string; description?: string }[] }).arguments ?? [])
    if (typeof arg.description === 'string') out.push(...scanText(arg.description, `${where} argument`, ctx));
  return out;
}

/** The worst severity among findings; undefined without any. */
export function worst(findings: readonly ScanFinding[]): Severity | undefined {
  if (findings.some((f) => f.severity === 'high')) return 'high';
  return findings.length ? 'medium' : undefined;
}

/** A server's findings: per tool (by the name it lists), per prompt, and in its instructions. */
export interface ServerScan {
  tools: Record<string, ScanFinding[]>;
  prompts: Record<string, ScanFinding[]>;
  instructions: ScanFinding[];
}

const NO_PROMPTS: readonly Prompt[] = [];
const scanned = new WeakMap<readonly Tool[], { prompts: readonly Prompt[]; instructions?: string; scan: ServerScan }>();

/** Scans a server's lists; remembered per tools array (a new list is a new array), so a re-read is free. */
export function scanServer(lists: {
  tools: readonly Tool[];
  prompts?: readonly Prompt[];
  instructions?: string;
}): ServerScan {
  const prompts = lists.prompts ?? NO_PROMPTS;
  const known = scanned.get(lists.tools);
  if (known && known.prompts === prompts && known.instructions === lists.instructions) return known.scan;
  const ctx: ScanContext = { ownTools: lists.tools.map((t) => t.name) };
  const scan: ServerScan = { tools: {}, prompts: {}, instructions: [] };
  for (const tool of lists.tools) {
    const findings = scanTool(tool, ctx);
    if (findings.length) scan.tools[tool.name] = findings;
  }
  for (const prompt of prompts) {
    const findings = scanPrompt(prompt, ctx);
    if (findings.length) scan.prompts[prompt.name] = findings;
  }
  if (lists.instructions) scan.instructions = scanText(lists.instructions, 'instructions', ctx, true);
  scanned.set(lists.tools, { prompts, instructions: lists.instructions, scan });
  return scan;
}

/** The names of the tools in a list that the scanner flags (any finding). */
export function flaggedTools(tools: readonly Tool[]): ReadonlySet<string> {
  return new Set(Object.keys(scanServer({ tools }).tools));
}
