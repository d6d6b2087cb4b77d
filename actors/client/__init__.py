"""The runtime's door for the HTTP layer: `RuntimeClient` and its facades, by resource.

`serve` reaches the runtime only through this package: routes depend on `RuntimeApi`, which
`RuntimeClient` implements with small facades (`AgentsClient`, `CredentialsClient`,
`SessionsClient`, `ChatClient`, plus the schedule service and the library). The records,
errors and values those facades return are re-exported here.
"""

from actors.bus.mailbox import SessionDispatcher
from actors.bus.message_bus import RedisMessageBus
from actors.bus.stream_ids import StreamId
from actors.client.api import RuntimeApi
from actors.client.chat import ChatClient, MessagesPage
from actors.client.records import AgentsClient, CredentialsClient
from actors.client.runtime import RuntimeClient, ray_dispatcher, ray_workspaces
from actors.client.sessions import MemberStatus, SessionOverview, SessionsClient, TeamStatus
from actors.inprocess import InProcessDispatcher
from actors.ops.audit import SessionAudit
from actors.storage.records import MCPRecord, SkillRecord
from actors.storage.redis_storage import RedisStorage
from actors.workspaces.library import AddResult
from actors.workspaces.requests import FileStream
from actors.workspaces.session_workspaces import WorkspaceHandle
from actors.workspaces.skill_upload import (
    MAX_UPLOAD_REQUEST_BYTES,
    UploadManifest,
    check_manifest,
    pack_upload,
)
from workspaces import (
    DirectoryListing,
    InvalidSkill,
    MCPExists,
    MCPUnavailable,
    PathForbidden,
    TooLarge,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
    WrongFileType,
)

__all__ = [
    "MAX_UPLOAD_REQUEST_BYTES",
    "AddResult",
    "AgentsClient",
    "ChatClient",
    "CredentialsClient",
    "DirectoryListing",
    "FileStream",
    "InProcessDispatcher",
    "InvalidSkill",
    "MCPExists",
    "MCPRecord",
    "MCPUnavailable",
    "MemberStatus",
    "MessagesPage",
    "PathForbidden",
    "RedisMessageBus",
    "RedisStorage",
    "RuntimeApi",
    "RuntimeClient",
    "SessionAudit",
    "SessionDispatcher",
    "SessionOverview",
    "SessionsClient",
    "SkillRecord",
    "StreamId",
    "TeamStatus",
    "TooLarge",
    "UploadManifest",
    "WorkspaceClosed",
    "WorkspaceError",
    "WorkspaceHandle",
    "WorkspaceItemNotFound",
    "WrongFileType",
    "check_manifest",
    "pack_upload",
    "ray_dispatcher",
    "ray_workspaces",
]
