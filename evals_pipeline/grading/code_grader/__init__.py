"""Code graders: AgentV's stdin/stdout grader contract, its payload and the target proxy."""
