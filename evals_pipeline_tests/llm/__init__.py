"""Tests of the LLM client package, over real HTTP against the scripted model server."""
