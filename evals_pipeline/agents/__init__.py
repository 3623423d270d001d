"""The agent registry: one module per agent (or target provider) says everything per-agent
(its target model, adapter, stream parser and formats, tool names), and `registry` derives
every per-agent table from them. Adding an agent is one module here and its line in
`registry.AGENTS` (docs/agents.md, "Adding an agent")."""
