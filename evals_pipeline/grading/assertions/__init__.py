"""The deterministic AgentV assertion types: one evaluator module per family of types."""
