// A TypeScript grader on AgentV's SDK, unchanged: defineCodeGrader from @agentv/eval, camelCase
// fields, `output` read lazily from `output_path` by the SDK. The transcript comes through
// messagesOf (transcript.mjs, a copy of evals_pipeline/js/transcript.mjs): under AgentV it is
// `input.messages`; evals-pipeline sends a long session's transcript by file instead.
import { defineCodeGrader } from '@agentv/eval';
import { messagesOf, traceOf } from './transcript.mjs';

export default defineCodeGrader((input) => {
  const messages = messagesOf(input);
  const trace = traceOf(input);
  const output = input.output ?? '';
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  const summary = input.traceSummary;
  const checks: Array<[string, boolean]> = [
    ['output (lazy when file-backed) is the last turn', output.startsWith(String(messages.at(-1)?.content).slice(0, 40))],
    ['the transcript starts with the input', ['system', 'user'].includes(messages[0]?.role)],
    ['event_count counts tool calls', summary?.eventCount === calls.length],
    ['tool durations are lists', Object.values(summary?.toolDurations ?? {}).every(Array.isArray)],
    ['llm calls are assistant turns', summary?.llmCallCount === messages.filter((m) => m.role === 'assistant').length],
    ['trace has the same messages', JSON.stringify(trace?.messages) === JSON.stringify(messages)],
    ['trace ends with the final response', trace?.events.at(-1)?.type === 'final_response'],
    ['tool inputs arrive camelCase through the SDK', calls.every((c) => !('file_path' in (c.input ?? {})))],
    ['input files resolved', input.inputFiles.every((f) => f.startsWith('/'))],
    ['metadata keys converted', !input.metadata || !('suite_tag' in input.metadata)],
  ];
  const passed = checks.filter(([, ok]) => ok).length;
  return {
    score: passed / checks.length,
    assertions: checks.map(([text, ok]) => ({ text, passed: ok })),
  };
});
