// What a JavaScript client of `reflexion serve` sees, through the official SDK: the errors a bad run
// context causes (from `runs.wait` and from a stream) and the answer a chat UI shows. Prints one JSON
// object for tests/test_langgraph_server.py to check. Usage: node client_views.mjs http://127.0.0.1:PORT
import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.argv[2] });
const question = { messages: [{ role: "user", content: "Which movies did Tom Hanks act in?" }] };

async function waitError(context) {
  const thread = await client.threads.create();
  try {
    await client.runs.wait(thread.thread_id, "kg_reflexion", { input: question, context });
    return null;
  } catch (error) {
    return String(error.message ?? error);
  }
}

async function streamed(context) {
  const thread = await client.threads.create();
  const errors = [];
  const said = new Map();
  const parts = client.runs.stream(thread.thread_id, "kg_reflexion", {
    input: question,
    context,
    streamMode: "messages-tuple",
  });
  for await (const part of parts) {
    if (part.event === "error") errors.push(`${part.data.error}: ${part.data.message}`);
    if (part.event === "messages") {
      const [message] = part.data;
      if (message.type === "ai" || message.type === "AIMessageChunk") {
        said.set(message.id, (said.get(message.id) ?? "") + (typeof message.content === "string" ? message.content : ""));
      }
    }
  }
  const shown = [...said.values()].filter((text) => text);
  return { errors, answer: shown.length ? shown[shown.length - 1] : null };
}

// As agent-chat-ui does it: the paused run's interrupt is LangGraph's human-in-the-loop request (the
// shape that UI and Agent Inbox draw with approve, edit and reject buttons), and the reply is
// `{decisions: [...]}` sent as the resume command of a stream.
async function approvedAsAChatClientDoes() {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "kg_reflexion", { input: question, context: { require_approval: true } });
  const state = await client.threads.getState(thread.thread_id);
  const request = state.tasks[0].interrupts[0].value;
  const drawnWithButtons =
    Array.isArray(request.action_requests) &&
    request.action_requests.length > 0 &&
    request.action_requests.every((r) => typeof r.name === "string" && r.args !== null && typeof r.args === "object") &&
    Array.isArray(request.review_configs) &&
    request.review_configs.every((c) => typeof c.action_name === "string" && Array.isArray(c.allowed_decisions));
  let last = null;
  const parts = client.runs.stream(thread.thread_id, "kg_reflexion", {
    command: { resume: { decisions: [{ type: "approve" }] } },
    streamMode: "values",
  });
  for await (const part of parts) {
    if (part.event === "values") last = part.data;
  }
  return {
    drawnWithButtons,
    allowed: request.review_configs[0].allowed_decisions,
    query: request.action_requests[0].args.query,
    stopReason: last?.stop_reason ?? null,
    rows: last?.rows ?? null,
  };
}

const views = {
  waitBadDatabaseUrl: await waitError({ database_url: "nosuchscheme://somewhere" }),
  waitUnknownField: await waitError({ foo: 1 }),
  streamMissingProvider: (await streamed({ model: "anthropic:claude-sonnet-4-5" })).errors,
  chat: (await streamed(undefined)).answer,
  approval: await approvedAsAChatClientDoes(),
};
console.log(JSON.stringify(views));
