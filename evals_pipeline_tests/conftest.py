"""Fixtures every test folder can use: the real servers of servers.py (started on request)."""

pytest_plugins = ["evals_pipeline_tests.servers"]
