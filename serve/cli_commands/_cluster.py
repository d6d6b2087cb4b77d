"""How `troupe status` shows the cluster: nodes, session hosts with their sessions, inboxes."""

from __future__ import annotations

import click

from serve.client import ClusterStatus

_SHOWN_SESSIONS = 5  # per host; the count says how many there are


def print_cluster(cluster: ClusterStatus) -> None:
    """Print the nodes, hosts (with sessions) and non-empty inboxes, one item a line."""
    click.echo(f"nodes: {len(cluster.nodes)}")
    for node in cluster.nodes:
        custom = {k: v for k, v in node.resources.items() if k.startswith("troupe_")}
        extras = " ".join(f"{k}={v:g}" for k, v in sorted(custom.items()))
        state = "alive" if node.alive else "dead"
        role = node.role or "-"
        click.echo(f"  {node.node_id[:12]}  {node.address}  {role}  {state}  {extras}".rstrip())
    click.echo(f"session hosts: {len(cluster.hosts)}, live sessions: {cluster.live_sessions}")
    for host in cluster.hosts:
        where = host.node_id[:12] if host.reachable else "unreachable"
        shown = ", ".join(host.sessions[:_SHOWN_SESSIONS])
        hidden = len(host.sessions) - _SHOWN_SESSIONS
        more = f", +{hidden}" if hidden > 0 else ""
        click.echo(f"  {host.name}  {where}  sessions={len(host.sessions)}  {shown}{more}".rstrip())
    waiting = sum(inbox.depth for inbox in cluster.inboxes)
    click.echo(f"inboxes: {len(cluster.inboxes)} non-empty, {waiting} items waiting")
    for inbox in cluster.inboxes:
        click.echo(f"  {inbox.session_id}  depth={inbox.depth}")
