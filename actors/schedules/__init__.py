"""Schedules: records, cron arithmetic, the scheduler, its service and the schedule tools.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
