"""Hub ids such as "HuggingFaceTB/SmolLM2-135M", resolved through huggingface_hub's
local cache first (works offline), then the hub itself.

A download first asks the hub which files it will fetch and how big they are, says
so, then runs in a child process: a cancel kills it at once, even in the middle of a
multi-GB file (huggingface_hub's downloads cannot be interrupted from another thread)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from embviz.core.child import run_in_child
from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
MAX_HUB_PART = 96  # the hub's own limit on an owner's or a repository's name
_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.txt", "pytorch_model*.bin"]


@dataclass(frozen=True)
class DownloadPlan:
    repo_id: str
    revision: str
    files: tuple[str, ...]
    total_bytes: int

    def describe(self) -> str:
        return f"Downloading {len(self.files)} file(s), {self.total_bytes / 1e6:,.1f} MB, from the hub"


def looks_like_hub_id(source: str) -> bool:
    return bool(HUB_ID.match(source)) and not source.endswith((".gguf", ".safetensors", ".pt", ".bin"))


def files_to_fetch(sizes: dict[str, int]) -> dict[str, int]:
    """What a model folder needs of a repository's files: configs, tokenizer and the
    weights, safetensors when the repository has them (never both formats)."""
    wanted = {name: size for name, size in sizes.items()
              if "/" not in name and any(fnmatch.fnmatch(name, p) for p in _PATTERNS)}
    if any(name.endswith(".safetensors") for name in wanted):
        wanted = {name: size for name, size in wanted.items() if not name.startswith("pytorch_model")}
    return wanted


def plan_download(repo_id: str) -> DownloadPlan:
    """Ask the hub for the files and their sizes; one clear message when it cannot answer."""
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(repo_id, files_metadata=True)
    except _hub_errors() as exc:
        raise EmbvizError(_hub_failure(repo_id, exc)) from exc
    sizes = {s.rfilename: int(s.size or 0) for s in info.siblings or []}
    wanted = files_to_fetch(sizes)
    if not any(name.endswith((".safetensors", ".bin")) for name in wanted):
        raise EmbvizError(f"'{repo_id}' on the hub has no safetensors or pytorch_model.bin weights that embviz reads.")
    return DownloadPlan(repo_id, info.sha or "main", tuple(sorted(wanted)), sum(wanted.values()))


def _hub_errors() -> tuple[type[BaseException], ...]:
    """What asking the hub raises when the hub, the network or the id is at fault (not a bug here):
    huggingface_hub's errors are OSErrors or ValueErrors; its HTTP client's network errors are neither."""
    import importlib

    from huggingface_hub.errors import EntryNotFoundError

    errors: tuple[type[BaseException], ...] = (OSError, ValueError, EntryNotFoundError)
    for client in ("httpx2", "httpx"):  # requests, in older versions, raises OSErrors
        try:
            errors += (importlib.import_module(client).HTTPError,)
        except ImportError:
            continue
    return errors


def _hub_failure(repo_id: str, exc: BaseException) -> str:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "OfflineModeIsEnabled" in names:
        return (f"'{repo_id}' is not in the local Hugging Face cache, and downloads are switched off "
                "(HF_HUB_OFFLINE is set). Open a local folder or file instead.")
    if "GatedRepoError" in names:
        return f"'{repo_id}' is gated on the hub: accept its licence there and log in (`hf auth login`), then try again."
    if "RepositoryNotFoundError" in names:
        return f"There is no model '{repo_id}' on the hub (or it is private)."
    if names & {"ConnectionError", "ConnectError", "ConnectTimeout", "Timeout", "TimeoutException", "LocalEntryNotFoundError"} \
            or isinstance(exc, OSError):
        return (f"'{repo_id}' is not in the local Hugging Face cache and the hub cannot be reached (offline?). "
                "Open a local folder or file instead, or download it on a machine with internet access.")
    return f"The hub could not list '{repo_id}': {first_line(exc, 160)}"


def _cached_snapshot(repo_id: str) -> Path | None:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, local_files_only=True, allow_patterns=_PATTERNS))
    except (OSError, ValueError):  # not cached, or only partly (LocalEntryNotFoundError): ask the hub
        return None


def _download(plan: DownloadPlan) -> str:
    """In the child process."""
    from huggingface_hub import snapshot_download

    return snapshot_download(plan.repo_id, revision=plan.revision, allow_patterns=list(plan.files))


def _bytes_in_cache(repo_id: str) -> int:
    from huggingface_hub.constants import HF_HUB_CACHE

    blobs = Path(HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "blobs"
    try:
        return sum(f.stat().st_size for f in blobs.iterdir() if f.is_file())
    except OSError:
        return 0


def resolve_hub_id(repo_id: str, progress: ProgressFn = no_progress) -> Path:
    """The local snapshot folder of `repo_id`, downloaded first when it is not cached."""
    if any(len(part) > MAX_HUB_PART for part in repo_id.split("/")):
        raise EmbvizError(f"'{repo_id[:60]}…' is too long for a hub id (at most {MAX_HUB_PART} characters a part).")
    cached = _cached_snapshot(repo_id)
    if cached is not None:
        return cached
    progress(0.0, f"Asking the hub about {repo_id}…", None)
    plan = plan_download(repo_id)
    stage = plan.describe()
    progress(0.0, f"{stage}…", None)
    before = _bytes_in_cache(repo_id)

    def measure() -> tuple[float, str]:
        got = max(_bytes_in_cache(repo_id) - before, 0)
        fraction = min(got / plan.total_bytes, 1.0) if plan.total_bytes else 0.0
        return 0.9 * fraction, f"{stage}: {got / 1e6:,.1f} MB so far"

    return Path(run_in_child(_download, (plan,), progress, stage, measure=measure))
