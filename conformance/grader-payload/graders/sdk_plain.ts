// A TypeScript grader exactly as AgentV's docs write one: defineCodeGrader from @agentv/eval and
// the fields every payload carries inline (output read lazily by the SDK when file-backed).
import { defineCodeGrader } from '@agentv/eval';

export default defineCodeGrader(({ output, criteria, input, traceSummary, tokenUsage }) => {
  const counted = Object.values(traceSummary?.toolCalls ?? {}).reduce((a, b) => a + b, 0);
  const checks: Array<[string, boolean]> = [
    ['the answer says 42', (output ?? '').includes('42')],
    ['criteria given', criteria.length > 0],
    ['input given', input.length > 0],
    ['event_count is the tool calls', traceSummary?.eventCount === counted],
    ['at least one model turn', (traceSummary?.llmCallCount ?? 0) >= 1],
    ['token usage as reported, or none', tokenUsage == null || tokenUsage.input === 120],
  ];
  return {
    score: checks.filter(([, ok]) => ok).length / checks.length,
    assertions: checks.map(([text, passed]) => ({ text, passed })),
  };
});
