/**
 * The Ruby emitter: writes the models, enums, error-code table and resources of the `agentry` gem into
 * `sdks/ruby/lib/agentry/generated/`, on top of the gem's hand-written runtime (`Agentry::Model`,
 * `Agentry::Resource`, transport, pages, streams). Generated Ruby reads like hand-written Ruby: keyword arguments
 * in snake_case, YARD comments taken from the document, and models declared with `field`.
 */
import type { Emitter, GeneratedFile } from "./emitter.js";
import type {
  AnswerVariant,
  ApiModel,
  BodyForm,
  EnumType,
  Field,
  ObjectType,
  Operation,
  Parameter,
  Resource,
  TypeRef,
} from "./model.js";
import { ENTITY_TAG_HEADERS, hiddenBodyFields } from "./model.js";
import { constantCase, pascalCase, snakeCase, wrap } from "./text.js";

const OUTPUT_DIR = "ruby/lib/agentry/generated";
const HEADER = [
  "# frozen_string_literal: true",
  "",
  "# Generated from sdks/openapi.json by sdks/generator (src/ruby.ts) — do not edit.",
  "# Regenerate with: pnpm --filter @agentry/sdk-generator generate",
  "",
];
/** Comment lines stay within this width, indentation and `# ` included. */
const WIDTH = 116;

/**
 * Method names that differ from the model's: `send` would hide `Object#send`, which Ruby code (and its tooling)
 * relies on to call methods by name; `create` is what Ruby clients call sending a new message.
 */
const METHOD_NAMES: Record<string, string> = { send: "create" };
/** The method that streams an operation's server-sent events. */
const STREAM_METHOD = "stream";
/** Fields holding secrets: shown as `[REDACTED]` when a model is inspected, so they stay out of logs. */
const SENSITIVE_FIELDS = new Set(["ApiKeyCreated.key"]);
/** Methods every model has (`Agentry::Model`, `Object`): a field of one of these names would hide it. */
const MODEL_METHODS = new Set(
  (
    "class clone display dup eql? equal? extend fields freeze frozen? hash inspect instance_variables is_a? " +
    "method methods nil? object_id send public_send tap then to_h to_json to_s to_wire deconstruct_keys"
  ).split(" "),
);
/** Words Ruby would not accept as a plain local variable, so never as a keyword argument or reader. */
const RESERVED = new Set(
  (
    "alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or " +
    "redo rescue retry return self super then true undef unless until when while yield request_options"
  ).split(" "),
);

export const emitter: Emitter = {
  language: "ruby",
  outputDirs: [OUTPUT_DIR],
  emit(model: ApiModel): GeneratedFile[] {
    return [
      { path: `${OUTPUT_DIR}/api.rb`, contents: apiFile(model) },
      { path: `${OUTPUT_DIR}/models.rb`, contents: modelsFile(model) },
      { path: `${OUTPUT_DIR}/resources.rb`, contents: resourcesFile(model) },
    ];
  },
};

// ---------------------------------------------------------------------------------------------------------------
// api.rb: constants of the API as a whole.

function apiFile(model: ApiModel): string {
  const out = [...HEADER, "module Agentry"];
  out.push(`  # The version of the API description (${model.title}) this library was generated from.`);
  out.push(`  API_VERSION = ${str(model.version)}`);
  out.push("  # The address of a service started locally with its defaults.");
  out.push(`  DEFAULT_BASE_URL = ${str(model.defaultBaseUrl)}`);
  out.push("");
  out.push(
    "  # The HTTP status each public error code travels with; a stream's `error` event raises the error class",
  );
  out.push("  # of its code's status.");
  out.push("  ERROR_CODE_STATUS = {");
  const known = model.errorCodes.filter((entry) => entry.status !== undefined);
  known.forEach((entry, index) => {
    out.push(`    ${str(entry.code)} => ${entry.status}${index < known.length - 1 ? "," : ""}`);
  });
  out.push("  }.freeze");
  out.push("end");
  return lines(out);
}

// ---------------------------------------------------------------------------------------------------------------
// models.rb: enums as modules of constants, object types as `Agentry::Model` subclasses.

function modelsFile(model: ApiModel): string {
  const bodies = new Set(model.operations.flatMap((op) => (op.body ? [op.body.type] : [])));
  // A request body becomes the operation's keyword arguments; only types a response (or a part of a body) uses
  // are classes.
  const types = model.types.filter((type) => type.usage.output || !bodies.has(type.name));
  const out = [...HEADER, "module Agentry", "  # The API's models and enums.", "  module Models"];
  const blocks = [...model.enums.map(enumBlock), ...types.map(modelBlock)];
  blocks.forEach((block, index) => {
    if (index > 0) out.push("");
    out.push(...block.map((line) => (line === "" ? "" : `    ${line}`)));
  });
  out.push("  end", "end");
  return lines(out);
}

function enumBlock(type: EnumType): string[] {
  const out = comment(type.description ?? `The ${type.name} values.`, 0);
  out.push(`module ${type.name}`);
  const names = type.values.map((value) => enumConstant(value));
  if (new Set(names).size !== names.length) throw new Error(`ruby: enum ${type.name} has clashing constants`);
  type.values.forEach((value, index) => {
    out.push(`  ${names[index]} = ${str(value)}`);
  });
  out.push("  # Every value.");
  out.push(...indent(wrapSignature("ALL = [", names, "].freeze"), 2));
  out.push("end");
  return out;
}

function enumConstant(value: string): string {
  const name = constantCase(value);
  if (name === "") throw new Error(`ruby: enum value ${JSON.stringify(value)} has no letters or digits`);
  return /^[0-9]/.test(name) ? `V_${name}` : name;
}

function modelBlock(type: ObjectType): string[] {
  const out = comment(type.description ?? `The ${type.name} object.`, 0);
  if (type.additionalProperties !== undefined) {
    out.push("#");
    out.push(
      ...comment(
        "Keys besides the fields below are kept under their JSON names as Symbols: read them with `model[:key]`; `to_h` and `to_wire` include them.",
        0,
      ),
    );
  }
  out.push(`class ${type.name} < Agentry::Model`);
  type.fields.forEach((field, index) => {
    if (index > 0) out.push("");
    out.push(...indent(fieldBlock(type, field), 2));
  });
  out.push("end");
  return out;
}

function fieldBlock(type: ObjectType, field: Field): string[] {
  // A model takes its fields as a Hash (`**attributes`) and reads them as methods, so a keyword such as `end` is
  // a fine field name (Range#end is one); only method parameters must avoid keywords.
  const name = methodName(snakeCase(field.name), `${type.name}.${field.name}`);
  if (MODEL_METHODS.has(name))
    throw new Error(`ruby: ${type.name}.${field.name} would hide the models' ${name} method`);
  const out = [`# @!attribute [r] ${name}`];
  const text = [field.description ?? "", enumNote(field.type)].filter((part) => part !== "").join(" ");
  if (text !== "") out.push(...comment(text, 2));
  out.push(`#   @return [${yardType(field.type, "Models")}]`);
  const options = [
    field.required ? "required: true" : "",
    SENSITIVE_FIELDS.has(`${type.name}.${field.name}`) ? "sensitive: true" : "",
  ]
    .filter((option) => option !== "")
    .map((option) => `, ${option}`)
    .join("");
  out.push(`field :${name}, ${str(field.name)}, ${rubyType(field.type)}${options}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// resources.rb: one class per resource, one method per operation (two for a streaming one).

function resourcesFile(model: ApiModel): string {
  const out = [
    ...HEADER,
    "module Agentry",
    "  # The API's resources, as `client.agents`, `client.agents.messages`, ...",
    "  module Resources",
  ];
  const top = model.resources.filter((resource) => resource.path.length === 1);
  out.push("    # The resources a client offers (included by Agentry::Client).");
  out.push("    module Accessors");
  top.forEach((resource, index) => {
    if (index > 0) out.push("");
    out.push(...indent(accessor(resource), 6));
  });
  out.push("    end");
  for (const resource of top) {
    out.push("");
    out.push(...indent(resourceClass(model, resource), 4));
  }
  out.push("  end", "end");
  return lines(out);
}

function className(resource: Resource): string {
  return pascalCase(resource.path[resource.path.length - 1] ?? "");
}

function accessor(resource: Resource): string[] {
  const name = snakeCase(resource.path[resource.path.length - 1] ?? "");
  const out = comment(resource.description ?? `The ${name} resource.`, 0);
  out.push(`# @return [${resource.path.map((segment) => pascalCase(segment)).join("::")}]`);
  out.push(`def ${name}`);
  out.push(`  @${name} ||= ${className(resource)}.new(@transport)`);
  out.push("end");
  return out;
}

function resourceClass(model: ApiModel, resource: Resource): string[] {
  const out = comment(resource.description ?? `The ${className(resource)} resource.`, 0);
  out.push(`class ${className(resource)} < Agentry::Resource`);
  const members: string[][] = [];
  const operations = model.operations.filter((op) => op.resource.join(".") === resource.path.join("."));
  for (const op of operations) {
    if (op.streaming !== undefined) members.push(eventsConstant(op));
  }
  for (const childPath of resource.children) {
    const child = model.resources.find((r) => r.path.join(".") === childPath.join("."));
    if (child !== undefined) members.push(accessor(child));
  }
  for (const op of operations) {
    members.push(operationMethod(model, op, false));
    if (op.streaming !== undefined) members.push(operationMethod(model, op, true));
    for (const form of op.bodyForms) members.push(operationMethod(model, op, false, { form }));
    for (const variant of op.variants) {
      members.push(operationMethod(model, op, false, { variant }));
      if (variant.wait !== undefined) members.push(waitMethod(op, variant));
    }
  }
  for (const childPath of resource.children) {
    const child = model.resources.find((r) => r.path.join(".") === childPath.join("."));
    if (child !== undefined) members.push(resourceClass(model, child));
  }
  members.forEach((member, index) => {
    if (index > 0) out.push("");
    out.push(...indent(member, 2));
  });
  out.push("end");
  return out;
}

function eventsConstant(op: Operation): string[] {
  const events = op.streaming?.events ?? [];
  const out = comment(
    `The events \`${STREAM_METHOD}\` yields (\`${op.operationId}\` with \`${op.streaming?.parameter}: true\`), with the type of their data.`,
    0,
  );
  out.push(`${constantCase(op.operationId)}_EVENTS = {`);
  events.forEach((event, index) => {
    out.push(`  ${str(event.name)} => ${rubyType(event.data)}${index < events.length - 1 ? "," : ""}`);
  });
  out.push("}.freeze");
  return out;
}

/** A keyword argument of a method: a body field or a query parameter. */
interface Keyword {
  ruby: string;
  wire: string;
  type: TypeRef;
  required: boolean;
  description: string | undefined;
  /** `nil` is a value to send (`null` resets the field), so leaving it out is `Agentry::OMIT`. */
  nilIsValue: boolean;
  serverDefault: string | number | boolean | undefined;
}

/** The Ruby name of a method of the model: `send` is `create`, and `sendBackground` `create_background`. */
function rubyMethodName(op: Operation, name: string): string {
  const renamed = METHOD_NAMES[op.name];
  if (renamed !== undefined && name.startsWith(op.name))
    return snakeCase(renamed + name.slice(op.name.length));
  return METHOD_NAMES[name] ?? snakeCase(name);
}

/** What a method is beside the operation's own: one of its body forms, or a reader of an answer variant. */
interface Special {
  form?: BodyForm;
  variant?: AnswerVariant;
}

/** The method that waits while an answer variant is pending (`wait_for_background`). */
function waitMethod(op: Operation, variant: AnswerVariant): string[] {
  const wait = variant.wait!;
  const read = rubyMethodName(op, variant.name);
  const positional = op.pathParameters.map((param) => identifier(snakeCase(param.name), op.operationId));
  const pending = Object.entries(wait.pending)
    .map(([field, value]) => `${snakeCase(field)}: ${str(value)}`)
    .join(", ");
  const described = Object.entries(wait.pending)
    .map(([field, value]) => `\`${snakeCase(field)}\` is ${str(value)}`)
    .join(" and ");
  const out = comment(
    `Waits until the ${yardType(variant.data, "")} is no longer pending, and returns it: reads it with \`${read}\` while ${described}, pausing \`poll_interval\` seconds at first and twice as long each time (at most 5 seconds). Each read is retried like any call.`,
    0,
  );
  out.push("#");
  for (const param of op.pathParameters) {
    out.push(...tag(`@param ${snakeCase(param.name)} [String] ${param.description ?? ""}`.trimEnd()));
  }
  out.push(
    ...tag("@param poll_interval [Numeric] seconds before the first read again. Default 0.5."),
    ...tag(
      "@param max_wait [Numeric] seconds to wait in all before raising Agentry::APITimeoutError (the message goes on; read it again later). Default 600.",
    ),
    ...tag(
      "@param request_options [Hash, nil] each read's `timeout:` (seconds), `max_retries:` and extra `headers:`.",
    ),
    `# @return [${yardType(variant.data, "")}]`,
    "# @raise [Agentry::APITimeoutError] still pending after `max_wait`",
  );
  out.push(
    ...wrapSignature(
      `def ${rubyMethodName(op, wait.name)}(`,
      [
        ...positional,
        "poll_interval: Agentry::Polling::DEFAULT_POLL_INTERVAL",
        "max_wait: Agentry::Polling::DEFAULT_MAX_WAIT",
        "request_options: nil",
      ],
      ")",
    ),
  );
  const call = wrapSignature(
    "Agentry::Polling.until_done(",
    [`pending: { ${pending} }`, "poll_interval: poll_interval", "max_wait: max_wait"],
    ") do",
  );
  out.push(
    ...indent(call, 2),
    `    ${read}(${[...positional, "request_options: request_options"].join(", ")})`,
    "  end",
    "end",
  );
  return out;
}

function operationMethod(
  model: ApiModel,
  op: Operation,
  streaming: boolean,
  special: Special = {},
): string[] {
  const where = op.operationId;
  const bodyType =
    op.body === undefined ? undefined : model.types.find((type) => type.name === op.body?.type);
  if (op.body !== undefined && bodyType === undefined)
    throw new Error(`ruby: ${where}: no type ${op.body.type}`);
  const bodyFields = (bodyType?.fields ?? []).filter((field) => !hiddenBodyFields(op).includes(field.name));
  const keywords: Keyword[] = [
    ...bodyFields.map((field) => ({
      ruby: identifier(snakeCase(field.name), `${where}.${field.name}`),
      wire: field.name,
      type: field.type,
      required: field.required,
      description: field.description,
      nilIsValue: field.type.kind === "nullable",
      serverDefault: undefined,
    })),
    ...op.queryParameters.map((param) => ({
      // A query parameter named like a Ruby keyword (`until`) takes a trailing underscore: `until_:`.
      ruby: identifier(unreserved(snakeCase(param.name)), `${where}.${param.name}`),
      wire: param.name,
      type: param.type,
      required: param.required,
      description: param.description,
      nilIsValue: false,
      serverDefault: param.default,
    })),
    ...op.headerParameters.map((param) => ({
      ruby: identifier(snakeCase(param.name.replace(/-/g, "")), `${where}.${param.name}`),
      wire: param.name,
      type: param.type,
      required: false,
      description: ENTITY_TAG_HEADERS.has(param.name.toLowerCase())
        ? `${param.description ?? ""} Takes the ETag as answered, or the agent's \`updated_at\`.`.trim()
        : param.description,
      nilIsValue: false,
      serverDefault: undefined,
    })),
  ];
  const positional = op.pathParameters.map((param) =>
    identifier(snakeCase(param.name), `${where}.${param.name}`),
  );
  const bodyArgument =
    op.bodyArgument === undefined
      ? undefined
      : identifier(snakeCase(op.bodyArgument.name), `${where}.${op.bodyArgument.name}`);
  if (bodyArgument !== undefined) positional.push(bodyArgument);
  const lines = op.ndjson;
  const names = [...positional, ...keywords.map((keyword) => keyword.ruby)];
  if (new Set(names).size !== names.length) throw new Error(`ruby: ${where} has clashing argument names`);

  const { form, variant } = special;
  const methodName = streaming ? STREAM_METHOD : rubyMethodName(op, form?.name ?? variant?.name ?? op.name);
  const out = methodDoc(op, streaming, op.pathParameters, keywords, special);
  const signature = [
    ...positional,
    ...keywords.map((k) =>
      k.required ? `${k.ruby}:` : `${k.ruby}: ${k.nilIsValue ? "Agentry::OMIT" : "nil"}`,
    ),
    "request_options: nil",
    ...(streaming || lines ? ["&block"] : []),
  ];
  out.push(...wrapSignature(`def ${methodName}(`, signature, ")"));

  const body: string[] = [];
  const bodyKeywords = keywords.filter((k) => bodyFields.some((field) => field.name === k.wire));
  const queryKeywords = keywords.filter((k) => op.queryParameters.some((param) => param.name === k.wire));
  if (op.body !== undefined) {
    body.push("body = {}");
    for (const k of bodyKeywords) {
      const condition = k.required
        ? ""
        : k.nilIsValue
          ? ` unless ${k.ruby}.equal?(Agentry::OMIT)`
          : ` unless ${k.ruby}.nil?`;
      body.push(`body[${str(k.wire)}] = ${k.ruby}${condition}`);
    }
    if (streaming && op.streaming !== undefined) body.push(`body[${str(op.streaming.parameter)}] = true`);
    for (const [name, value] of Object.entries(form?.whenBody ?? {})) {
      body.push(`body[${str(name)}] = ${typeof value === "boolean" ? String(value) : str(value)}`);
    }
  }
  if (queryKeywords.length > 0) {
    body.push(
      ...wrapSignature(
        "query = {",
        queryKeywords.map((k) => `${str(k.wire)} => ${k.ruby}`),
        "}",
      ),
    );
  }
  const headerKeywords = keywords.filter((k) => op.headerParameters.some((param) => param.name === k.wire));
  if (headerKeywords.length > 0) {
    body.push(
      ...wrapSignature(
        "request_options = with_headers(request_options, { ",
        headerKeywords.map((k) =>
          ENTITY_TAG_HEADERS.has(k.wire.toLowerCase())
            ? `${str(k.wire)} => entity_tag(${k.ruby})`
            : `${str(k.wire)} => ${k.ruby}`,
        ),
        " })",
      ),
    );
  }
  const path = pathExpression(op);
  const method = `:${op.method.toLowerCase()}`;
  if (streaming) {
    body.push(
      ...wrapSignature(
        "api_stream(",
        [
          method,
          path,
          "body: body",
          `events: ${constantCase(op.operationId)}_EVENTS`,
          "options: request_options",
          "&block",
        ],
        ")",
      ),
    );
  } else if (lines) {
    const args = [method, path, `type: ${rubyType(op.response.data)}`];
    if (queryKeywords.length > 0) args.push("query: query");
    args.push("options: request_options", "&block");
    body.push(...wrapSignature("api_lines(", args, ")"));
  } else if (op.cursorPagination !== undefined) {
    const p = op.cursorPagination;
    body.push("api_cursor_paginate(");
    body.push(`  ${path},`);
    body.push(`  query: ${queryKeywords.length > 0 ? "query" : "{}"},`);
    body.push(
      `  pagination: { before_parameter: ${str(p.beforeParameter)}, after_parameter: ${str(p.afterParameter)}, ` +
        `order_parameter: ${p.orderParameter === undefined ? "nil" : str(p.orderParameter)},`,
    );
    body.push(
      `                items_field: ${str(p.itemsField)}, info_field: ${str(p.pageInfoField)}, ` +
        `has_more_field: ${str(p.hasMoreField)}, cursor_field: ${str(p.cursorField)},`,
    );
    body.push(`                item_type: ${rubyType(p.item)}, info_type: ${rubyType(p.pageInfo)} },`);
    body.push("  options: request_options");
    body.push(")");
  } else if (op.pagination !== undefined) {
    const p = op.pagination;
    body.push("api_paginate(");
    body.push(`  ${path},`);
    body.push(`  query: ${queryKeywords.length > 0 ? "query" : "{}"},`);
    body.push(
      `  pagination: { page_parameter: ${str(p.pageParameter)}, items_field: ${str(p.itemsField)}, ` +
        `info_field: ${str(p.pageInfoField)},`,
    );
    body.push(
      `                has_more_field: ${str(p.hasMoreField)}, item_type: ${rubyType(p.item)}, info_type: ${rubyType(p.pageInfo)} },`,
    );
    body.push("  options: request_options");
    body.push(")");
  } else if (variant !== undefined) {
    const args = [
      method,
      path,
      `type: ${rubyType(variant.data)}`,
      `marker: ${str(variant.marker)}`,
      `main_method: ${str(rubyMethodName(op, op.name))}`,
      "options: request_options",
    ];
    body.push(...wrapSignature("api_variant_request(", args, ")"));
  } else if (form !== undefined) {
    const args = [method, path, `type: ${rubyType(form.data)}`, "body: body", "options: request_options"];
    if (form.field === undefined) args.push("field: nil");
    if (form.dataAs !== undefined) args.push(`data_as: ${str(form.dataAs)}`);
    body.push(...wrapSignature("api_request(", args, ")"));
  } else {
    let type = rubyType(op.response.data);
    for (const alternative of [...op.alternatives].reverse()) {
      if (alternative.field !== op.response.field || alternative.dataAs !== op.response.dataAs) {
        throw new Error(`ruby: ${where}: an alternative answer is read from elsewhere in the body`);
      }
      const test = Object.entries(alternative.whenQuery)
        .map(([name, value]) => `${snakeCase(name)} == ${typeof value === "boolean" ? value : str(value)}`)
        .join(" && ");
      type = `${test} ? ${rubyType(alternative.data)} : ${type}`;
    }
    if (op.alternatives.length > 0) body.push(`type = ${type}`);
    const args = [method, path, `type: ${op.alternatives.length > 0 ? "type" : type}`];
    if (queryKeywords.length > 0) args.push("query: query");
    if (op.body !== undefined) args.push("body: body");
    if (bodyArgument !== undefined)
      args.push(`body: json_object_argument(:${bodyArgument}, ${bodyArgument})`);
    args.push("options: request_options");
    if (op.response.field === undefined) args.push("field: nil");
    if (op.response.dataAs !== undefined) args.push(`data_as: ${str(op.response.dataAs)}`);
    body.push(...wrapSignature("api_request(", args, ")"));
  }
  out.push(...indent(body, 2));
  out.push("end");
  return out;
}

/** The path as a Ruby string literal, each parameter escaped as one segment by `Agentry::Resource#path_segment`. */
function pathExpression(op: Operation): string {
  const parts = op.path.split(/\{([^}]+)\}/);
  return `"${parts
    .map((part, index) =>
      index % 2 === 0 ? str(part).slice(1, -1) : `#{path_segment(:${snakeCase(part)}, ${snakeCase(part)})}`,
    )
    .join("")}"`;
}

function methodDoc(
  op: Operation,
  streaming: boolean,
  pathParameters: Parameter[],
  keywords: Keyword[],
  special: Special = {},
): string[] {
  const out: string[] = [];
  const summary = op.summary ?? op.operationId;
  const main = rubyMethodName(op, op.name);
  if (special.form !== undefined) {
    const sent = Object.entries(special.form.whenBody)
      .map(([name, value]) => `\`${name}: ${String(value)}\``)
      .join(" and ");
    const what = (special.form.description ?? "").replace(/^With `[^`]*`: /, "");
    out.push(
      ...comment(`${summary}, sending ${sent}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`, 0),
      "#",
      ...comment(`Returns the ${special.form.status} answer. Otherwise as \`${main}\`:`, 0),
    );
  } else if (special.variant !== undefined) {
    out.push(
      ...comment(`${summary}, as a ${yardType(special.variant.data, "")}.`, 0),
      "#",
      ...comment(
        `Raises Agentry::Error when the answer is not one (it has no \`${snakeCase(special.variant.marker)}\`): read that with \`${main}\`.`,
        0,
      ),
    );
  } else {
    out.push(
      ...comment(streaming ? `${summary}, streaming the reply as server-sent events.` : `${summary}.`, 0),
    );
  }
  if (op.description !== undefined) {
    out.push("#", ...comment(op.description, 0));
  }
  if (special.form === undefined && special.variant === undefined && !streaming) {
    for (const form of op.bodyForms) {
      const sent = Object.entries(form.whenBody)
        .map(([name, value]) => `\`${name}: ${String(value)}\``)
        .join(" and ");
      out.push("#", ...comment(`For the answer to ${sent}, call \`${rubyMethodName(op, form.name)}\`.`, 0));
    }
    for (const variant of op.variants) {
      const wait = variant.wait ? `, or wait for it with \`${rubyMethodName(op, variant.wait.name)}\`` : "";
      out.push(
        "#",
        ...comment(
          `An answer with \`${snakeCase(variant.marker)}\` is a ${yardType(variant.data, "")}: read it with \`${rubyMethodName(op, variant.name)}\`${wait}.`,
          0,
        ),
      );
    }
  }
  if (streaming) {
    out.push("#");
    out.push(
      ...comment(
        "Without a block, returns an Agentry::MessageStream, read when you iterate it (or call `text` / " +
          "`final_message`). With a block, reads the stream at once, yields each event, and returns the completed " +
          "reply (`nil` when the block leaves early). Leaving the loop early closes the connection. A failure " +
          "before the stream starts is retried as for the call without streaming; once started, a stream is never " +
          "retried. The events:",
        0,
      ),
    );
    for (const event of op.streaming?.events ?? []) {
      const data = event.data.kind === "ref" ? ` (data: Models::${event.data.name})` : "";
      const text = event.description ?? "";
      out.push(...bullet(`\`${event.name}\`${data}: ${text}`));
    }
  }
  if (op.ndjson) {
    out.push("#");
    out.push(
      ...comment(
        "Without a block, returns an Agentry::NDJSONStream, read line by line when you iterate it. With a block, " +
          "reads it at once, yielding each item. Leaving the loop early closes the connection. Once started, the " +
          "answer is never retried: one cut short raises Agentry::APIConnectionError after the items that arrived " +
          "whole.",
        0,
      ),
    );
  }
  for (const alternative of op.alternatives) {
    const when = Object.entries(alternative.whenQuery)
      .map(([name, value]) => `\`${snakeCase(name)}: ${String(value)}\``)
      .join(" and ");
    out.push("#", ...comment(`With ${when} it returns a ${yardType(alternative.data, "")} instead.`, 0));
  }
  out.push("#", ...comment(retryNote(op), 0));
  out.push("#");
  for (const param of pathParameters) {
    out.push(...tag(`@param ${snakeCase(param.name)} [String] ${param.description ?? ""}`.trimEnd()));
  }
  if (op.bodyArgument !== undefined) {
    out.push(
      ...tag(
        `@param ${snakeCase(op.bodyArgument.name)} [Hash, String, Pathname] ${op.bodyArgument.description ?? ""} A String or Pathname is the path of a JSON file holding it, which is read and sent as it is.`.trimEnd(),
      ),
    );
  }
  for (const k of keywords) {
    const parts = [k.description ?? ""];
    if (k.nilIsValue) parts.push("`nil` sends `null`; leave it out to keep the current value.");
    if (k.serverDefault !== undefined) parts.push(`Server default: \`${String(k.serverDefault)}\`.`);
    const note = enumNote(k.type);
    if (note !== "") parts.push(note);
    const text = parts.filter((part) => part !== "").join(" ");
    out.push(...tag(`@param ${k.ruby} [${inputYardType(k.type)}] ${text}`.trimEnd()));
  }
  out.push(
    ...tag(
      op.idempotencyKey
        ? "@param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:`, extra `headers:`, and " +
            "`idempotency_key:`, the `Idempotency-Key` sent on each of its attempts instead of a new random one."
        : "@param request_options [Hash, nil] this call's `timeout:` (seconds), `max_retries:` and extra `headers:`.",
    ),
  );
  if (streaming) {
    out.push("# @yieldparam event [Agentry::StreamEvent] each event, in order");
    const final = op.streaming?.events.find((event) => event.terminal && event.name !== "error");
    const finalType = final ? yardType(final.data, "") : "Object";
    out.push(`# @return [Agentry::MessageStream, ${finalType}, nil]`);
  } else if (op.ndjson) {
    out.push(`# @yieldparam item [${yardType(op.response.data, "")}] each item, in order`);
    out.push(`# @return [Agentry::NDJSONStream<${yardType(op.response.data, "")}>]`);
  } else if (op.pagination !== undefined) {
    out.push(
      `# @return [Agentry::Page<${yardType(op.pagination.item, "")}>] the first page asked for; enumerating it walks every page`,
    );
  } else if (op.cursorPagination !== undefined) {
    out.push(
      `# @return [Agentry::CursorPage<${yardType(op.cursorPagination.item, "")}>] the first page asked for; enumerating it walks every page`,
    );
  } else if (special.form !== undefined || special.variant !== undefined) {
    out.push(`# @return [${yardType((special.form ?? special.variant)!.data, "")}]`);
  } else {
    const types = [op.response, ...op.alternatives].map((r) => yardType(r.data, ""));
    out.push(`# @return [${types.join(", ")}]`);
  }
  for (const error of op.errors) {
    const codes = error.codes.length > 0 ? ` ${error.codes.map((code) => `\`${code}\``).join(", ")}` : "";
    out.push(...tag(`@raise [Agentry::${errorClass(error.status)}] ${error.status}${codes}`));
  }
  if (special.variant !== undefined) out.push("# @raise [Agentry::Error] an answer of another type");
  return out;
}

function retryNote(op: Operation): string {
  return op.idempotencyKey
    ? "Sent with an `Idempotency-Key` (a new random one per call, the same on each of its retries), so it is " +
        "retried like a read, on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`; " +
        "`IDEMPOTENCY_KEY_IN_USE` after its `Retry-After`), 429 and 5xx: a retry after a lost answer gets that " +
        "answer, and the request runs once."
    : "Retried on connection errors, timeouts, 408, 409 (but `AGENT_INACTIVE`), 429 and 5xx: sending it again " +
        "has the same effect.";
}

/** The error class the Ruby runtime raises for a status (`Agentry::Errors.class_for`). */
function errorClass(status: number): string {
  if ([400, 405, 413, 415, 422].includes(status)) return "BadRequestError";
  if (status === 401) return "AuthenticationError";
  if (status === 403) return "PermissionDeniedError";
  if (status === 404) return "NotFoundError";
  if (status === 409 || status === 412) return "ConflictError";
  if (status === 429) return "RateLimitError";
  if (status >= 500) return "InternalServerError";
  return "APIError";
}

// ---------------------------------------------------------------------------------------------------------------
// Types.

/** How `Agentry::Model::Types` converts a value of this type (see lib/agentry/model.rb). */
function rubyType(type: TypeRef): string {
  switch (type.kind) {
    case "string":
      return type.format === "date-time" ? ":time" : ":string";
    case "enum":
      return ":string";
    case "integer":
      return ":integer";
    case "number":
      return ":number";
    case "boolean":
      return ":boolean";
    case "literal":
      return typeof type.value === "boolean"
        ? ":boolean"
        : typeof type.value === "number"
          ? ":number"
          : ":string";
    case "array":
      return `[:array, ${rubyType(type.items)}]`;
    case "map":
      return type.values.kind === "json" ? ":json" : `[:map, ${rubyType(type.values)}]`;
    case "json":
      return ":json";
    case "ref":
      return str(type.name);
    case "nullable":
      return `[:nullable, ${rubyType(type.inner)}]`;
    case "union": {
      const keys = type.keys;
      if (keys !== undefined)
        return `[:keyed, ${type.variants.map((v, i) => `[${str(keys[i]!)}, ${rubyType(v)}]`).join(", ")}]`;
      return `[:union, ${type.variants.map(rubyType).join(", ")}]`;
    }
  }
}

/** The YARD type of a value read from the API; `namespace` prefixes model names (`Models`), or `""` inside it. */
function yardType(type: TypeRef, namespace: string): string {
  const prefix = namespace === "" ? "Models::" : "";
  switch (type.kind) {
    case "string":
      return type.format === "date-time" ? "Time" : "String";
    case "enum":
      return "String";
    case "integer":
      return "Integer";
    case "number":
      return "Numeric";
    case "boolean":
      return "Boolean";
    case "literal":
      return JSON.stringify(type.value);
    case "array":
      return `Array<${yardType(type.items, namespace)}>`;
    case "map":
      return `Hash{Symbol => ${type.values.kind === "json" ? "Object" : yardType(type.values, namespace)}}`;
    case "json":
      return "Object";
    case "ref":
      return `${prefix}${type.name}`;
    case "nullable":
      return `${yardType(type.inner, namespace)}, nil`;
    case "union":
      return type.variants.map((variant) => yardType(variant, namespace)).join(", ");
  }
}

/** The YARD type of an argument: models may be given as Hashes, timestamps as Times or strings. */
function inputYardType(type: TypeRef): string {
  switch (type.kind) {
    case "string":
      return type.format === "date-time" ? "Time, String" : "String";
    case "enum":
      return "String, Symbol";
    case "array":
      return `Array<${inputYardType(type.items)}>`;
    case "map":
      return `Hash{String, Symbol => ${type.values.kind === "json" ? "Object" : inputYardType(type.values)}}`;
    case "ref":
      return `Models::${type.name}, Hash`;
    case "nullable":
      return `${inputYardType(type.inner)}, nil`;
    case "union":
      return type.variants.map(inputYardType).join(", ");
    default:
      return yardType(type, "");
  }
}

/** For a field holding an enum: the values it takes, and the module naming them. */
function enumNote(type: TypeRef): string {
  const inner = type.kind === "nullable" ? type.inner : type.kind === "array" ? type.items : type;
  if (inner.kind !== "enum") return "";
  const values = inner.values.map((value) => `\`${value}\``).join(", ");
  return `One of ${values}${inner.enumName ? ` (Models::${inner.enumName})` : ""}.`;
}

// ---------------------------------------------------------------------------------------------------------------
// Text.

function methodName(name: string, where: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`ruby: ${where} would be the Ruby name '${name}'`);
  return name;
}

function unreserved(name: string): string {
  return RESERVED.has(name) ? `${name}_` : name;
}

function identifier(name: string, where: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name) || RESERVED.has(name)) {
    throw new Error(`ruby: ${where} would be the Ruby name '${name}', which cannot be a keyword argument`);
  }
  return name;
}

/** A Ruby string literal. JSON's escapes are Ruby's, except `#{`, which Ruby would interpolate. */
function str(value: string): string {
  return JSON.stringify(value).replace(/#(?=[{$@])/g, "\\#");
}

/** `text` as `#` comment lines, `depth` more spaces in, wrapped so that nested code stays within the width. */
function comment(text: string, depth: number): string[] {
  const pad = " ".repeat(depth);
  return wrap(text, WIDTH - 16 - depth).map((line) => (line === "" ? "#" : `#${pad} ${line}`));
}

/** A list item, its wrapped lines aligned under its text. */
function bullet(text: string): string[] {
  return comment(text, 2).map((line, index) => (index === 0 ? line.replace(/^# {3}/, "# - ") : line));
}

/** A YARD tag or list item: its first line as is, the lines it wraps onto two spaces in, as YARD reads them. */
function tag(text: string): string[] {
  return comment(text, 0).map((line, index) => (index === 0 ? line : line.replace(/^# /, "#   ")));
}

/** `open` + items separated by commas + `close`, on one line when it fits, else one item per line. */
function wrapSignature(open: string, items: string[], close: string): string[] {
  const single = `${open}${items.join(", ")}${close}`;
  if (single.length <= WIDTH - 12) return [single];
  return [open, ...items.map((item, index) => `  ${item}${index < items.length - 1 ? "," : ""}`), close];
}

function indent(block: string[], spaces: number): string[] {
  const pad = " ".repeat(spaces);
  return block.map((line) => (line === "" ? "" : `${pad}${line}`));
}

function lines(out: string[]): string {
  return `${out.join("\n")}\n`;
}
