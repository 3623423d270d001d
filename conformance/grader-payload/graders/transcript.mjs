// The transcript and trace of a long session for TypeScript/JavaScript code graders.
//
// evals-pipeline sends `messages` and `trace` inline while their JSON stays within 50,000
// characters (AgentV's threshold for `output`); a longer session's transcript goes by file so the
// grader's stdin stays small. The AgentV SDK (`defineCodeGrader` from @agentv/eval or
// @agentv/sdk) drops payload keys it does not know, so the file paths also come by environment:
// EVALS_PIPELINE_MESSAGES_PATH and EVALS_PIPELINE_TRACE_PATH. These helpers return the inline
// value when there is one (always the case under AgentV itself), else read the file once, with
// keys in camelCase as the SDK gives them. No dependencies; copy this file next to your graders.
// A long session's files are written only for a grader with `messages_format: json` in the
// suite: set it on every grader that uses these helpers.
//
//   import { defineCodeGrader } from '@agentv/eval';
//   import { messagesOf, traceOf } from './transcript.mjs';
//
//   export default defineCodeGrader((input) => {
//     const messages = messagesOf(input);
//     ...
//   });

import { readFileSync } from 'node:fs';

const cache = new Map();

function toCamelCaseDeep(value) {
  // AgentV's toCamelCaseDeep: keys starting upper-case (tool names) stay as they are.
  if (Array.isArray(value)) return value.map(toCamelCaseDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      /^[A-Z]/.test(key) ? key : key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()),
      toCamelCaseDeep(item),
    ]),
  );
}

function readOnce(path) {
  if (!cache.has(path)) cache.set(path, toCamelCaseDeep(JSON.parse(readFileSync(path, 'utf8'))));
  return cache.get(path);
}

/** The transcript: `input.messages` when sent inline, else read from the pipeline's file. */
export function messagesOf(input) {
  const path = input?.messagesJsonPath ?? process.env.EVALS_PIPELINE_MESSAGES_PATH;
  if (input?.messages?.length || !path) return input?.messages ?? [];
  return readOnce(path);
}

/** The trace (summary, messages, events, metrics): inline when sent, else read from its file. */
export function traceOf(input) {
  const path = input?.tracePath ?? process.env.EVALS_PIPELINE_TRACE_PATH;
  if (input?.trace || !path) return input?.trace ?? null;
  return readOnce(path);
}
