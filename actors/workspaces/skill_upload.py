"""Skill uploads: a folder sent as multipart parts, checked hard, packed as a `SkillBundle`.

The format is AgentScope's: a `manifest` form field holding JSON
`{"entries": [{"path", "size"}]}` that lists the parts in the order they are sent, and one
`files` part per entry. Every path sits under one top-level folder (the picked folder, as a
browser's `webkitRelativePath` names it) with a `SKILL.md` at its root. The manifest is only
what the client claims: its limits are checked before any part is read, then each part's real
size against it. The whole is bounded by `MAX_SKILL_BUNDLE_BYTES` (far below AgentScope's
500 MB), because the bundle travels to the workspace, and into the user's library, in one
piece. Parts are plain files: an upload cannot carry a symbolic link or a device.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import ConfigDict, Field

from actors.workspaces.requests import MAX_SKILL_BUNDLE_BYTES, SkillBundle
from agent_core.deferred_model import DeferredModel
from agent_core.errors import ToolError
from agent_core.skill import Skill
from agent_core.skill.skill import SKILL_FILE
from workspaces.errors import InvalidSkill

MAX_UPLOAD_FILES = 100
"""The most files one skill upload may hold."""

MAX_UPLOAD_REQUEST_BYTES = MAX_SKILL_BUNDLE_BYTES + (1 << 20)
"""The largest upload request: the files plus room for the manifest and the parts' headers."""

_MAX_PATH_CHARS = 1024
_MAX_NAME_BYTES = 255


class UploadEntry(DeferredModel):
    """One file of a folder upload, as the client describes it."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="The file's path relative to the picked folder's parent (the browser's "
        "`webkitRelativePath`), e.g. `pdf/SKILL.md`."
    )
    size: int = Field(ge=0, description="The file's size in bytes.")


class UploadManifest(DeferredModel):
    """The declared contents of a folder upload, in the order the parts are sent."""

    model_config = ConfigDict(extra="forbid")

    entries: list[UploadEntry] = Field(description="One entry per part.")


def check_manifest(manifest: UploadManifest, parts: int) -> str:
    """Check a manifest against the limits and the parts received; return the folder name.

    Raises:
        InvalidSkill: Too many files or bytes, a path that is unsafe, a duplicate, more than
            one top-level folder, no `SKILL.md` at its root, or a part count that differs.
    """
    entries = manifest.entries
    if not entries:
        raise InvalidSkill("the upload holds no files")
    if parts != len(entries):
        raise InvalidSkill(f"the manifest lists {len(entries)} files but {parts} were sent")
    if len(entries) > MAX_UPLOAD_FILES:
        raise InvalidSkill(f"a skill may hold at most {MAX_UPLOAD_FILES} files, got {len(entries)}")
    total = sum(entry.size for entry in entries)
    if total > MAX_SKILL_BUNDLE_BYTES:
        raise InvalidSkill(
            f"the upload is {total} bytes, over the {MAX_SKILL_BUNDLE_BYTES}-byte limit"
        )
    paths = [_parts(entry.path) for entry in entries]
    roots = sorted({path[0] for path in paths})
    if len(roots) != 1:
        raise InvalidSkill(f"a skill must be a single folder, got {roots}")
    files = {"/".join(path) for path in paths}
    if len(files) != len(paths):
        raise InvalidSkill("the manifest lists a path twice")
    for path in paths:
        for depth in range(1, len(path)):
            if "/".join(path[:depth]) in files:
                raise InvalidSkill(f"{'/'.join(path[:depth])!r} is both a file and a folder")
    root = roots[0]
    if f"{root}/{SKILL_FILE}" not in files:
        raise InvalidSkill(f"no {SKILL_FILE} at the root of {root!r}")
    return root


def pack_upload(manifest: UploadManifest, root: str, contents: list[bytes]) -> SkillBundle:
    """The bundle of a checked upload (paths relative to `root`), once its SKILL.md parses.

    Raises:
        InvalidSkill: A part's size differs from the manifest's, or SKILL.md is invalid.
    """
    files: dict[str, bytes] = {}
    for entry, data in zip(manifest.entries, contents, strict=True):
        if len(data) != entry.size:
            raise InvalidSkill(
                f"{entry.path!r} was declared as {entry.size} bytes but {len(data)} were sent"
            )
        files[str(PurePosixPath(entry.path).relative_to(root))] = data
    try:
        markdown = files[SKILL_FILE].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidSkill(f"{root}/{SKILL_FILE} is not UTF-8 text") from exc
    try:
        Skill.parse(markdown, root)
    except ToolError as exc:
        raise InvalidSkill(str(exc)) from exc
    return SkillBundle.pack(files)


def _parts(path: str) -> list[str]:
    """The components of an upload path.

    Raises:
        InvalidSkill: The path is absolute, empty, too long, not under a folder, or holds
            `.`/`..`, an empty component, a backslash or a control character.
    """
    unsafe = InvalidSkill(f"unsafe upload path: {path!r}")
    if len(path) > _MAX_PATH_CHARS or "\\" in path or any(ord(c) < 32 or c == "\x7f" for c in path):
        raise unsafe
    parts = path.split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
        raise unsafe
    if any(len(p.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES for p in parts):
        raise unsafe
    return parts
