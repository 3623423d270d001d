"""The result store: each (case, agent)'s run, session and grade, written the moment it is done.

It makes a run durable per case (a crash loses only the cases in flight) and is the result
cache: a record whose key (results/keys.py) is unchanged is reused instead of recomputed. Files
live under `<storage root>/<suite>/results/<agent>/<case>/`. A run's, session's or grade's JSON
is written once, in a file named by its digest (`record_file`); the cache is an index over
those files, one small entry per record named by its kind and key that points at its file, and
a run's record tables point at the same files (storage/records.py) rather than copy them.
Entries and files are written atomically, so concurrent writers of the same key cannot tear them.
Failed runs and errored grades are stored (nothing is lost) but never reused: a retry runs them.
Each trial's grade is stored on its own (kind `trial`): a case's grade is aggregated again from
them on every run, so how trials add up (`trials.strategy`, `cost_limit_usd`) is never stale.
A run's workspace deleted by clean-up is kept beside its run (`workspace-<run key>.tar.gz`, with
a `state` note: workspaces/final_state.py), so a re-grade reading the workspace restores it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.models.stored import StoredPath, StoredRecord
from evals_pipeline.process import now_ms
from evals_pipeline.secrets import run_redactor
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline.workspaces.final_state import KeptState, archive_workspace, max_state_bytes

if TYPE_CHECKING:
    from evals_pipeline.judging.panel import TrialVotes

STORE_FORMAT = 3
"""The stored envelope's format (3: a run's, session's or grade's record in a file of its own,
`record_path`, where format 2 held it inline, as trials, votes and workspace notes still are;
2: the record's paths relative to the storage root; 1 held absolute paths or storage URIs,
which still resolve). Older formats read unchanged; a newer one is a miss, never misread."""

RECORD_FILE = "record-"
"""How the name of a record's own file begins (`record-<digest>.json`)."""

Kind = Literal["run", "session", "grade", "trial", "votes", "state"]
R = TypeVar("R", AgentRun, Session, CaseGrade)


@functools.cache
def _votes() -> TypeAdapter[TrialVotes]:
    """Votes' adapter, made on first use: the judging package (~0.2 s to import) is not needed
    by the code location's load, which reaches this module through the storage resource."""
    from evals_pipeline.judging.panel import TrialVotes

    return TypeAdapter(TrialVotes)


def record_text(record: BaseModel, context: dict[str, Any] | None) -> str:
    """`record` as stored: its JSON with paths made references by `context`, secrets scrubbed
    (the same text a run's record table would hold for it)."""
    return run_redactor().json(record.model_dump_json(context=context))


def record_file(case_folder: Path, text: str) -> Path:
    """Where the record whose stored text is `text` lies in its case's folder: named by the
    text's digest, so equal records share a file and a file never changes once written."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return case_folder / f"{RECORD_FILE}{digest}.json"


def write_record_file(path: Path, text: str) -> bool:
    """Write `text` to `path` (renamed into place whole) unless it is there already; whether
    it was written."""
    data = text.encode()
    try:
        if path.stat().st_size == len(data):
            return False  # named by its digest: what is there is this text (unless cut short)
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
    return True


class StoredResult(StoredRecord):
    """One stored record with where and when it was made. Its format covers the record's too
    (votes and workspace notes have none of their own); the record keeps its own as well."""

    format_version: int = Field(default=STORE_FORMAT, description="The envelope's format.")
    key: str = Field(description="The result-cache key the record was computed under.")
    run_id: str | None = Field(default=None, description="The Dagster run that computed it.")
    stored_ms: int
    record: dict[str, Any] | None = Field(
        default=None, description="The record itself: a trial's grade, votes, a workspace note."
    )
    record_path: StoredPath | None = Field(
        default=None, description="The file of the record (a run, session or grade) instead."
    )


class ResultStore:
    """The stored results of one suite; `run_id` marks what this run writes. With an
    object-store root a record is published with the files it names, and read through this
    process's mirror (storage/root.py)."""

    def __init__(
        self, folder: Path, run_id: str | None = None, root: StorageRoot | None = None
    ) -> None:
        self.folder = folder
        self.run_id = run_id
        self.root = root or StorageRoot(str(folder))

    @classmethod
    def of_suite(
        cls, storage_root: Path | StorageRoot, suite: str, run_id: str | None = None
    ) -> ResultStore:
        root = (
            storage_root
            if isinstance(storage_root, StorageRoot)
            else StorageRoot(str(storage_root))
        )
        return cls(root.local / suite / "results", run_id, root)

    def run(self, case_key: str, agent: str, key: str) -> AgentRun | None:
        """The stored run under `key`, if it finished without error."""
        found = self._get("run", case_key, agent, key, AgentRun)
        return found if found is not None and not found.failed else None

    def session(self, case_key: str, agent: str, key: str) -> Session | None:
        return self._get("session", case_key, agent, key, Session)

    def grade(self, case_key: str, agent: str, key: str) -> CaseGrade | None:
        """The stored grade under `key`, if it did not end in an error."""
        found = self._get("grade", case_key, agent, key, CaseGrade)
        return found if found is not None and found.verdict != "error" else None

    def trial(self, case_key: str, agent: str, key: str) -> tuple[TrialGrade, Reuse] | None:
        """The stored grade of one trial under `key` (CaseKeys.trial_grade) and where it came
        from, if it did not end in an error (an errored trial is graded again)."""
        envelope = self._read("trial", case_key, agent, key)
        if envelope is None:
            return None
        try:
            trial = TrialGrade.model_validate(envelope.record, context=self.root.record_context())
        except ValidationError:
            return None
        if trial.verdict == "error":
            return None
        return trial, Reuse(run_id=envelope.run_id, stored_ms=envelope.stored_ms)

    def put_trial(self, case_key: str, agent: str, key: str, trial: TrialGrade) -> None:
        """Store one trial's grade under `key` (CaseKeys.trial_grade)."""
        self._write("trial", case_key, agent, key, self._dump(trial))

    def votes(self, case_key: str, agent: str, key: str) -> TrialVotes | None:
        """Judges' stored votes on one trial under `key` (votes_key)."""
        envelope = self._read("votes", case_key, agent, key)
        try:
            return None if envelope is None else _votes().validate_python(envelope.record)
        except ValidationError:
            return None

    def put(self, kind: Kind, record: AgentRun | Session | CaseGrade) -> None:
        """Store `record` under its own `result_key` (records without one are not stored)."""
        if record.result_key is None or record.reused is not None:
            return
        self.root.publish_record(record)  # the files it names first: never a dangling record
        text = record_text(record, self.root.record_context())
        path = record_file(self._case(record.case_key, record.agent), text)
        write_record_file(path, text)
        self.root.publish(path)  # before the entry naming it
        self._write(kind, record.case_key, record.agent, record.result_key, path=path)

    def stored_file(self, record: BaseModel, text: str) -> tuple[Path, dict[str, Any]] | None:
        """The file holding `record`, whose stored text is `text`, and the fields a run's
        record table sets over it (a reused record's mark): None when no file holds it (its
        table then holds the record itself)."""
        if not isinstance(record, AgentRun | Session | CaseGrade) or record.result_key is None:
            return None
        over: dict[str, Any] = {}
        if record.reused is not None:  # stored unmarked
            bare = record.model_copy(update={"reused": None})
            text = record_text(bare, self.root.record_context())
            over = {"reused": record.reused.model_dump(mode="json")}
        path = record_file(self._case(record.case_key, record.agent), text)
        return (path, over) if path.exists() else None

    def put_votes(self, key: str, votes: TrialVotes) -> None:
        """Store judges' votes on one trial, unless a call failed (that is retried next time)."""
        if any(v.error for cast in votes.votes.values() for v in cast):
            return
        self._write(
            "votes", votes.case_key, votes.agent, key, _votes().dump_python(votes, mode="json")
        )

    def keep_workspace(self, case_key: str, agent: str, run_key: str, workspace: Path) -> None:
        """Keep the final state of the workspace of the run stored under `run_key` (about to be
        deleted), or a note of why it was not kept (over the size cap)."""
        archive = self.state_archive(case_key, agent, run_key)
        redactor = run_redactor()  # scrubbed as every stored file is (final_state.py)
        scrub = redactor.scrub_bytes if redactor else None
        kept = archive_workspace(workspace, archive, max_state_bytes(), scrub)
        if kept.kept:
            self.root.publish(archive)  # before its note: a note never names a missing archive
        self._write("state", case_key, agent, run_key, kept.model_dump(mode="json"))

    def workspace_state(self, case_key: str, agent: str, run_key: str) -> KeptState | None:
        """The note on the kept state of the run stored under `run_key`, its archive present
        when kept; None when nothing was noted (the workspace was never deleted, or predates
        this)."""
        envelope = self._read("state", case_key, agent, run_key)
        try:
            kept = None if envelope is None else KeptState.model_validate(envelope.record)
        except ValidationError:
            return None
        if kept is not None and kept.kept:
            archive = self.state_archive(case_key, agent, run_key)
            if not self.root.fetch_file(archive):
                return KeptState(
                    kept=False, state_bytes=kept.state_bytes, not_kept="its archive is gone"
                )
        return kept

    def state_archive(self, case_key: str, agent: str, run_key: str) -> Path:
        """Where the kept workspace of the run stored under `run_key` lies."""
        return self.folder / agent / case_key / f"workspace-{run_key}.tar.gz"

    def _get(self, kind: Kind, case_key: str, agent: str, key: str, model: type[R]) -> R | None:
        envelope = self._read(kind, case_key, agent, key)
        if envelope is None:
            return None
        context = self.root.record_context()
        try:
            if envelope.record_path is None:  # a format 2 entry: the record inline
                record = model.model_validate(envelope.record, context=context)
            else:
                path = Path(envelope.record_path)
                self.root.fetch_file(path)  # never rewritten: a copy here is current
                record = model.model_validate_json(path.read_bytes(), context=context)
        except (OSError, ValidationError):  # its file gone or cut short: a miss
            return None
        self.root.fetch_record(record)
        reuse = Reuse(run_id=envelope.run_id, stored_ms=envelope.stored_ms)
        return record.model_copy(update={"reused": reuse})

    def _write(
        self,
        kind: Kind,
        case_key: str,
        agent: str,
        key: str,
        record: Any = None,
        *,
        path: Path | None = None,
    ) -> None:
        """Write the entry of `key`: holding `record`, or pointing at its file `path`."""
        envelope = StoredResult(
            key=key,
            run_id=self.run_id,
            stored_ms=now_ms(),
            record=record,
            record_path=None if path is None else str(path),
        )
        entry = self._path(kind, case_key, agent, key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=f".{entry.name}.")
        # Renamed whole, so a crashed process never leaves half an entry; not flushed to disk
        # (~1.6 ms each): one a power cut truncates reads as a miss, and is made again.
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            text = envelope.model_dump_json(context=self.root.record_context())
            # A record inline is scrubbed; a pointer holds only names and keys (its file was).
            handle.write(run_redactor().json(text) if record is not None else text)
        os.replace(tmp, entry)
        self.root.publish(entry)

    def _read(self, kind: Kind, case_key: str, agent: str, key: str) -> StoredResult | None:
        """The stored envelope under `key`, if it is whole and of this format."""
        path = self._path(kind, case_key, agent, key)
        try:
            # The store decides: another worker may have stored a retry under this key since.
            self.root.fetch_file(path, fresh=True)
            envelope = StoredResult.model_validate_json(
                path.read_bytes(), context=self.root.record_context()
            )
        except (OSError, ValidationError):  # missing, torn by a crash, or of a newer format
            return None
        if envelope.key != key:
            return None
        return envelope

    def _dump(self, record: BaseModel) -> dict[str, Any]:
        """A record as stored: its paths relative to the storage root."""
        return record.model_dump(mode="json", context=self.root.record_context())

    def _case(self, case_key: str, agent: str) -> Path:
        return self.folder / agent / case_key

    def _path(self, kind: Kind, case_key: str, agent: str, key: str) -> Path:
        return self._case(case_key, agent) / f"{kind}-{key}.json"
