"""The agent registry: one module per agent (or target provider) says everything per-agent
(its target model, adapter, stream parser and formats, tool names), and `registry` derives
every per-agent table from them, the target union suites are validated against included.
Adding an agent is one module: here with its line in `registry.BUILT_IN`, or in any installed
distribution under the `evals_pipeline.agents` entry point (docs/agents.md, "Adding an agent")."""
