"""Operating the runtime: metrics, tracing, health probes, cluster status, session audits.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
