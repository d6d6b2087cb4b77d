"""`Edit`: exact string replacement in a file the agent has read."""

from __future__ import annotations

from pydantic import Field

from agent_core.state import ReadCacheEntry
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    Seen,
    ToolInput,
    done,
    input_schema,
    lookup,
    observe,
    stale_reason,
)
from agent_core.tool.builtin._files import FileWriter, read_text, unified_diff, write_text


class EditInput(ToolInput):
    """Arguments of `Edit`."""

    file_path: str = Field(
        description="The file to edit: an absolute path, or one relative to the workspace."
    )
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation."
    )
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(
        default=False,
        description=("Replace every occurrence. When false, old_string must occur exactly once."),
    )


def _locate(content: str, old: str, new: str) -> tuple[str, str]:
    """The strings to search and insert, adapted to CRLF files when `old` is written with LF."""
    if old not in content and "\r\n" in content and "\n" in old and "\r\n" not in old:
        return old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    return old, new


class Edit(FileWriter[EditInput]):
    """Replace exact text in a file.

    The file must have been read with `Read` and not changed since. `old_string` must occur
    exactly once unless `replace_all` is set. The result's metadata holds a unified `diff`,
    the `file_path` and the number of `occurrences` replaced.
    """

    name = "Edit"
    description = (
        "Replace exact text in a file. Relative paths are resolved against the workspace "
        "directory.\n\n"
        "- The file must be read with the Read tool first.\n"
        "- old_string must match the file exactly, including indentation; never include the "
        "line-number prefix that Read adds (number and tab).\n"
        "- The edit fails when old_string is not found, or occurs more than once and "
        "replace_all is false: add surrounding context to make it unique, or set "
        "replace_all to change every occurrence (e.g. to rename a variable)."
    )
    input_model = EditInput
    input_schema = input_schema(EditInput)

    def change(
        self, params: EditInput, entries: list[ReadCacheEntry]
    ) -> tuple[ToolChunk, Seen | None]:
        """Replace old_string in the file (read-before-write checked against `entries`)."""
        path = self.workspace.path(params.file_path)
        shown = self.workspace.display(params.file_path)
        if not params.old_string:
            return done(
                "old_string must not be empty; use Write for whole files.", error=True
            ), None
        if params.old_string == params.new_string:
            return done(
                "old_string and new_string are identical; nothing to change.", error=True
            ), None
        try:
            if not path.is_file():
                hint = "" if path.exists() else " Use Write to create a new file."
                return done(
                    f"File {shown} does not exist or is not a file.{hint}", error=True
                ), None
            reason = stale_reason(lookup(entries, path), path, shown)
            if reason is not None:
                return done(reason, error=True), None
            try:
                before = read_text(path)
            except UnicodeDecodeError:
                return done(f"{shown} is not UTF-8 text and cannot be edited.", error=True), None
            old, new = _locate(before, params.old_string, params.new_string)
            occurrences = before.count(old)
            if occurrences == 0:
                return done(f"old_string was not found in {shown}.", error=True), None
            if occurrences > 1 and not params.replace_all:
                return done(
                    f"old_string occurs {occurrences} times in {shown}. Add surrounding context "
                    "to make it unique, or set replace_all to true to replace every occurrence.",
                    error=True,
                ), None
            after = before.replace(old, new)
            write_text(path, after)
            seen = observe(path, after.splitlines(keepends=True))
        except OSError as exc:
            return done(f"Cannot edit {shown}: {exc.strerror or exc}", error=True), None
        what = "1 occurrence" if occurrences == 1 else f"all {occurrences} occurrences"
        chunk = done(
            f"The file {shown} has been edited successfully (replaced {what}).",
            diff=unified_diff(before, after, shown),
            file_path=shown,
            occurrences=occurrences,
        )
        return chunk, seen
