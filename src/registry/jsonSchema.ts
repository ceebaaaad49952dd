// JSON Schemas for the editor, generated from the zod schemas so they cannot drift apart.
//
// They describe what a person may *write* (zod's input side): fields with defaults are optional,
// and `name` is optional because the file name supplies it. zod cannot express the cross-field
// rules of a refinement, so the transport rules are added by hand below; the loader remains the
// authority and reports anything the editor lets through.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { KIND_DIRS, SCHEMAS, type Kind } from './schema';

/** File names under `schemas/`. */
export const JSON_SCHEMA_FILES: Record<Kind, string> = {
  server: 'mcp-server.schema.json',
  prompt: 'prompt.schema.json',
  client: 'client.schema.json',
  policy: 'policy.schema.json',
};

const TITLES: Record<Kind, string> = {
  server: 'MCP Switchboard server definition',
  prompt: 'MCP Switchboard prompt definition',
  client: 'MCP Switchboard client definition',
  policy: 'MCP Switchboard guardrail policy',
};

type JsonObject = Record<string, unknown>;

// With transport sse/http a url is required and the stdio fields are not allowed; otherwise
// (stdio, also the default when transport is absent) a command is required and url is not allowed.
const SERVER_TRANSPORT_RULES = {
  if: { properties: { transport: { enum: ['sse', 'http'] } }, required: ['transport'] },
  then: { required: ['url'], properties: { command: false, args: false, envFile: false } },
  else: { required: ['command'], properties: { url: false, auth: false } },
};

function generate(kind: Kind): JsonObject {
  const generated = z.toJSONSchema(SCHEMAS[kind], {
    io: 'input',
    target: 'draft-7',
    unrepresentable: 'any',
  }) as JsonObject;
  const { $schema, ...rest } = generated;
  const schema: JsonObject = {
    $schema,
    title: TITLES[kind],
    description: `One file per ${kind} in ${KIND_DIRS[kind]}/; the file name (without .yaml) is its name.`,
    ...rest,
  };
  const required = (schema.required as string[] | undefined)?.filter((k) => k !== 'name');
  if (required && required.length > 0) schema.required = required;
  else delete schema.required;
  if (kind === 'server') schema.allOf = [SERVER_TRANSPORT_RULES];
  return schema;
}

export function registryJsonSchemas(): Record<Kind, object> {
  return {
    server: generate('server'),
    prompt: generate('prompt'),
    client: generate('client'),
    policy: generate('policy'),
  };
}

/** The exact bytes written for a kind (also what the staleness test compares against). */
export function jsonSchemaText(kind: Kind): string {
  return `${JSON.stringify(registryJsonSchemas()[kind], null, 2)}\n`;
}

/** Writes the schema files into `dir` (created if needed) and returns their paths. */
export function writeJsonSchemas(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  return (Object.keys(JSON_SCHEMA_FILES) as Kind[]).map((kind) => {
    const file = path.join(dir, JSON_SCHEMA_FILES[kind]);
    fs.writeFileSync(file, jsonSchemaText(kind));
    return file;
  });
}
