"""Troupe's permission decisions against AgentScope 2.0.11's, case by case.

`tests/reference/data/permissions.json` holds AgentScope's decisions for thousands of tool
calls (see `tests/reference/generate_permissions.py`): shell commands and file-tool calls
under every permission mode, several working-directory setups and rule sets. The same calls
go through Troupe's engine and built-in tools here. Troupe may be stricter than AgentScope
(ask or deny where it allows, deny where it asks), never looser; every stricter case must be
explained by one of the accepted differences in `STRICTER`, and the agreement must stay at
or above 99%.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_core.permission import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
    bash_permission,
    is_read_only,
)
from agent_core.tool.base import ToolBase
from agent_core.tool.builtin import Bash, Edit, Glob, Grep, Read, Write

DATA = Path(__file__).parents[3] / "reference" / "data" / "permissions.json"
BAR = 0.99
_RANK = {"a": 0, "p": 1, "k": 1, "s": 1, "d": 2}
"""How much a decision lets through: ALLOW < ASK (PASSTHROUGH goes on to ask) < DENY."""


@dataclass(frozen=True)
class Case:
    """One call under one configuration, with both decisions."""

    tool: str
    call: str
    mode: str
    cwd: str
    rules: str
    reference: str
    troupe: str
    reason: str

    @property
    def looser(self) -> bool:
        return _RANK[self.troupe] < _RANK[self.reference]

    @property
    def stricter(self) -> bool:
        return _RANK[self.troupe] > _RANK[self.reference]


STRICTER: dict[str, tuple[str, Callable[[Case], bool]]] = {
    "read-tools-ask-by-default": (
        "Read, Glob and Grep ask in DEFAULT (and so are denied in DONT_ASK), as the spec's "
        "mode table says; AgentScope 2.0.11 auto-allows every read-only tool in every mode.",
        lambda c: c.tool in ("Read", "Glob", "Grep") and c.mode in ("default", "dont_ask"),
    ),
    "rules-see-every-command": (
        "Deny and ask rules also match each command of a line (`ls && rm x` is caught by "
        "`rm:*`, `npm test || echo x` by `echo *`) and file rules the resolved and the real "
        "path, besides the literal reading of the raw input.",
        lambda c: c.reason in ("rule:deny", "rule:ask"),
    ),
    "unparsable": (
        "A command Troupe's parser cannot read gets a safety prompt; AgentScope's parser "
        "recovers and may allow it (`echo 'unterminated`).",
        lambda c: c.reason == "safety:unparsed",
    ),
    "safety-checks-see-more": (
        "Troupe's safety checks find more: commands after `&` or a newline, `curl | sh`, "
        "sudo, shutdown, removals of working directories, system directories and more "
        "sensitive files (`~/.aws`, SSH keys), paths reached through `cd` or symlinks.",
        lambda c: c.reason.startswith("safety:") and c.reference != "s",
    ),
    "allow-rules-cover-every-command": (
        "An allow rule must match the line literally and also cover every command of it "
        "(`npm test:*` does not allow `npm test; curl x`, `env:*` not `env A=1 make`); "
        "file rules must cover the resolved path (`src/**` not `src/../../out/x`).",
        lambda c: c.reference == "a" and c.rules != "none",
    ),
    "read-only-analysis-sees-more": (
        "Troupe's analysis finds what AgentScope's textual read-only check misses: commands "
        "after `&` or a newline, assignments that steer programs (`X=1 ls`, `PATH=. ls`), "
        "browsers started by `gh ... --web`, `unset` in a pipeline.",
        lambda c: c.tool == "Bash" and c.reference == "a" and c.reason.startswith("mode:"),
    ),
}


def _fill(text: str, places: dict[str, str]) -> str:
    for mark, path in places.items():
        text = text.replace(mark, path)
    return text


def _build(layout: dict[str, Any], root: Path) -> None:
    for directory in layout["dirs"]:
        (root / directory).mkdir(parents=True, exist_ok=True)
    for file in layout["files"]:
        (root / file).write_text("x\n")
    for link, target in layout["symlinks"].items():
        (root / link).symlink_to((root / target).resolve())


def _letter(decision: PermissionDecision) -> str:
    if decision.behavior is PermissionBehavior.ASK and decision.bypass_immune:
        return "s"
    return {"allow": "a", "ask": "k", "deny": "d", "passthrough": "p"}[decision.behavior.value]


def _context(
    data: dict[str, Any], config: dict[str, str], places: dict[str, str]
) -> PermissionContext:
    setup = data["cwds"][config["cwd"]]
    # AgentScope's process directory is an implicit working directory; Troupe's are explicit
    directories = [_fill(d, places) for d in [setup["cwd"], *setup["dirs"]]]
    stores: dict[str, dict[str, list[PermissionRule]]] = {"allow": {}, "deny": {}, "ask": {}}
    for behavior, by_tool in data["rule_sets"][config["rules"]].items():
        for tool, contents in by_tool.items():
            stores[behavior][tool] = [
                PermissionRule(
                    tool_name=tool,
                    rule_content=None if c is None else _fill(c, places),
                    behavior=PermissionBehavior(behavior),
                )
                for c in contents
            ]
    return PermissionContext(
        mode=PermissionMode(config["mode"]),
        working_directories={d: AdditionalWorkingDirectory(path=d) for d in directories},
        allow_rules=stores["allow"],
        deny_rules=stores["deny"],
        ask_rules=stores["ask"],
    )


async def _cases(data: dict[str, Any], root: Path) -> list[Case]:
    places = {mark: str((root / place).resolve()) for mark, place in data["places"].items()}
    cases = []
    commands = [_fill(c, places) for c in data["bash"]["commands"]]
    for index, config in enumerate(data["configs"]):
        cwd = _fill(data["cwds"][config["cwd"]]["cwd"], places)
        engine = PermissionEngine(_context(data, config, places))
        tools: dict[str, ToolBase] = {
            "Bash": Bash(cwd),
            "Read": Read(cwd),
            "Write": Write(cwd),
            "Edit": Edit(cwd),
            "Glob": Glob(cwd),
            "Grep": Grep(cwd),
        }
        calls = [
            ("Bash", raw, {"command": command})
            for raw, command in zip(data["bash"]["commands"], commands, strict=True)
        ]
        calls += [
            (
                call["tool"],
                json.dumps(call["input"]),
                {k: _fill(v, places) for k, v in call["input"].items()},
            )
            for call in data["files"]["calls"]
        ]
        expected = data["bash"]["decisions"][index] + data["files"]["decisions"][index]
        for (tool, shown, tool_input), reference in zip(calls, expected, strict=True):
            if reference == "-":  # not a case: the rule set does not concern this call
                continue
            decision = await engine.decide(tools[tool], tool_input)
            cases.append(
                Case(
                    tool,
                    shown,
                    **config,
                    reference=reference,
                    troupe=_letter(decision),
                    reason=decision.reason,
                )
            )
    return cases


def _explained(case: Case) -> str | None:
    return next((name for name, (_, test) in STRICTER.items() if test(case)), None)


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DATA.read_text())
    return loaded


@pytest.fixture(scope="module")
def root(data: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("permref").resolve() / "r"
    _build(data["layout"], path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(path / "home"))
        yield path


async def test_troupe_is_never_looser_and_agrees_on_99_percent(
    data: dict[str, Any], root: Path
) -> None:
    cases = await _cases(data, root)
    same = [c for c in cases if _RANK[c.troupe] == _RANK[c.reference]]
    print(f"\n{len(same)}/{len(cases)} cases agree ({len(same) / len(cases):.2%})")
    totals, agreeing = Counter(c.tool for c in cases), Counter(c.tool for c in same)
    for tool in sorted(totals):
        print(f"  {tool}: {agreeing[tool]}/{totals[tool]}")
    for name, count in Counter(_explained(c) for c in cases if c.stricter).most_common():
        print(f"  stricter, {name}: {count}")

    looser = [c for c in cases if c.looser]
    assert not looser, f"{len(looser)} looser cases, e.g. {looser[:5]}"
    unexplained = [c for c in cases if c.stricter and _explained(c) is None]
    assert not unexplained, f"{len(unexplained)} unexplained stricter cases: {unexplained[:5]}"
    assert len(same) / len(cases) >= BAR


def test_read_only_is_never_wider_than_the_reference(data: dict[str, Any], root: Path) -> None:
    places = {mark: str((root / place).resolve()) for mark, place in data["places"].items()}
    bash = data["bash"]
    verdicts = [
        (is_read_only(_fill(command, places)), reference == "r")
        for command, reference in zip(bash["commands"], bash["read_only"], strict=True)
    ]
    print(f"\nread-only: {sum(a == b for a, b in verdicts)}/{len(verdicts)} agree")
    assert not [
        c
        for c, (ours, theirs) in zip(bash["commands"], verdicts, strict=True)
        if ours and not theirs
    ]


def test_check_permissions_is_never_looser_in_default_mode(
    data: dict[str, Any], root: Path
) -> None:
    """The Bash tool's own verdict (ALLOW, safety ASK or PASSTHROUGH), no rules, DEFAULT mode."""
    places = {mark: str((root / place).resolve()) for mark, place in data["places"].items()}
    cwd = places["@WS@"]
    context = PermissionContext(working_directories={cwd: AdditionalWorkingDirectory(path=cwd)})
    verdicts = []
    for command, reference in zip(
        data["bash"]["commands"], data["bash"]["check_permissions_default"], strict=True
    ):
        decision = bash_permission(_fill(command, places), context, cwd)
        ours = "p" if decision.behavior is PermissionBehavior.PASSTHROUGH else _letter(decision)
        verdicts.append((command, ours, reference))
    same = sum(ours == reference for _, ours, reference in verdicts)
    print(f"\ncheck_permissions: {same}/{len(verdicts)} agree")
    assert not [v for v in verdicts if _RANK[v[1]] < _RANK[v[2]]]
