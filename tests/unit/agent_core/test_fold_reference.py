"""Troupe's `Msg.append_event` against AgentScope 2.0.11's, on the recorded event sequences.

`tests/reference/data/fold.json.gz` holds thousands of seeded event sequences and what AgentScope
folded each into (see `tests/reference/generate_fold.py`). Every sequence is replayed here from
its wire form; the folded Msg must equal AgentScope's, except where AgentScope stamped a fresh
id or timestamp (recorded as `"<generated>"`), and where AgentScope raised, Troupe must raise at
the same event.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from agent_core.errors import FoldError
from agent_core.event import EventType, parse_event
from agent_core.message import Msg

FIXTURE = Path(__file__).parents[2] / "reference" / "data" / "fold.json.gz"
BAR = 0.99

# AgentScope's exceptions are whatever its code happens to hit (a failed b64decode, reading
# `.data` off a URL source, a URL that does not validate); Troupe raises one typed error for all.
TROUPE_ERROR_FOR = {
    "binascii.Error": FoldError,
    "builtins.ValueError": FoldError,
    "builtins.AttributeError": FoldError,
    "pydantic_core._pydantic_core.ValidationError": FoldError,
}


@cache
def fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    return data


def wire_event(index: int, stored: dict[str, Any]) -> dict[str, Any]:
    """The event's full wire form: the file omits envelope fields equal to their defaults."""
    event = dict(stored)
    for key, default in fixture()["envelope"].items():
        if key == "reply_id" and event["type"] == EventType.CUSTOM:
            continue  # the one event that belongs to no reply
        value = default.format(index=index) if isinstance(default, str) else copy.copy(default)
        event.setdefault(key, value)
    return event


def troupe_outcome(case: dict[str, Any]) -> dict[str, Any]:
    msg = Msg.model_validate({**fixture()["msg"], "content": case["initial"]})
    for index, stored in enumerate(case["events"]):
        event = parse_event(wire_event(index, stored))
        try:
            msg.append_event(event)
        except Exception as exc:  # compared with what AgentScope raised
            return {"raises": {"at": index, "type": exc}}
    return {"msg": msg.model_dump(mode="json")}


def same(expected: Any, actual: Any) -> bool:
    """JSON equality, where a `"<generated>"` expectation accepts any string."""
    if expected == fixture()["generated"]:
        return isinstance(actual, str)
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(same(expected[k], actual[k]) for k in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(same(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return type(expected) is type(actual) and expected == actual


def agrees(case: dict[str, Any]) -> tuple[bool, str]:
    """Whether Troupe folds `case` as AgentScope did, and if not, how it differs."""
    try:
        outcome = troupe_outcome(case)
    except Exception as exc:  # Troupe rejected an event AgentScope accepted
        return False, f"Troupe could not parse an event: {exc!r}"
    expected = case["expected"]
    if "raises" in expected:
        raised = outcome.get("raises")
        error_type = TROUPE_ERROR_FOR.get(expected["raises"]["type"])
        ok = (
            raised is not None
            and error_type is not None
            and raised["at"] == expected["raises"]["at"]
            and isinstance(raised["type"], error_type)
        )
        return ok, f"expected {expected['raises']}, Troupe gave {outcome.get('raises', 'a Msg')}"
    if "raises" in outcome:
        return False, f"expected a Msg, Troupe raised {outcome['raises']}"
    ok = same(expected["msg"], outcome["msg"])
    return ok, f"expected {expected['msg']}\n     got {outcome['msg']}"


def test_troupe_folds_every_recorded_sequence_as_agentscope_does(
    record_property: pytest.RecordProperty,
) -> None:
    cases = fixture()["cases"]
    failures = []
    for case in cases:
        ok, detail = agrees(case)
        if not ok:
            failures.append(f"{case['case']}: {detail}")
    agreement = 1 - len(failures) / len(cases)
    record_property("fold_agreement", agreement)
    print(f"fold reference agreement: {len(cases) - len(failures)}/{len(cases)} = {agreement:.2%}")
    for failure in failures[:5]:
        print(failure)
    assert agreement >= BAR, f"{agreement:.2%} agreement; first differences:\n" + "\n".join(
        failures[:5]
    )


def test_fixture_covers_every_event_type_and_both_outcomes() -> None:
    cases = fixture()["cases"]
    assert len(cases) >= 2000
    types = Counter(e["type"] for c in cases for e in c["events"])
    assert set(types) == {t.value for t in EventType}
    raised = Counter(c["expected"]["raises"]["type"] for c in cases if "raises" in c["expected"])
    assert set(raised) <= set(TROUPE_ERROR_FOR)
    assert sum(raised.values()) < len(cases) / 4
    foreign = {e.get("reply_id") for c in cases for e in c["events"]} - {None}
    assert len(foreign) == 1  # events of another reply are in the file, not just the main one
