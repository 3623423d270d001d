"""AgentV 4.42.4's published corpus (examples/, evals/, packages/sdk, packages/eval): where it is,
and its grader SDK made importable from source.

The corpus is third-party (MIT) and never committed here: it is `../shared/agentv-4.42.4` beside
the repository when that exists, else a shallow clone of the tag in `.evals/agentv-4.42.4`. This
module is stdlib only, so `make` runs it before the virtualenv exists:

    python3 evals_pipeline_tests/conformance/corpus.py path      # print the corpus folder
    python3 evals_pipeline_tests/conformance/corpus.py sdk DEST  # DEST/sdk and DEST/eval
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TAG = "v4.42.4"
UPSTREAM = "https://github.com/EntityProcess/agentv"
SHARED = REPO.parent / "shared" / "agentv-4.42.4"
CLONE = REPO / ".evals" / "agentv-4.42.4"
ENV_VAR = "EVALS_PIPELINE_AGENTV_CORPUS"
"""Set to a folder holding the corpus to use it instead of ../shared or a clone."""

# Only these two package.json keys differ from upstream's: bun runs the TypeScript sources, so
# nothing has to be built, and @agentv/eval finds its sibling without a bun workspace.
_SOURCE_EXPORTS = {"main": "./src/index.ts", "types": "./src/index.ts", "exports": "./src/index.ts"}


def corpus_root() -> Path:
    """The corpus folder, cloning the tag into `.evals/` when no copy is at hand."""
    given = os.environ.get(ENV_VAR)
    if given:
        return Path(given).resolve()
    if (SHARED / "examples").is_dir():
        return SHARED
    if not (CLONE / "examples").is_dir():
        CLONE.parent.mkdir(parents=True, exist_ok=True)
        # Cloned beside and renamed into place: processes that start together never see half.
        staging = Path(tempfile.mkdtemp(prefix="agentv-clone-", dir=CLONE.parent))
        clone = ["git", "clone", "--quiet", "--depth", "1", "--branch", TAG, UPSTREAM]
        if subprocess.run([*clone, str(staging / "agentv")], check=False).returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SystemExit(
                f"AgentV's corpus is not in {SHARED} and `{' '.join(clone)}` failed: put the "
                f"tag's examples/, evals/ and packages/ there, or name a copy in ${ENV_VAR}"
            )
        with contextlib.suppress(OSError):  # another process put its clone there first
            (staging / "agentv").rename(CLONE)
        shutil.rmtree(staging, ignore_errors=True)
    return CLONE


def prepare_sdk(destination: Path) -> None:
    """Copy `packages/sdk` and `packages/eval` to `destination/{sdk,eval}`, their sources unchanged
    and their package.json pointed at `src/` (neither package is published on npm at 4.42.4)."""
    packages = corpus_root() / "packages"
    for name in ("sdk", "eval"):
        target = destination / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(packages / name, target, ignore=shutil.ignore_patterns("test", "dist"))
        make_writable(target)  # npm writes node_modules into it
        manifest = json.loads((packages / name / "package.json").read_text())
        manifest.update(_SOURCE_EXPORTS)
        for key in ("scripts", "files"):
            manifest.pop(key, None)
        dependencies = manifest.get("dependencies", {})
        if dependencies.get("@agentv/sdk", "").startswith("workspace:"):
            dependencies["@agentv/sdk"] = "file:../sdk"
        (target / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")


def make_writable(folder: Path) -> None:
    """Add the owner's write bit throughout: copies of a read-only corpus are read-only."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


def main(argv: list[str]) -> int:
    if argv[:1] == ["path"]:
        print(corpus_root())
        return 0
    if argv[:1] == ["sdk"] and len(argv) == 2:
        prepare_sdk(Path(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
