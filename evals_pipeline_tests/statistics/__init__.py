"""Tests of the pure judging statistics against the judging.md vectors."""
