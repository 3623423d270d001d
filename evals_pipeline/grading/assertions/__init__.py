"""The AgentV assertion types judged in-process (and custom types, run as code graders): one
evaluator module per spec module of models/assertions/ (same name), each registered with
`@evaluator` against its spec classes."""

from evals_pipeline.grading.assertions.file_changes import changed_files

__all__ = ["changed_files"]
