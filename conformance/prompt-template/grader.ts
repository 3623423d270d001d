// A prompt template exactly as AgentV's docs write one: definePromptTemplate from @agentv/sdk,
// which reads the snake_case payload and hands it over camelCased (config keys too).
import { definePromptTemplate } from '@agentv/sdk';

export default definePromptTemplate((ctx) => {
  const question = ctx.input
    .filter((message) => message.role === 'user')
    .map((message) => (typeof message.content === 'string' ? message.content : ''))
    .join('\n');
  return [
    'TS-TEMPLATE',
    `Question: ${question}`,
    `Answer: ${ctx.output ?? ''}`,
    `Criteria: ${ctx.criteria}`,
    `Strict: ${ctx.config?.strictMode === true}`,
  ].join('\n');
});
