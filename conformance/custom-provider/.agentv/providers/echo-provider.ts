// A custom provider, discovered by AgentV from .agentv/providers/<name>.ts: it reads the prompt
// file and writes the cli output contract ({"text": ...}) to the output file. Given only the
// prompt (AgentV's convention command), it has nowhere to write and says so on stderr.
import { readFileSync, writeFileSync } from 'node:fs';

const [promptArg, outputFile] = process.argv.slice(2);
const prompt = outputFile ? readFileSync(promptArg, 'utf8') : promptArg;
const answer = prompt.includes('capital of France') ? 'Paris is the capital.' : 'I do not know.';
if (outputFile) {
  writeFileSync(outputFile, JSON.stringify({ text: answer }));
} else {
  console.error('no output file given');
}
