"""The Redis key layout. Every key lives under one prefix (default `troupe`).

======================================  ======  =============================================
key                                     type    holds
======================================  ======  =============================================
{p}:agent:{agent_id}                    string  AgentRecord JSON
{p}:user:{user_id}:agents               zset    agent ids by creation time
{p}:user:{user_id}:agents:version       string  counter bumped by each write of the user's agents
{p}:credential:{credential_id}          string  CredentialRecord JSON
{p}:user:{user_id}:credentials          zset    credential ids by creation time
{p}:user:{user_id}:credentials:version  string  counter bumped by each write of the user's
                                                credentials
{p}:session:{session_id}                string  SessionRecord JSON (without state)
{p}:user:{user_id}:sessions             zset    session ids by creation time
{p}:mcp:{mcp_id}                        string  MCPRecord JSON (library), its config encrypted
{p}:user:{user_id}:mcps                 zset    library MCP ids by creation time
{p}:user:{user_id}:mcps:names           hash    library MCP name -> id (names are unique)
{p}:skill:{skill_id}                    string  SkillRecord JSON (library)
{p}:skill:{skill_id}:files              string  SkillBundle JSON: the library skill's files
{p}:user:{user_id}:skills               zset    library skill ids by creation time
{p}:user:{user_id}:skills:names         hash    library skill name -> id (names are unique)
{p}:session:{session_id}:state_head     hash    `state`: AgentState JSON without its context;
                                                `version`: set by each write of the state
{p}:session:{session_id}:state_context  list    the AgentState's context: Msg JSON, in order
{p}:session:{session_id}:state          string  AgentState JSON (older layout, read if no head)
{p}:session:{session_id}:messages       list    persisted Msg JSON, oldest first
{p}:session:{session_id}:message_index  hash    Msg id -> position in the list
{p}:session:{session_id}:events         stream  event log; entry field `e` = event JSON
{p}:session:{session_id}:inbox          stream  mailbox; entry field `i` = InboxItem JSON
{p}:session:{session_id}:inbox_seen     set     item ids already accepted (idempotency)
{p}:session:{session_id}:dead           stream  inbox items set aside (unreadable, or failing)
{p}:session:{session_id}:attempts       hash    inbox stream id -> failed drains of it
{p}:session:{session_id}:run            hash    the reply in progress (id, cursor, items)
{p}:session:{session_id}:lease          string  generation of the session's owner (fencing token)
{p}:session:{session_id}:background     hash    hint item id -> BackgroundCall JSON (no result yet)
{p}:inboxes                             set     sessions whose inbox may hold items (sweeper)
{p}:generation                          hash    cluster generation (`generation`) and its `cluster`
{p}:live                                zset    live dedicated session actors by last activity (LRU)
{p}:session-hosts                       hash    session host actor name -> node id (registry)
{p}:session-host:{name}:sessions        set     sessions live on one host actor
{p}:session-placement                   hash    session id -> host actor name (or `dedicated`)
{p}:secret_key                          string  generated Fernet key (dev: TROUPE_SECRET_KEY unset)
{p}:api_key:{key_id}                    string  ApiKey JSON (the SHA-256 of its secret, never it)
{p}:api_keys                            zset    API key ids by creation time
======================================  ======  =============================================
"""

from __future__ import annotations

import re

from actors.errors import InvalidId

DEFAULT_KEY_PREFIX = "troupe"
"""The prefix of a deployment that names none."""

ID_PATTERN = r"^[A-Za-z0-9_.@+\-]{1,128}$"
"""What a record id may be: no `:` (it would reach another key), no glob or control characters."""
_ID = re.compile(ID_PATTERN)


def checked_id(record_id: str) -> str:
    """Return `record_id` if it can name a record.

    Raises:
        InvalidId: it cannot (a caller pasting `<id>:state` gets this, never another key).
    """
    if not _ID.fullmatch(record_id):
        raise InvalidId(record_id)
    return record_id


class Keys:
    """Builds the Redis keys of one deployment (one prefix)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def agent(self, agent_id: str) -> str:
        """AgentRecord JSON."""
        return f"{self.prefix}:agent:{checked_id(agent_id)}"

    def workspace_placement(self) -> str:
        """Hash: workspace (JSON [user_id, workspace id]) -> JSON {node, moved_from, at}."""
        return f"{self.prefix}:workspace-placement"

    def credential(self, credential_id: str) -> str:
        """CredentialRecord JSON."""
        return f"{self.prefix}:credential:{checked_id(credential_id)}"

    def session(self, session_id: str) -> str:
        """SessionRecord JSON."""
        return f"{self.prefix}:session:{checked_id(session_id)}"

    def user_index(self, user_id: str, kind: str) -> str:
        """Ids of one kind of record a user owns (`agents`, `sessions`, `mcps`, ...)."""
        return f"{self.prefix}:user:{user_id}:{kind}"

    def user_index_version(self, user_id: str, kind: str) -> str:
        """Counter bumped by every write of a user's records of one kind (`agents`, ...)."""
        return f"{self.user_index(user_id, kind)}:version"

    def library_mcp(self, mcp_id: str) -> str:
        """MCPRecord JSON (its config encrypted)."""
        return f"{self.prefix}:mcp:{checked_id(mcp_id)}"

    def library_skill(self, skill_id: str) -> str:
        """SkillRecord JSON."""
        return f"{self.prefix}:skill:{checked_id(skill_id)}"

    def library_skill_files(self, skill_id: str) -> str:
        """SkillBundle JSON of a library skill."""
        return f"{self.library_skill(skill_id)}:files"

    def library_names(self, user_id: str, kind: str) -> str:
        """Hash: name -> id of a user's library items of one kind (`mcps`, `skills`)."""
        return f"{self.user_index(user_id, kind)}:names"

    def state_head(self, session_id: str) -> str:
        """Hash: `state` (AgentState JSON without its context) and `version`."""
        return f"{self.session(session_id)}:state_head"

    def state_context(self, session_id: str) -> str:
        """List: the Msg JSON of a session's AgentState context, in order."""
        return f"{self.session(session_id)}:state_context"

    def state(self, session_id: str) -> str:
        """Whole AgentState JSON of a session, as older versions stored it."""
        return f"{self.session(session_id)}:state"

    def messages(self, session_id: str) -> str:
        """Persisted messages of a session."""
        return f"{self.session(session_id)}:messages"

    def message_index(self, session_id: str) -> str:
        """Msg id -> list position."""
        return f"{self.session(session_id)}:message_index"

    def events(self, session_id: str) -> str:
        """Event log stream."""
        return f"{self.session(session_id)}:events"

    def inbox(self, session_id: str) -> str:
        """Inbox stream."""
        return f"{self.session(session_id)}:inbox"

    def inbox_seen(self, session_id: str) -> str:
        """Accepted inbox item ids."""
        return f"{self.session(session_id)}:inbox_seen"

    def dead_letters(self, session_id: str) -> str:
        """Inbox items set aside: entry fields `i` (the stored item), `id`, `reason`."""
        return f"{self.session(session_id)}:dead"

    def attempts(self, session_id: str) -> str:
        """Failed drains per inbox stream id."""
        return f"{self.session(session_id)}:attempts"

    def run(self, session_id: str) -> str:
        """The reply in progress."""
        return f"{self.session(session_id)}:run"

    def lease(self, session_id: str) -> str:
        """Generation counter of the session's owner."""
        return f"{self.session(session_id)}:lease"

    def background(self, session_id: str) -> str:
        """Background tool calls whose result was not delivered yet, by their result's item id."""
        return f"{self.session(session_id)}:background"

    def inboxes(self) -> str:
        """Sessions whose inbox may hold items."""
        return f"{self.prefix}:inboxes"

    def generation(self) -> str:
        """Hash: the current cluster generation and the Ray cluster that claimed it."""
        return f"{self.prefix}:generation"

    def live(self) -> str:
        """Live session owners by last activity."""
        return f"{self.prefix}:live"

    def session_hosts(self) -> str:
        """Hash: session host actor name -> the id of the node it is pinned to."""
        return f"{self.prefix}:session-hosts"

    def host_sessions(self, host: str) -> str:
        """Set: the sessions live on one session host actor."""
        return f"{self.prefix}:session-host:{host}:sessions"

    def host_wakes(self, host: str) -> str:
        """Pub/sub channel: ids of sessions of one session host that have new inbox items.

        The host's name comes last: the deliver script appends it to `host_wakes("")`.
        """
        return f"{self.prefix}:session-host-wakes:{host}"

    def session_placement(self) -> str:
        """Hash: session id -> the host actor running it (or `dedicated`)."""
        return f"{self.prefix}:session-placement"

    def secret_key(self) -> str:
        """The generated key encrypting stored secrets when none is configured (dev only)."""
        return f"{self.prefix}:secret_key"

    def api_key(self, key_id: str) -> str:
        """ApiKey JSON: who an API key identifies, and the hash of its secret."""
        return f"{self.prefix}:api_key:{key_id}"

    def api_keys(self) -> str:
        """API key ids by creation time."""
        return f"{self.prefix}:api_keys"

    def session_keys(self, session_id: str) -> list[str]:
        """Every key that belongs to one session."""
        return [
            self.session(session_id),
            self.state_head(session_id),
            self.state_context(session_id),
            self.state(session_id),
            self.messages(session_id),
            self.message_index(session_id),
            self.events(session_id),
            self.inbox(session_id),
            self.inbox_seen(session_id),
            self.dead_letters(session_id),
            self.attempts(session_id),
            self.run(session_id),
            self.lease(session_id),
            self.background(session_id),
        ]
