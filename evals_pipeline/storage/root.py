"""The storage root: a local folder, or an object-store URL (`s3://bucket/prefix`; any scheme
pyarrow.fs knows: `gs://`, `abfs://`, `hdfs://`) that each process mirrors in a folder of its own.

Steps always read and write local files (agents, graders and Parquet readers get paths). With an
object store the local folder is this process's mirror: what a step writes there is published
(uploaded) when a case's record is stored, and what a record names is fetched (downloaded) the
first time this process needs it. Stored records hold paths relative to the root, never a
machine's paths (`reference`, `resolve`).
The unit of transfer is the folder a record's `*_path` field points into (one trial's folder),
so a workspace arrives with its baseline beside it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import uuid
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from evals_pipeline.models.stored import paths_context
from evals_pipeline.settings import Settings

if TYPE_CHECKING:
    import pyarrow.fs as pafs

DEFAULT_CACHE = ".evals/storage-cache"
SYNCED = ".evals-synced"
"""Marks a local folder that matches the store: published from here, or fetched whole."""
TRANSFER_THREADS = 8


def is_url(root: str) -> bool:
    """Whether `root` names an object store rather than a local folder."""
    return re.match(r"^[a-z][a-z0-9+.-]*://", root) is not None and not root.startswith("file://")


class StorageRoot:
    """Where the pipeline's files live, with the local folder this process reads and writes."""

    def __init__(self, url: str, cache: Path | None = None) -> None:
        self.remote = is_url(url)
        if not self.remote:
            self.url = str(Path(url.removeprefix("file://")).resolve())
            self.local = Path(self.url)
            self.fs: pafs.FileSystem | None = None
            self.base = ""
            return
        # Arrow's file systems (~0.15 s to import) only for an object store: a local root,
        # the usual case, never needs them.
        import pyarrow.fs as pafs

        self.fs, base = pafs.FileSystem.from_uri(url)
        self.base = base.rstrip("/")
        scheme = url.split("://", 1)[0]
        self.url = f"{scheme}://{self.base}"
        setting = Settings.current().storage_cache
        cache = cache or Path(DEFAULT_CACHE if setting is None else setting)
        self.local = cache.resolve() / scheme / self.base

    # -- names ---------------------------------------------------------------------------------

    def step_folder(self, asset_path: Sequence[str], run_id: str) -> Path:
        """Where one run's step of the asset at `asset_path` keeps its files, in the local
        folder; earlier runs are never overwritten."""
        return Path(self.local, *asset_path, run_id)

    def uri(self, path: Path | str) -> str:
        """The storage URI of a local path under this root (the path itself when local)."""
        text = str(path)
        local = str(self.local)
        if self.remote and (text == local or text.startswith(local + "/")):
            return self.url + text[len(local) :]
        return text

    def local_path(self, ref: str) -> Path:
        """The local path of a storage URI or path (no transfer)."""
        if self.remote and (ref == self.url or ref.startswith(self.url + "/")):
            return Path(str(self.local) + ref[len(self.url) :])
        return Path(ref)

    def reference(self, path: str) -> str:
        """`path` as a stored record keeps it: relative to the root when under this process's
        folder (so any process, and a moved root, resolves it), else as it is."""
        local = str(self.local)
        if path.startswith(local + "/"):
            return path[len(local) + 1 :]
        return path

    def resolve(self, ref: str) -> str:
        """The path in this process of a stored reference: one relative to the root, or an
        older record's absolute path or storage URI (models/stored.py's `StoredPath`)."""
        if self.remote and ref.startswith(self.url + "/"):
            return str(self.local) + ref[len(self.url) :]
        if is_url(ref) or Path(ref).is_absolute():
            return ref
        return str(self.local / ref)

    def record_context(self) -> dict[str, Any]:
        """The context a record is validated or serialized with, its paths against this root."""
        return paths_context(self)

    def _key(self, path: Path) -> str:
        """The object-store path (for `self.fs`) of a local path under the mirror."""
        return self.base + "/" + path.relative_to(self.local).as_posix()

    # -- transfer ------------------------------------------------------------------------------

    def publish(self, path: Path) -> None:
        """Upload a local file, or every file of a folder not yet published, to the store."""
        if not self.remote or not path.exists():
            return
        if path.is_file():
            self._upload([path])
            return
        if (path / SYNCED).exists():
            return
        files: list[Path] = []
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if not (Path(folder, d) / SYNCED).exists()]
            files.extend(Path(folder, n) for n in names if n != SYNCED)
        self._upload(files)
        (path / SYNCED).touch()

    def publish_record(self, record: BaseModel) -> None:
        """Publish the folders a record's `*_path` fields point into: before the record is
        stored, so a stored record never names files the store lacks."""
        for folder in self._units(record):
            self.publish(folder)

    def fetch_record(self, record: BaseModel) -> None:
        """Make the folders a record's `*_path` fields point into present locally."""
        for folder in self._units(record):
            self.fetch(folder)

    def fetch(self, folder: Path) -> None:
        """Download a folder of the store into the local mirror once (then it is reused)."""
        if not self.remote or (folder / SYNCED).exists():
            return
        assert self.fs is not None
        import pyarrow.fs as pafs

        infos = self.fs.get_file_info(pafs.FileSelector(self._key(folder), allow_not_found=True))
        if not infos:
            return  # never published: the producer's own folder, or missing (the reader says)
        staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.part"
        staging.mkdir(parents=True)
        pafs.copy_files(
            self._key(folder),
            str(staging),
            source_filesystem=self.fs,
            destination_filesystem=pafs.LocalFileSystem(),
            use_threads=True,
        )
        (staging / SYNCED).touch()
        try:
            staging.rename(folder)
        except OSError:  # there already: fetched by a neighbour, or a partial local copy
            if (folder / SYNCED).exists():
                shutil.rmtree(staging)
                return
            stale = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.stale"
            folder.rename(stale)
            staging.rename(folder)
            shutil.rmtree(stale, ignore_errors=True)

    def fetch_file(self, path: Path, *, fresh: bool = False) -> bool:
        """Download one file of the store unless it is here (`fresh`: download it anyway, for
        files another process may rewrite); False when neither has it."""
        if path.exists() and not (fresh and self.remote):
            return True
        if not self.remote:
            return False
        assert self.fs is not None
        try:
            with self.fs.open_input_stream(self._key(path)) as stream:
                data = stream.read()
        except OSError:  # not in the store (FileNotFoundError is one)
            return path.exists()
        _write_atomic(path, data)
        return True

    def pull(self, prefix: str, names: Collection[str]) -> None:
        """Mirror every file named one of `names` under `prefix` that is not here yet (e.g.
        each report's report.json, for the suite's history)."""
        if not self.remote:
            return
        assert self.fs is not None
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(f"{self.base}/{prefix}", allow_not_found=True, recursive=True)
        wanted = [
            self.local / info.path[len(self.base) + 1 :]
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File and info.base_name in names
        ]
        with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
            list(pool.map(self.fetch_file, [p for p in wanted if not p.exists()]))

    def folders(self, prefix: str = "") -> list[str]:
        """The names of the folders directly under `prefix` in the store (or the local root)."""
        if not self.remote:
            folder = self.local / prefix
            return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        assert self.fs is not None
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(f"{self.base}/{prefix}".rstrip("/"), allow_not_found=True)
        infos = self.fs.get_file_info(selector)
        return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)

    def _upload(self, files: list[Path]) -> None:
        assert self.fs is not None
        fs = self.fs

        def put(path: Path) -> None:
            with fs.open_output_stream(self._key(path)) as out:
                out.write(path.read_bytes())

        if len(files) == 1:  # a stored record: no pool for one file
            put(files[0])
            return
        with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
            list(pool.map(put, files))

    def _units(self, record: BaseModel) -> list[Path]:
        """The folders under the mirror that a record's `*_path` fields point into."""
        if not self.remote:
            return []
        units: list[Path] = []
        for name in type(record).model_fields:
            value = getattr(record, name) if name.endswith("_path") else None
            if isinstance(value, str) and value.startswith(str(self.local) + "/"):
                unit = Path(value).parent
                if unit not in units:
                    units.append(unit)
        return units


@functools.cache
def open_root(url: str) -> StorageRoot:
    """The storage root `url` names, opened once per process."""
    return StorageRoot(url)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    staging.write_bytes(data)
    staging.replace(path)
