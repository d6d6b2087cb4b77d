"""Browsing a workspace from the host: listings and files, never outside the workspace root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workspaces import PathForbidden, PathNotFound, TooLarge, WrongFileType
from workspaces.browse import list_directory, open_file, workspace_parts


@pytest.fixture
def tenants(tmp_path: Path) -> tuple[Path, Path]:
    """Two tenants' workspaces side by side; the first holds files, dirs and hostile links."""
    root, other = tmp_path / "alice" / "ws", tmp_path / "bob" / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    other.mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (other / "secret.txt").write_text("bob's secret\n")
    (root / "etc").symlink_to("/etc")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "bob").symlink_to(other)
    (root / "bob-secret").symlink_to(other / "secret.txt")
    (root / "inside").symlink_to(root / "src")
    return root, other


def read(root: Path, path: str) -> bytes:
    handle, info = open_file(root, path)
    with handle:
        data = handle.read()
    assert info.size_bytes == len(data)
    return data


def test_paths_resolve_below_the_root_only(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    assert workspace_parts(root, "") == []
    assert workspace_parts(root, "src/./pkg//mod.py") == ["src", "pkg", "mod.py"]
    assert workspace_parts(root, str(root / "src")) == ["src"]
    assert workspace_parts(root, "src/../README.md") == ["README.md"]
    for outside in ("..", "../ws2", "src/../../bob/ws", "/etc/passwd", str(root) + "2/x"):
        with pytest.raises(PathForbidden, match="outside the workspace"):
            workspace_parts(root, outside)


def test_a_listing_shows_entries_without_following_links(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    listing = list_directory(root, "")
    assert listing.path == str(root)
    entries = {e.name: e for e in listing.entries}
    assert sorted(entries) == sorted(
        ["README.md", "src", "etc", "passwd", "bob", "bob-secret", "inside"]
    )
    assert entries["README.md"].size_bytes == 6
    assert entries["README.md"].is_dir is False
    assert entries["src"].is_dir is True
    assert entries["src"].size_bytes is None
    for link in ("etc", "bob", "inside"):  # links to directories are not directories here
        assert entries[link].is_dir is False
        assert entries[link].size_bytes is None
    nested = list_directory(root, str(root / "src" / "pkg"))
    assert nested.path == str(root / "src" / "pkg")
    assert [e.name for e in nested.entries] == ["mod.py"]


def test_files_are_read_and_directories_listed_only_inside(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    assert read(root, "src/pkg/mod.py") == b"x = 1\n"
    assert read(root, str(root / "README.md")) == b"hello\n"
    for path in ("etc", "etc/passwd", "passwd", "bob", "bob/secret.txt", "bob-secret", "inside"):
        with pytest.raises(PathForbidden, match="symbolic link"):
            read(root, path)
    for path in ("etc", "bob", "inside", "inside/pkg"):
        with pytest.raises(PathForbidden, match="symbolic link"):
            list_directory(root, path)
    for path in ("../../bob/ws/secret.txt", "/etc/hostname", "src/../../ws/../../bob/ws"):
        with pytest.raises(PathForbidden, match="outside"):
            read(root, path)


def test_missing_paths_and_wrong_kinds_are_named(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    with pytest.raises(PathNotFound, match=r"'nope\.txt'"):
        read(root, "nope.txt")
    with pytest.raises(PathNotFound):
        list_directory(root, "README.md/below")
    with pytest.raises(PathNotFound):
        read(root, "bad\0name")
    with pytest.raises(WrongFileType, match="is a file, not a directory"):
        list_directory(root, "README.md")
    with pytest.raises(WrongFileType, match="is a directory, not a file"):
        read(root, "src")
    with pytest.raises(WrongFileType, match="workspace root"):
        read(root, "")
    os.mkfifo(root / "pipe")  # opening must not block on a FIFO an agent left there
    with pytest.raises(WrongFileType, match="not a regular file"):
        read(root, "pipe")


def test_oversized_files_and_directories_are_refused(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    with open(root / "huge.bin", "wb") as handle:  # sparse: no disk space used
        handle.truncate((1 << 30) + 1)
    with pytest.raises(TooLarge, match="1073741825 bytes"):
        open_file(root, "huge.bin")
    with pytest.raises(TooLarge, match="more than 3 entries"):
        list_directory(root, "", max_entries=3)


def test_a_link_swapped_in_after_a_check_is_still_refused(tenants: tuple[Path, Path]) -> None:
    root, other = tenants
    handle, _ = open_file(root, "src/pkg/mod.py")
    handle.close()
    (root / "src" / "pkg" / "mod.py").unlink()
    (root / "src" / "pkg" / "mod.py").symlink_to(other / "secret.txt")
    with pytest.raises(PathForbidden, match="symbolic link"):
        open_file(root, "src/pkg/mod.py")
    (root / "src" / "pkg" / "mod.py").unlink()
    os.rename(root / "src" / "pkg", root / "src" / "real")
    (root / "src" / "pkg").symlink_to(other)
    with pytest.raises(PathForbidden, match="'src/pkg', a symbolic link"):
        open_file(root, "src/pkg/secret.txt")


def test_no_descriptor_is_left_open(tenants: tuple[Path, Path]) -> None:
    root, _ = tenants
    os.mkfifo(root / "pipe")
    before = len(os.listdir("/proc/self/fd"))
    for path in ("src", "pipe", "etc/passwd", "nope", "README.md/x", "inside/pkg/mod.py"):
        with pytest.raises((PathForbidden, PathNotFound, WrongFileType)):
            open_file(root, path)
    for path in ("README.md", "etc", "nope"):
        with pytest.raises((PathForbidden, PathNotFound, WrongFileType)):
            list_directory(root, path)
    with pytest.raises(TooLarge):
        list_directory(root, "", max_entries=1)
    assert len(os.listdir("/proc/self/fd")) == before
