// The JSON Schema validator handed to the SDK's clients and servers. The SDK builds an Ajv
// instance (with every format) for each one it constructs: one per upstream and one per agent
// session. The broker forwards tool results as they are and never asks the SDK to validate, so
// one instance, built on first use, serves them all.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

let shared: AjvJsonSchemaValidator | undefined;

export const sharedSchemaValidator: jsonSchemaValidator = {
  getValidator(schema) {
    shared ??= new AjvJsonSchemaValidator();
    return shared.getValidator(schema);
  },
};
