// Writes the typed client's copy of the OpenAPI document and the types generated from it:
// clients/typescript/openapi.json and clients/typescript/src/schema.ts, from the compiled server
// (dist/), whose document is built without a server (src/openapi-document.ts). Every
// `npm run build` runs it after compiling src/, so the client always matches the server's code;
// neither file is committed. test/api/typescript-client.test.ts checks what the build wrote.
import { writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'

/** The client package's directory. */
export const CLIENT_DIR = new URL('../clients/typescript/', import.meta.url)

const HEADER =
  "// Generated from the Warden API's OpenAPI document by `npm run generate:client`: do not edit.\n\n"

const pascal = (name) => name.replace(/(?:^|[_-])([a-z0-9])/gi, (_, c) => c.toUpperCase())
const camel = (name) => name.charAt(0).toLowerCase() + pascal(name).slice(1)

/**
 * For every string enum of a component schema (the schema itself, a property, an item of an
 * array, at any depth; not inside anyOf or oneOf), its values as a constant array, checked
 * against the generated type: `piiKindValues`, `policyRuleTypeValues`, `policyTargetValues`.
 * openapi-typescript's own `enumValues` option writes arrays that do not compile for some
 * schemas of this document (an anyOf of a string and text parts, a nullable object).
 */
function enumValues(document) {
  const lines = []
  const walk = (schema, name, type) => {
    if (!schema || typeof schema !== 'object' || schema.$ref) return
    const values = (schema.enum ?? []).filter((value) => value !== null)
    if (values.length > 0 && values.every((value) => typeof value === 'string')) {
      lines.push(
        `export const ${name}Values = ${JSON.stringify(values)} as const satisfies readonly NonNullable<${type}>[];`,
      )
      return
    }
    for (const [key, property] of Object.entries(schema.properties ?? {}))
      walk(property, `${name}${pascal(key)}`, `NonNullable<${type}>[${JSON.stringify(key)}]`)
    if (schema.items) walk(schema.items, name, `NonNullable<${type}>[number]`)
  }
  for (const [key, schema] of Object.entries(document.components?.schemas ?? {}))
    walk(schema, camel(key), `components["schemas"][${JSON.stringify(key)}]`)
  return `\n/** The values of each enum of the components, in the document's order. */\n${lines.join('\n')}\n`
}

/**
 * The document's `x-rule-types` (each rule type's form: the labels of the fields it reads, and
 * what it passes on) as `ruleTypeForms`, keyed and checked by the rule type: the console builds
 * its rule form from it.
 */
function ruleTypeForms(document) {
  const forms = document['x-rule-types'] ?? {}
  return `\n/** Each rule type's form, from the document's \`x-rule-types\`. */\nexport const ruleTypeForms = ${JSON.stringify(forms, null, 2)} as const satisfies Record<NonNullable<components["schemas"]["PolicyRule"]["type"]>, { value?: string; threshold?: string; flagged?: 'pii' | 'toxicity' | 'phrases'; detector?: true; mask?: true; allowed?: 'findings' | 'text'; about: string }>;\n`
}

/** The files to write, by path under CLIENT_DIR, for an OpenAPI document. */
export async function clientFiles(document) {
  const types = astToString(await openapiTS(document))
  return {
    'openapi.json': `${JSON.stringify(document, null, 2)}\n`,
    'src/schema.ts': `${HEADER}${types}${enumValues(document)}${ruleTypeForms(document)}`,
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { openApiDocument } = await import('../dist/openapi-document.js')
  for (const [path, text] of Object.entries(await clientFiles(await openApiDocument()))) {
    writeFileSync(new URL(path, CLIENT_DIR), text)
    process.stdout.write(`wrote clients/typescript/${path}\n`)
  }
}
