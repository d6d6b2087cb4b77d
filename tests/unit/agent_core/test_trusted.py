"""`trusted` builds the same models as validation does, for values already valid."""

from __future__ import annotations

import pytest

from agent_core._trusted import (
    trusted,
    trusted_checked,
    trusted_copy,
    trusted_maker,
    trusted_set,
)
from agent_core.event import HintBlockEvent, ReplyEndEvent, TextBlockDeltaEvent
from agent_core.message import (
    ErrorInfo,
    Msg,
    ReplyFinishedReason,
    TextBlock,
    ToolCallBlock,
    URLSource,
    UserMsg,
)


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (TextBlockDeltaEvent, {"reply_id": "r", "block_id": "b", "delta": "hi"}),
        (
            ReplyEndEvent,
            {
                "reply_id": "r",
                "session_id": "s",
                "finished_reason": ReplyFinishedReason.ERROR,
                "error": ErrorInfo(message="boom"),
            },
        ),
        (HintBlockEvent, {"reply_id": "r", "block_id": "b", "hint": "note", "source": None}),
        (ToolCallBlock, {"id": "c1", "name": "add", "input": "", "created_at": "t"}),
    ],
)
def test_a_trusted_model_equals_the_validated_one(cls: type, values: dict[str, object]) -> None:
    fixed = {"id": "x1", "created_at": "2026-01-01T00:00:00+00:00", **values}
    built, validated = trusted(cls, **fixed), cls(**fixed)
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_fields_set == validated.model_fields_set


def test_defaults_are_filled_fresh_for_each_instance() -> None:
    first = trusted(TextBlockDeltaEvent, reply_id="r", block_id="b", delta="a")
    second = trusted(TextBlockDeltaEvent, reply_id="r", block_id="b", delta="a")
    assert first.id != second.id
    assert first.metadata is not second.metadata
    assert first.model_fields_set == {"reply_id", "block_id", "delta"}


def test_a_missing_required_field_is_refused() -> None:
    with pytest.raises(TypeError, match="delta"):
        trusted(TextBlockDeltaEvent, reply_id="r", block_id="b")


def test_a_maker_builds_what_trusted_builds() -> None:
    make = trusted_maker(ReplyEndEvent, "reply_id", "finished_reason", "id", "created_at")
    fixed = {"id": "x1", "created_at": "2026-01-01T00:00:00+00:00"}
    values = {"reply_id": "r", "finished_reason": ReplyFinishedReason.ERROR, **fixed}
    built, expected = make(**values), trusted(ReplyEndEvent, **values)
    assert built == expected
    assert built.model_dump_json() == expected.model_dump_json()
    assert built.model_fields_set == expected.model_fields_set


def test_a_maker_fills_defaults_fresh_for_each_instance() -> None:
    make = trusted_maker(TextBlockDeltaEvent, "reply_id", "block_id", "delta")
    first, second = (
        make(reply_id="r", block_id="b", delta="a"),
        make(reply_id="r", block_id="b", delta="a"),
    )
    assert first.id != second.id
    assert first.metadata == {}
    assert first.metadata is not second.metadata
    assert first.model_fields_set == {"reply_id", "block_id", "delta"}


def test_a_maker_without_a_required_field_or_with_an_unknown_one_is_refused() -> None:
    with pytest.raises(TypeError, match="block_id"):
        trusted_maker(TextBlockDeltaEvent, "reply_id", "delta")
    with pytest.raises(TypeError, match="colour"):
        trusted_maker(TextBlockDeltaEvent, "reply_id", "block_id", "delta", "colour")
    with pytest.raises(TypeError, match="without validation"):
        trusted_maker(URLSource, "url")


@pytest.mark.parametrize("cls", [Msg, URLSource])
def test_models_whose_validators_rewrite_data_are_refused(cls: type) -> None:
    with pytest.raises(TypeError, match="without validation"):
        trusted(cls)


def test_a_checked_message_equals_the_validated_one() -> None:
    text = TextBlock(id="b1", created_at="2026-01-01T00:00:00+00:00", text="hi")
    fields = {"name": "u", "role": "user", "id": "m1", "created_at": "2026-01-01T00:00:00+00:00"}
    built = trusted_checked(Msg, content=[text], **fields)
    validated = Msg.model_validate({**fields, "content": [text]})
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_fields_set == validated.model_fields_set


def test_a_text_message_is_built_as_validation_builds_it() -> None:
    quick = UserMsg("u", "hi")
    validated = Msg.model_validate({"name": "u", "role": "user", "content": "hi"})
    assert quick.model_fields_set == validated.model_fields_set
    assert quick.content[0].model_fields_set == validated.content[0].model_fields_set
    assert quick.model_dump(exclude={"id", "created_at", "content"}) == validated.model_dump(
        exclude={"id", "created_at", "content"}
    )
    assert quick.get_text_content() == "hi"


@pytest.mark.parametrize(
    "block",
    [
        TextBlock(text="hi"),
        ToolCallBlock(id="c1", name="add", input="{}", finished_at="t"),
    ],
)
def test_a_trusted_copy_equals_model_copy(block: TextBlock | ToolCallBlock) -> None:
    update = {"text": "hello"} if isinstance(block, TextBlock) else {"input": '{"a": 1}'}
    copied, expected = trusted_copy(block, **update), block.model_copy(update=update)
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set
    assert copied.__dict__ is not block.__dict__
    assert trusted_copy(block) == block


def test_a_trusted_assignment_stores_the_value_and_marks_the_field_set() -> None:
    block = TextBlock(id="b1", text="a", created_at="t0")
    expected = block.model_copy()
    trusted_set(block, "finished_at", "t")
    expected.finished_at = "t"
    assert block == expected
    assert block.model_fields_set == expected.model_fields_set
