import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/*
 * The SDK's types are written by hand; the OpenAPI document is the contract. For every schema the SDK exposes, the
 * TypeScript type must have the same properties, and a property is optional in the one exactly when it is not
 * required in the other. The document is read as data: the SDK imports nothing of the repository.
 */

/** Schema → the type of src/types.ts that presents it. */
const PAIRS: Record<string, string> = {
  // agents
  Agent: "Agent",
  AgentDeleted: "AgentDeleted",
  CreateAgentRequest: "AgentCreateParams",
  UpdateAgentRequest: "AgentUpdateParams",
  Pagination: "Pagination",
  // messages and history
  SendMessageRequest: "MessageStreamParams",
  Reply: "MessageReply",
  BackgroundMessageAccepted: "BackgroundMessageAccepted",
  ToolCallStarted: "ToolCallStarted",
  PendingToolCall: "PendingToolCall",
  ToolApprovalRequired: "ToolApprovalRequired",
  ApproveToolCallsRequest: "MessageApproveParams",
  MessageStarted: "MessageStarted",
  MessageDelta: "MessageDelta",
  StreamError: "StreamErrorData",
  CursorPagination: "CursorPagination",
  Conversation: "Conversation",
  ConversationDeleted: "ConversationDeleted",
  UserErased: "UserErased",
  // memories
  Memory: "Memory",
  CreateMemoryRequest: "MemoryCreateParams",
  // schedules
  Schedule: "Schedule",
  ScheduleFire: "ScheduleFire",
  CreateScheduleRequest: "ScheduleCreateParams",
  UpdateScheduleRequest: "ScheduleUpdateParams",
  // keys
  ApiKey: "ApiKey",
  CreateApiKeyRequest: "ApiKeyCreateParams",
  // members
  Member: "Member",
  InviteMemberRequest: "MemberInviteParams",
  UpdateMemberRequest: "MemberUpdateParams",
  // usage
  UsageReport: "UsageReport",
  UsageGroup: "UsageGroup",
  // webhooks
  Webhook: "WebhookEndpoint",
  CreateWebhookRequest: "WebhookEndpointCreateParams",
  UpdateWebhookRequest: "WebhookEndpointUpdateParams",
  AgentDeletedData: "AgentDeletedWebhookData",
  MessageFailedData: "MessageFailedWebhookData",
  MessageRequiresActionData: "MessageRequiresActionWebhookData",
  BudgetThresholdData: "BudgetThresholdWebhookData",
  // budgets
  Budget: "Budget",
  CreateBudgetRequest: "BudgetCreateParams",
  UpdateBudgetRequest: "BudgetUpdateParams",
  // characters
  CharacterFile: "CharacterFile",
  ExportedCharacterFile: "ExportedCharacterFile",
  // plugins
  Plugin: "Plugin",
  Secret: "Secret",
};

/** Properties of a schema the SDK sets itself, by the method called, never from a type. */
const SET_BY_METHOD: Record<string, string[]> = {
  // `stream` sends `stream: true`, `sendBackground` `background: true`; `send` neither.
  SendMessageRequest: ["stream", "background"],
};

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
}

const document = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as {
  components: { schemas: Record<string, Schema> };
};

function resolve(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace("#/components/schemas/", "");
  const found = document.components.schemas[name];
  if (!found) throw new Error(`${schema.$ref} is not in the document`);
  return resolve(found);
}

/** A property name → whether it is required, of a schema and the schemas it is all of. */
function schemaFields(schema: Schema): Map<string, boolean> {
  const resolved = resolve(schema);
  const fields = new Map<string, boolean>();
  for (const part of resolved.allOf ?? [])
    for (const [name, required] of schemaFields(part)) fields.set(name, required);
  for (const name of Object.keys(resolved.properties ?? {}))
    fields.set(name, resolved.required?.includes(name) ?? false);
  return fields;
}

const sourcePath = new URL("../src/types.ts", import.meta.url);
const source = ts.createSourceFile(
  "types.ts",
  readFileSync(sourcePath, "utf8"),
  ts.ScriptTarget.Latest,
  true,
);
const declarations = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>();
for (const statement of source.statements) {
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))
    declarations.set(statement.name.text, statement);
}

function memberFields(members: ts.NodeArray<ts.TypeElement>, fields: Map<string, boolean>): void {
  for (const member of members) {
    if (!ts.isPropertySignature(member)) continue;
    const name =
      ts.isIdentifier(member.name) || ts.isStringLiteral(member.name) ? member.name.text : undefined;
    if (!name) continue;
    // A property typed `never` is one the type says is absent, where an interface it extends has it.
    if (member.type?.kind === ts.SyntaxKind.NeverKeyword) fields.delete(name);
    else fields.set(name, member.questionToken === undefined);
  }
}

/** A property name → whether it is required, of a type of types.ts and the interfaces it extends there. */
function typeFields(name: string): Map<string, boolean> {
  const declaration = declarations.get(name);
  if (!declaration) throw new Error(`src/types.ts declares no ${name}`);
  const fields = new Map<string, boolean>();
  if (ts.isInterfaceDeclaration(declaration)) {
    for (const clause of declaration.heritageClauses ?? [])
      for (const base of clause.types) {
        if (!ts.isIdentifier(base.expression) || !declarations.has(base.expression.text)) continue;
        for (const [field, required] of typeFields(base.expression.text)) fields.set(field, required);
      }
    memberFields(declaration.members, fields);
  } else if (ts.isTypeLiteralNode(declaration.type)) {
    memberFields(declaration.type.members, fields);
  } else {
    throw new Error(`${name} is not an interface or an object type`);
  }
  return fields;
}

function describeFields(fields: Map<string, boolean>): Record<string, "required" | "optional"> {
  return Object.fromEntries(
    [...fields]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, required]) => [name, required ? "required" : "optional"]),
  );
}

describe("the hand-written types against the OpenAPI document", () => {
  for (const [schema, type] of Object.entries(PAIRS)) {
    it(`${type} has the properties of ${schema}, required alike`, () => {
      const component = document.components.schemas[schema];
      expect(component, `${schema} is in the document`).toBeDefined();
      const documented = schemaFields(component as Schema);
      for (const name of SET_BY_METHOD[schema] ?? []) documented.delete(name);
      expect(describeFields(typeFields(type))).toEqual(describeFields(documented));
    });
  }

  it("notices a property the document lacks and one whose required-ness differs", () => {
    const fields = typeFields("Agent");
    const drifted = new Map(fields);
    drifted.set("nickname", false);
    expect(describeFields(drifted)).not.toEqual(
      describeFields(schemaFields({ $ref: "#/components/schemas/Agent" })),
    );
    const flipped = new Map(fields);
    flipped.set("id", !flipped.get("id"));
    expect(describeFields(flipped)).not.toEqual(
      describeFields(schemaFields({ $ref: "#/components/schemas/Agent" })),
    );
  });
});
