"""The built-in tools' permission hooks, alone and through the permission engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.permission import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from agent_core.tool import Bash, Edit, Glob, Grep, Read, Write

ALLOW, ASK, DENY, PASS = (
    PermissionBehavior.ALLOW,
    PermissionBehavior.ASK,
    PermissionBehavior.DENY,
    PermissionBehavior.PASSTHROUGH,
)


def context(ws: Path, mode: PermissionMode = PermissionMode.DEFAULT) -> PermissionContext:
    return PermissionContext(
        mode=mode, working_directories={"ws": AdditionalWorkingDirectory(path=str(ws))}
    )


# --- Bash -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "read_only"),
    [("ls -la", True), ("git status && cat x", True), ("rm x", False), ("", False)],
)
async def test_bash_read_only_depends_on_the_command(
    ws: Path, command: str, read_only: bool
) -> None:
    assert await Bash(ws).check_read_only({"command": command}) is read_only


async def test_bash_safety_checks(ws: Path) -> None:
    bash = Bash(ws, additional_dangerous_files=[".secrets"])
    ctx = context(ws)

    read = await bash.check_permissions({"command": "git status"}, ctx)
    injected = await bash.check_permissions({"command": "echo $(whoami)"}, ctx)
    wipe = await bash.check_permissions({"command": "rm -rf /"}, ctx)
    secret = await bash.check_permissions({"command": "rm .secrets"}, ctx)
    plain = await bash.check_permissions({"command": "npm install"}, ctx)

    assert read.behavior is ALLOW
    assert (injected.behavior, injected.bypass_immune) == (ASK, True)
    assert (wipe.behavior, wipe.bypass_immune) == (ASK, True)
    assert (secret.behavior, secret.bypass_immune) == (ASK, True)
    assert plain.behavior is PASS


def test_bash_prefix_rules_and_suggestions(ws: Path) -> None:
    bash = Bash(ws)

    assert bash.match_rule("npm run:*", {"command": "npm run build"})
    assert not bash.match_rule("npm run:*", {"command": "npm install"})
    assert bash.match_rule("git commit:*", {"command": 'git commit -m "fix"'})
    assert not bash.match_rule("git commit:*", {"command": "git push"})
    [rule] = bash.generate_suggestions({"command": 'git commit -m "fix bug"'})
    assert (rule.tool_name, rule.rule_content, rule.behavior) == ("Bash", "git commit:*", ALLOW)


async def test_bash_through_the_engine(ws: Path) -> None:
    ctx = context(ws)
    ctx.allow_rules["Bash"] = [
        PermissionRule(tool_name="Bash", rule_content="npm test:*", behavior=ALLOW)
    ]
    engine = PermissionEngine(ctx)
    bash = Bash(ws)

    allowed = await engine.decide(bash, {"command": "npm test -- -x"})
    chained = await engine.decide(bash, {"command": "npm test && rm -rf build"})

    assert allowed.behavior is ALLOW
    assert chained.behavior is ASK


# --- file tools -------------------------------------------------------------------------------


async def test_writes_to_sensitive_files_always_ask(ws: Path) -> None:
    for tool in (Write(ws), Edit(ws)):
        decision = await tool.check_permissions({"file_path": ".env"}, context(ws))
        assert (decision.behavior, decision.bypass_immune) == (ASK, True)
    extra = Write(ws, additional_dangerous_files=["prod.yaml"])
    decision = await extra.check_permissions({"file_path": "conf/prod.yaml"}, context(ws))
    assert decision.behavior is ASK


async def test_accept_edits_allows_only_inside_the_working_directory(
    ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    write = Write(ws)
    ctx = context(ws, PermissionMode.ACCEPT_EDITS)

    inside = await write.check_permissions({"file_path": "src/a.py"}, ctx)
    dotdot = await write.check_permissions({"file_path": "../x.py"}, ctx)
    escape = await write.check_permissions({"file_path": "link/x.py"}, ctx)
    default = await write.check_permissions({"file_path": "src/a.py"}, context(ws))

    assert inside.behavior is ALLOW
    assert (dotdot.behavior, escape.behavior, default.behavior) == (PASS, PASS, PASS)


async def test_read_leaves_the_decision_to_the_engine(ws: Path) -> None:
    read = Read(ws)

    assert (await read.check_permissions({"file_path": "a"}, context(ws))).behavior is PASS
    assert await read.check_read_only({"file_path": "a"})
    assert not await Write(ws).check_read_only({"file_path": "a"})


def test_file_rules_are_globs_and_suggest_the_directory(ws: Path) -> None:
    edit = Edit(ws)

    assert edit.match_rule("src/**", {"file_path": "src/deep/a.py"})
    assert edit.match_rule("src/**/*.py", {"file_path": str(ws / "src/x/b.py")})
    assert not edit.match_rule("src/**/*.py", {"file_path": "src/x/b.txt"})
    assert edit.match_rule("config.json", {"file_path": "config.json"})
    assert not edit.match_rule("config.json", {"file_path": "other/config.json"})
    assert edit.match_rule(None, {"file_path": "anything"})
    [rule] = edit.generate_suggestions({"file_path": str(ws / "src/main.py")})
    assert (rule.tool_name, rule.rule_content) == ("Edit", "src/**")


async def test_rules_see_through_symlinks(ws: Path, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (ws / "innocent").symlink_to(secrets)
    ctx = context(ws)
    ctx.deny_rules["Read"] = [
        PermissionRule(tool_name="Read", rule_content=f"{secrets}/**", behavior=DENY)
    ]
    ctx.allow_rules["Read"] = [PermissionRule(tool_name="Read", rule_content="**", behavior=ALLOW)]
    engine = PermissionEngine(ctx)

    decision = await engine.decide(Read(ws), {"file_path": "innocent/key.pem"})
    fine = await engine.decide(Read(ws), {"file_path": "notes.txt"})

    assert decision.behavior is DENY
    assert fine.behavior is ALLOW


async def test_engine_modes_with_file_tools(ws: Path) -> None:
    explore = PermissionEngine(context(ws, PermissionMode.EXPLORE))
    default = PermissionEngine(context(ws))

    assert (await explore.decide(Read(ws), {"file_path": "a.txt"})).behavior is ALLOW
    assert (await explore.decide(Write(ws), {"file_path": "a.txt"})).behavior is DENY
    asked = await default.decide(Write(ws), {"file_path": "src/a.py", "content": "x"})
    assert asked.behavior is ASK
    assert [r.rule_content for r in asked.suggestions] == ["src/**"]


# --- search tools -----------------------------------------------------------------------------


def test_search_rules_follow_the_searched_directory(ws: Path, tmp_path: Path) -> None:
    grep, glob = Grep(ws), Glob(ws)

    assert grep.match_rule("src/**", {"pattern": "x", "path": "src/sub"})
    assert grep.match_rule("src/**", {"pattern": "x", "path": "src"})
    assert not grep.match_rule("src/**", {"pattern": "x", "path": "docs"})
    assert not grep.match_rule("src/**", {"pattern": "x"})
    assert [r.rule_content for r in grep.generate_suggestions({"pattern": "x", "path": "src"})] == [
        "src/**"
    ]
    assert [r.rule_content for r in glob.generate_suggestions({"pattern": "*.py"})] == ["**"]
    outside = str(tmp_path / "other" / "*.py")
    assert glob.read_paths({"pattern": outside}) == [str(tmp_path / "other")]
    assert [r.rule_content for r in glob.generate_suggestions({"pattern": outside})] == [
        f"{tmp_path / 'other'}/**"
    ]


async def test_confined_reads_ask_outside_the_working_directory(ws: Path, tmp_path: Path) -> None:
    engine = PermissionEngine(context(ws, PermissionMode.ACCEPT_EDITS), confine_reads=True)

    inside = await engine.decide(Grep(ws), {"pattern": "x", "path": "src"})
    outside = await engine.decide(Grep(ws), {"pattern": "x", "path": str(tmp_path)})
    bash_outside = await engine.decide(Bash(ws), {"command": f"cat {tmp_path}/x"})

    assert inside.behavior is ALLOW
    assert outside.behavior is ASK
    assert bash_outside.behavior is ASK
