"""Standard 5-field cron expressions on APScheduler 3 triggers, and due-time arithmetic.

APScheduler 3's `CronTrigger.from_crontab` departs from cron in two ways that schedules written
for cron would notice, so `cron_trigger` corrects both:

* weekday numbers: APScheduler counts 0 = Monday, cron counts 0 (and 7) = Sunday. The
  day-of-week field is expanded to weekday names, which both agree on (`1-5` = mon-fri).
* restricted day-of-month *and* day-of-week: cron fires when either matches
  (`0 0 13 * 5` = every 13th and every Friday), APScheduler when both do. Such expressions
  become an `OrTrigger` of the two halves.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if TYPE_CHECKING:
    # APScheduler loads where a schedule is made or checked, not in every process importing it.
    from apscheduler.triggers.base import BaseTrigger

_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_TICK = timedelta(microseconds=1)


def zone(name: str) -> ZoneInfo:
    """Return the IANA time zone `name`.

    Raises:
        ValueError: `name` is not an IANA time zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown IANA time zone {name!r}") from exc


def cron_trigger(expression: str, timezone: str) -> BaseTrigger:
    """Return the trigger firing on the 5-field cron `expression`, evaluated in `timezone`.

    Raises:
        ValueError: the expression is not 5 valid cron fields, or the zone is unknown.
    """
    from apscheduler.triggers.combining import OrTrigger
    from apscheduler.triggers.cron import CronTrigger

    tz = zone(timezone)
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"a cron expression has 5 fields, got {len(fields)}: {expression!r}")
    minute, hour, day, month, weekday = fields
    days = _weekday_names(weekday)
    if day.startswith("*") or weekday.startswith("*"):
        return CronTrigger.from_crontab(f"{minute} {hour} {day} {month} {days}", timezone=tz)
    return OrTrigger(
        [
            CronTrigger.from_crontab(f"{minute} {hour} {day} {month} *", timezone=tz),
            CronTrigger.from_crontab(f"{minute} {hour} * {month} {days}", timezone=tz),
        ]
    )


def latest_fire_time(trigger: BaseTrigger, since: datetime, until: datetime) -> datetime | None:
    """Return the trigger's last fire time in [`since`, `until`] (UTC), or None if it has none.

    Walks the fire times forward from `since`, so callers keep the window short (a misfire
    grace period, not days of a per-minute schedule).
    """
    latest = None
    candidate = trigger.get_next_fire_time(None, since)
    while candidate is not None and candidate <= until:
        latest = candidate
        candidate = trigger.get_next_fire_time(candidate, candidate + _TICK)
    return latest.astimezone(UTC) if latest is not None else None


def _weekday_names(field: str) -> str:
    """Cron's day-of-week field as a list of weekday names (`*` when it covers every day)."""
    days: set[int] = set()
    for part in field.split(","):
        body, slash, step_text = part.partition("/")
        if slash and (not step_text.isdigit() or int(step_text) == 0):
            raise ValueError(f"invalid step in day of week {part!r}")
        step = int(step_text) if step_text else 1
        if body == "*":
            first, last = 0, 6
        elif "-" in body:
            low, high = body.split("-", 1)
            first, last = _weekday(low), _weekday(high)
        else:
            first = _weekday(body)
            last = 6 if slash else first
        if first > last:
            raise ValueError(f"invalid day-of-week range {part!r}")
        days.update(day % 7 for day in range(first, last + 1, step))
    if len(days) == 7:
        return "*"
    return ",".join(_DAYS[day] for day in sorted(days))


def _weekday(value: str) -> int:
    """A weekday as cron numbers it (0-7, both 0 and 7 Sunday), from a number or a name."""
    name = value.lower()
    if name in _DAYS:
        return _DAYS.index(name)
    if name.isdigit() and int(name) <= 7:
        return int(name)
    raise ValueError(f"invalid day of week {value!r}")
