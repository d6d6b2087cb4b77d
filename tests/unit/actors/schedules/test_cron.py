"""Cron expressions as cron users mean them, and the validation of schedule timing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from actors.schedules.cron import cron_trigger, latest_fire_time
from actors.schedules.store import ScheduleData
from actors.storage.records import ChatModelConfig
from agent_core.permission import PermissionMode

MODEL = ChatModelConfig(type="openai_credential", credential_id="c1", model="gpt-4o-mini")
SATURDAY = datetime(2030, 1, 5, 12, tzinfo=UTC)


def fire_times(expression: str, timezone: str, start: datetime, count: int) -> list[datetime]:
    trigger = cron_trigger(expression, timezone)
    times: list[datetime] = []
    previous = None
    now = start
    while len(times) < count:
        previous = trigger.get_next_fire_time(previous, now)
        times.append(previous)
        now = previous + timedelta(microseconds=1)
    return times


def test_weekday_numbers_count_from_sunday_like_cron() -> None:
    week = fire_times("0 9 * * 1-5", "America/New_York", SATURDAY, 5)
    assert [t.strftime("%a") for t in week] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert all(t.hour == 9 and t.tzinfo == ZoneInfo("America/New_York") for t in week)
    for sunday in ("0", "7", "sun", "SUN"):
        (fire,) = fire_times(f"0 0 * * {sunday}", "UTC", SATURDAY, 1)
        assert fire.strftime("%a") == "Sun"
    every_other = fire_times("0 0 * * */2", "UTC", SATURDAY, 4)
    assert [t.strftime("%a") for t in every_other] == ["Sun", "Tue", "Thu", "Sat"]
    weekend = fire_times("0 0 * * 5-7", "UTC", SATURDAY, 3)  # Saturday noon: its 00:00 is past
    assert [t.strftime("%a") for t in weekend] == ["Sun", "Fri", "Sat"]


def test_day_of_month_or_weekday_fires_on_either() -> None:
    # Cron: the 13th of every month *and* every Friday (not only Friday the 13th).
    times = fire_times("0 0 13 * 5", "UTC", datetime(2030, 1, 1, tzinfo=UTC), 4)
    assert [t.date().isoformat() for t in times] == [
        "2030-01-04",
        "2030-01-11",
        "2030-01-13",
        "2030-01-18",
    ]


@pytest.mark.parametrize(
    ("expression", "timezone"),
    [
        ("* * * *", "UTC"),
        ("* * * * * *", "UTC"),
        ("61 * * * *", "UTC"),
        ("* 24 * * *", "UTC"),
        ("* * * * 8", "UTC"),
        ("* * * * mon-", "UTC"),
        ("* * * * 5-1", "UTC"),
        ("* * * * */0", "UTC"),
        ("0 9 * * *", "Mars/Olympus_Mons"),
        ("0 9 * * *", ""),
    ],
)
def test_invalid_expressions_and_zones_are_rejected(expression: str, timezone: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        cron_trigger(expression, timezone)
    with pytest.raises(ValidationError):
        ScheduleData(
            name="s", cron_expression=expression, timezone=timezone, chat_model_config=MODEL
        )


def test_latest_fire_time_is_the_last_one_in_the_window() -> None:
    trigger = cron_trigger("*/15 * * * *", "UTC")
    since = datetime(2030, 1, 1, 10, 0, tzinfo=UTC)
    assert latest_fire_time(trigger, since, since + timedelta(minutes=40)) == datetime(
        2030, 1, 1, 10, 30, tzinfo=UTC
    )
    quarter = since + timedelta(minutes=14)
    assert latest_fire_time(trigger, since, quarter) == since  # the window includes its start
    assert latest_fire_time(trigger, since + timedelta(seconds=1), quarter) is None


def test_schedule_defaults_window_and_naive_times() -> None:
    data = ScheduleData(name="s", cron_expression="0 9 * * 1-5", chat_model_config=MODEL)
    assert data.permission_mode is PermissionMode.DONT_ASK
    assert data.timezone == "Etc/UTC"
    assert data.stateful is False
    assert data.enabled is True
    assert data.started_at.tzinfo is not None
    naive = ScheduleData(
        name="s",
        cron_expression="0 9 * * *",
        chat_model_config=MODEL,
        started_at=datetime(2030, 1, 1, 8),  # noqa: DTZ001 - naive on purpose: read as UTC
    )
    assert naive.started_at == datetime(2030, 1, 1, 8, tzinfo=UTC)
    with pytest.raises(ValidationError, match="ended_at must be after started_at"):
        ScheduleData(
            name="s",
            cron_expression="0 9 * * *",
            chat_model_config=MODEL,
            started_at=datetime(2030, 1, 2, tzinfo=UTC),
            ended_at=datetime(2030, 1, 1, tzinfo=UTC),
        )
