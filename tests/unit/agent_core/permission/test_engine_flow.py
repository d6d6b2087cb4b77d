"""The engine's per-mode flowcharts, on a custom tool whose own check answers as scripted."""

from __future__ import annotations

from pathlib import Path

import pytest
from permission_tools import ScriptedTool, make_context

from agent_core.permission import (
    InvalidRuleError,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)

ALLOW, DENY, ASK = PermissionBehavior.ALLOW, PermissionBehavior.DENY, PermissionBehavior.ASK
PASSTHROUGH = PermissionBehavior.PASSTHROUGH
CALL = {"target": "prod-eu"}
MODES = list(PermissionMode)


def _rule(behavior: PermissionBehavior, content: str | None = None) -> PermissionRule:
    return PermissionRule(tool_name="Deploy", rule_content=content, behavior=behavior)


def _engine(mode: PermissionMode, *rules: PermissionRule) -> PermissionEngine:
    engine = PermissionEngine(PermissionContext(mode=mode))
    engine.add_rules(rules)
    return engine


def _tool(
    behavior: PermissionBehavior, *, immune: bool = False, read_only: bool = False
) -> ScriptedTool:
    decision = PermissionDecision(
        behavior=behavior, message="tool says so", reason="tool:check", bypass_immune=immune
    )
    return ScriptedTool(decision, read_only=read_only)


@pytest.mark.parametrize("mode", MODES)
async def test_a_deny_rule_denies_in_every_mode(mode: PermissionMode) -> None:
    engine = _engine(mode, _rule(DENY), _rule(ASK), _rule(ALLOW))
    result = await engine.decide(_tool(ALLOW, read_only=True), CALL)
    assert result.behavior is DENY
    assert result.reason == "rule:deny"
    assert "Deploy" in result.message


@pytest.mark.parametrize("mode", MODES)
async def test_an_ask_rule_beats_allow_rules_and_tool_allow(mode: PermissionMode) -> None:
    tool = _tool(ALLOW, read_only=True)
    result = await _engine(mode, _rule(ASK), _rule(ALLOW)).decide(tool, CALL)
    expected = DENY if mode is PermissionMode.DONT_ASK else ASK
    assert result.behavior is expected
    assert result.reason == "rule:ask"
    assert tool.checked == 0


@pytest.mark.parametrize(
    ("mode", "tool_says", "immune", "allow_rule", "expected"),
    [
        # DEFAULT
        ("default", ALLOW, False, False, ALLOW),
        ("default", DENY, False, True, DENY),
        ("default", ASK, True, True, ASK),
        ("default", ASK, False, True, ALLOW),
        ("default", ASK, False, False, ASK),
        ("default", PASSTHROUGH, False, True, ALLOW),
        ("default", PASSTHROUGH, False, False, ASK),
        # ACCEPT_EDITS, for a call that is not read-only: as DEFAULT
        ("accept_edits", ALLOW, False, False, ALLOW),
        ("accept_edits", DENY, False, True, DENY),
        ("accept_edits", ASK, True, True, ASK),
        ("accept_edits", ASK, False, True, ALLOW),
        ("accept_edits", PASSTHROUGH, False, False, ASK),
        # BYPASS: tool DENY stands, every ASK is skipped
        ("bypass", ALLOW, False, False, ALLOW),
        ("bypass", DENY, False, True, DENY),
        ("bypass", ASK, True, False, ALLOW),
        ("bypass", ASK, False, False, ALLOW),
        ("bypass", PASSTHROUGH, False, False, ALLOW),
        # DONT_ASK: every ASK becomes DENY
        ("dont_ask", ALLOW, False, False, ALLOW),
        ("dont_ask", DENY, False, True, DENY),
        ("dont_ask", ASK, True, True, DENY),
        ("dont_ask", ASK, False, True, ALLOW),
        ("dont_ask", ASK, False, False, DENY),
        ("dont_ask", PASSTHROUGH, False, True, ALLOW),
        ("dont_ask", PASSTHROUGH, False, False, DENY),
    ],
)
async def test_flowchart_after_the_tool_check(
    mode: str,
    tool_says: PermissionBehavior,
    immune: bool,
    allow_rule: bool,
    expected: PermissionBehavior,
) -> None:
    engine = _engine(PermissionMode(mode), *([_rule(ALLOW)] if allow_rule else []))
    tool = _tool(tool_says, immune=immune)
    result = await engine.decide(tool, CALL)
    assert result.behavior is expected, result
    assert tool.checked == 1
    if expected is DENY:
        assert result.message


async def test_a_safety_ask_keeps_its_message_and_stays_immune() -> None:
    result = await _engine(PermissionMode.DEFAULT, _rule(ALLOW)).decide(
        _tool(ASK, immune=True), CALL
    )
    assert result.bypass_immune
    assert result.message == "tool says so"
    assert result.suggestions == []  # accepting an allow rule could not silence it


async def test_dont_ask_explains_why_it_denied() -> None:
    result = await _engine(PermissionMode.DONT_ASK).decide(_tool(ASK, immune=True), CALL)
    assert result.behavior is DENY
    assert "tool says so" in result.message
    assert "DONT_ASK" in result.message


@pytest.mark.parametrize("mode", [PermissionMode.EXPLORE, PermissionMode.ACCEPT_EDITS])
async def test_read_only_calls_are_allowed_without_the_tool_check(mode: PermissionMode) -> None:
    tool = _tool(DENY, read_only=True)
    result = await _engine(mode).decide(tool, CALL)
    assert result.behavior is ALLOW
    assert tool.checked == 0


async def test_explore_denies_modifications_even_with_allow_rules() -> None:
    tool = _tool(ALLOW)
    result = await _engine(PermissionMode.EXPLORE, _rule(ALLOW)).decide(tool, CALL)
    assert result.behavior is DENY
    assert result.reason == "mode:explore"
    assert "EXPLORE" in result.message
    assert tool.checked == 0


async def test_default_mode_does_not_auto_allow_read_only_tools() -> None:
    result = await _engine(PermissionMode.DEFAULT).decide(_tool(PASSTHROUGH, read_only=True), CALL)
    assert result.behavior is ASK


async def test_rules_match_with_the_tools_match_rule() -> None:
    engine = _engine(PermissionMode.DEFAULT, _rule(ALLOW, '{"target": "staging"}'))
    assert (await engine.decide(_tool(PASSTHROUGH), {"target": "staging"})).behavior is ALLOW
    assert (await engine.decide(_tool(PASSTHROUGH), CALL)).behavior is ASK


async def test_rules_of_other_tools_do_not_apply() -> None:
    other = PermissionRule(tool_name="Other", behavior=DENY)
    result = await _engine(PermissionMode.DEFAULT, other).decide(_tool(ALLOW), CALL)
    assert result.behavior is ALLOW


async def test_ask_merges_the_tools_suggestions_with_its_own() -> None:
    offered = PermissionRule(tool_name="Deploy", rule_content="offered", behavior=ALLOW)
    decision = PermissionDecision(behavior=ASK, suggestions=[offered])
    result = await _engine(PermissionMode.DEFAULT).decide(ScriptedTool(decision), CALL)
    contents = [rule.rule_content for rule in result.suggestions]
    assert contents == ["offered", '{"target": "prod-eu"}']


async def test_an_accepted_suggestion_is_persisted_and_applies_next_time() -> None:
    engine = _engine(PermissionMode.DEFAULT)
    tool = _tool(PASSTHROUGH)
    first = await engine.decide(tool, CALL)
    assert first.behavior is ASK

    added = engine.add_rules(first.suggestions)

    assert added == first.suggestions
    assert engine.context.allow_rules["Deploy"] == first.suggestions
    assert (await engine.decide(tool, CALL)).behavior is ALLOW


def test_add_rules_sorts_by_behavior_and_skips_duplicates() -> None:
    engine = _engine(PermissionMode.DEFAULT)
    deny, ask = _rule(DENY, "a"), _rule(ASK, "b")
    again = PermissionRule(tool_name="Deploy", rule_content="a", behavior=DENY, source="other")

    assert engine.add_rules([deny, ask, again]) == [deny, ask]
    assert engine.context.deny_rules == {"Deploy": [deny]}
    assert engine.context.ask_rules == {"Deploy": [ask]}
    assert engine.context.allow_rules == {}


def test_a_passthrough_rule_cannot_be_stored() -> None:
    with pytest.raises(InvalidRuleError):
        _engine(PermissionMode.DEFAULT).add_rules([_rule(PASSTHROUGH)])


async def test_a_mode_change_on_the_context_applies_at_once(project: Path) -> None:
    context = make_context(project)
    engine = PermissionEngine(context)
    tool = _tool(PASSTHROUGH)
    assert (await engine.decide(tool, CALL)).behavior is ASK
    context.mode = PermissionMode.DONT_ASK
    assert (await engine.decide(tool, CALL)).behavior is DENY
