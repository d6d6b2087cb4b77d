"""Paths: rule globs, sensitive paths, working directories, and the file tools' hooks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from permission_tools import make_context

from agent_core.permission import (
    PermissionBehavior,
    PermissionMode,
    dangerous_path_reason,
    file_read_paths,
    file_suggestions,
    file_write_permission,
    glob_match,
    is_inside,
)
from agent_core.permission.paths import glob_base, is_critical_path


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", "src/a/b.py", True),
        ("src/**", "src", True),
        ("src/**", "srcx/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "src/x/a.txt", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("config.json", "config.json", True),
        ("config.json", "sub/config.json", False),
        ("./config.json", "config.json", True),
        ("**", "deep/er/file", True),
        ("**", "/elsewhere/file", False),
        ("*", "/elsewhere/file", True),
        ("**/.bashrc", "/home/u/.bashrc", True),
        ("**/.ssh/**", "/home/u/.ssh/id_rsa", True),
        ("/etc/**", "/etc/passwd", True),
        ("/etc/**", "src/passwd", False),
        ("[ab].txt", "a.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("src/?.py", "src/ab.py", False),
    ],
)
def test_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path, "/proj") is expected


def test_tilde_patterns_follow_home(home: Path) -> None:
    assert glob_match("~/notes/**", str(home / "notes" / "a.md"), "/proj")


@pytest.mark.parametrize(
    ("path", "sensitive"),
    [
        ("~/.bashrc", True),
        ("~/.zshrc", True),
        ("~/.profile", True),
        ("~/.gitconfig", True),
        ("~/.ssh/config", True),
        ("~/.ssh/known_hosts", True),
        ("~/.aws/credentials", True),
        ("keys/id_ed25519", True),
        (".env", True),
        (".env.local", True),
        (".env.example", False),
        (".npmrc", True),
        (".git/config", True),
        (".git/hooks/pre-commit", True),
        (".vscode/settings.json", True),
        (".gitmodules", True),
        ("/etc/hosts", True),
        ("/usr/local/bin/tool", True),
        ("/dev/sda", True),
        ("/dev/null", False),
        ("src/main.py", False),
        ("docs/bashrc.md", False),
        ("README.md", False),
    ],
)
def test_sensitive_paths(home: Path, path: str, sensitive: bool) -> None:
    assert (dangerous_path_reason(path, "/proj") is not None) is sensitive


def test_extra_sensitive_entries() -> None:
    assert dangerous_path_reason("app/.secrets", "/proj", extra_files=[".secrets"])
    assert dangerous_path_reason("x/.credentials/k", "/proj", extra_directories=[".credentials"])
    assert dangerous_path_reason("conf/prod.yaml", "/proj", extra_files=["conf/prod.yaml"])
    assert dangerous_path_reason("/srv/data/x", "/proj", extra_directories=["/srv/data"])
    assert dangerous_path_reason("app/.secrets", "/proj") is None


def test_symlinks_do_not_hide_sensitive_paths(home: Path, project: Path) -> None:
    os.symlink(home / ".ssh", project / "keys")
    assert dangerous_path_reason("keys/authorized_keys", str(project))
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "bashrc").write_text("")
    os.symlink(dotfiles / "bashrc", home / ".bashrc")
    assert dangerous_path_reason("~/.bashrc", str(project))


def test_is_inside_resolves_dotdot_and_symlinks(project: Path, tmp_path: Path) -> None:
    roots = [str(project)]
    (tmp_path / "outside" / "deep").mkdir()
    os.symlink(tmp_path / "outside", project / "escape")
    os.symlink(tmp_path / "outside" / "deep", project / "deep")
    os.symlink(project / "src", tmp_path / "outside" / "back")
    assert is_inside("src/new.py", roots, str(project))
    assert is_inside(str(project), roots, "/")
    assert not is_inside("../outside/x", roots, str(project))
    assert not is_inside("escape/x", roots, str(project))
    assert not is_inside("deep/../x", roots, str(project))
    assert is_inside("escape/back/x", roots, str(project))
    assert not is_inside(str(project) + "-sibling/x", roots, "/")
    assert not is_inside("x", [], str(project))


def test_critical_paths(home: Path, project: Path) -> None:
    roots = [str(project)]
    for path in ("/", "/usr", "/home", "~", str(project), str(project.parent)):
        assert is_critical_path(path, str(project), roots), path
    for path in ("src", "/usr/share/doc/x", "~/notes"):
        assert not is_critical_path(path, str(project), roots), path


@pytest.mark.parametrize(
    ("pattern", "deep", "base"),
    [
        ("src/*.py", False, "src"),
        ("*", False, "."),
        ("/*", False, "/"),
        (".*", False, "./.."),
        ("~/*", False, "~"),
        ("src/*/x.py", False, None),
        ("src/*/x.py", True, "src"),
        ("**/*.py", True, "."),
        ("a/*/../x", True, None),
        ("file{1,2}.txt", False, "."),
        ("plain/path", False, "plain/path"),
    ],
)
def test_glob_base(pattern: str, deep: bool, base: str | None) -> None:
    assert glob_base(pattern, deep=deep) == base


def test_file_suggestions_cover_the_parent_directory(project: Path) -> None:
    cwd = str(project)
    assert [r.rule_content for r in file_suggestions("Edit", "src/pkg/a.py", cwd)] == ["src/pkg/**"]
    assert [r.rule_content for r in file_suggestions("Edit", "README.md", cwd)] == ["README.md"]
    assert [r.rule_content for r in file_suggestions("Edit", "/etc/app/x.conf", cwd)] == [
        "/etc/app/**"
    ]
    assert [r.rule_content for r in file_suggestions("Edit", "d[1]/a", cwd)] == ["d[[]1]/**"]
    rule = file_suggestions("Write", "src/a.py", cwd)[0]
    assert (rule.tool_name, rule.behavior) == ("Write", PermissionBehavior.ALLOW)
    assert glob_match(rule.rule_content or "", "src/b.py", cwd)


def test_file_read_paths(project: Path) -> None:
    cwd = str(project)
    assert file_read_paths(None, cwd) == [cwd]
    assert file_read_paths("src", cwd) == [f"{cwd}/src"]
    assert file_read_paths(None, cwd, "**/*.py") == [cwd]
    assert file_read_paths(None, cwd, "/etc/*.conf") == ["/etc"]
    assert file_read_paths("src", cwd, "../../*") == [str(project.parent)]


def test_file_write_permission(project: Path, home: Path) -> None:
    cwd = str(project)
    default, edits = make_context(project), make_context(project, PermissionMode.ACCEPT_EDITS)
    sensitive = file_write_permission("~/.bashrc", edits, cwd)
    assert (sensitive.behavior, sensitive.bypass_immune) == (PermissionBehavior.ASK, True)
    assert file_write_permission("src/a.py", edits, cwd).behavior is PermissionBehavior.ALLOW
    assert file_write_permission("../x.py", edits, cwd).behavior is PermissionBehavior.PASSTHROUGH
    assert (
        file_write_permission("src/a.py", default, cwd).behavior is PermissionBehavior.PASSTHROUGH
    )
    extra = file_write_permission("src/.secrets", default, cwd, dangerous_files=[".secrets"])
    assert extra.bypass_immune
