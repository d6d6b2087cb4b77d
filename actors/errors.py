"""Errors of the Troupe runtime.

::

    RuntimeErrorBase
    ├── NotFound                 a record does not exist or belongs to another user
    │   ├── AgentNotFound
    │   ├── CredentialNotFound
    │   ├── SessionNotFound
    │   ├── LibraryMCPNotFound   no such MCP in the user's library
    │   └── LibrarySkillNotFound no such skill in the user's library
    ├── InvalidId                an id cannot name a record (it would change the key it is put in)
    ├── InboxFull                a session's inbox is at its bound; the item was not accepted
    ├── InvalidRequest           a request is well-formed but cannot be carried out
    │   ├── SessionBusy          the session is running a reply
    │   ├── NotAwaiting          a resume input answers a pause the session is not in
    │   └── NameTaken            another library item of the user has that name
    ├── InvalidDownloadToken     a download token is malformed, altered, misapplied or expired
    ├── StorageUnavailable       Redis cannot be reached
    ├── SessionUnavailable       the session's actor could not be reached or activated
    ├── SecretKeyError           the secret key is malformed or cannot decrypt a stored secret
    ├── StateDiverged            a session's stored state is not the one an update applies to
    └── SessionFenced            a newer owner of the session exists; this one must stop
        └── StaleGeneration      a newer server started on this Redis; this one is stale

Every exception pickles (Ray re-raises them across processes).
"""

from __future__ import annotations


class RuntimeErrorBase(Exception):
    """Root of every runtime error."""


class NotFound(RuntimeErrorBase):
    """A record does not exist, or is not visible to the caller."""

    kind = "resource"

    def __init__(self, record_id: str) -> None:
        super().__init__(record_id)
        self.record_id = record_id

    def __str__(self) -> str:
        return f"{self.kind} {self.record_id!r} not found"


class AgentNotFound(NotFound):
    """No such agent for this user."""

    kind = "agent"


class CredentialNotFound(NotFound):
    """No such credential for this user."""

    kind = "credential"


class SessionNotFound(NotFound):
    """No such session for this user."""

    kind = "session"


class LibraryMCPNotFound(NotFound):
    """No such MCP in the user's library."""

    kind = "installed MCP"


class LibrarySkillNotFound(NotFound):
    """No such skill in the user's library."""

    kind = "installed skill"


class InvalidId(RuntimeErrorBase):
    """An id that cannot name a record: empty, too long, or holding a character outside its set.

    Ids become parts of Redis keys, so a `:` (or worse) would name another key.
    """

    def __init__(self, record_id: str) -> None:
        super().__init__(record_id)
        self.record_id = record_id

    def __str__(self) -> str:
        shown = self.record_id if len(self.record_id) <= 80 else f"{self.record_id[:80]}..."
        return f"invalid id {shown!r}: ids are 1 to 128 of A-Z a-z 0-9 _ . - @ +"


class InboxFull(RuntimeErrorBase):
    """The session's inbox holds its maximum number of unconsumed items."""


class InvalidRequest(RuntimeErrorBase):
    """The request is well-formed but cannot be carried out."""


class SessionBusy(InvalidRequest):
    """The session is running a reply; the change must wait until it is idle."""


class NotAwaiting(InvalidRequest):
    """A confirmation/external result does not answer the session's parked reply."""


class NameTaken(InvalidRequest):
    """Another item of the user's library has that name (names are unique per user)."""


class InvalidDownloadToken(RuntimeErrorBase):
    """A download token is malformed, altered, issued for another file, or expired."""


class StorageUnavailable(RuntimeErrorBase):
    """Redis cannot be reached."""


class SessionUnavailable(RuntimeErrorBase):
    """The session's actor could not be reached or activated."""


class SessionFenced(RuntimeErrorBase):
    """A newer owner of the session holds its lease; the stale owner may not write."""


class StaleGeneration(SessionFenced):
    """A newer server (cluster generation) started on this Redis; this process may not write."""


class StateDiverged(RuntimeErrorBase):
    """A session's stored state is not the one its owner's incremental write applies to."""


class SecretKeyError(RuntimeErrorBase):
    """The configured secret key is malformed, or cannot decrypt a stored secret."""
