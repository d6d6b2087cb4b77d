"""The FastAPI application: `create_app` (AgentScope's entry point) over `build_app`.

No Ray here: sessions are reached through the dispatcher the runtime client is given.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

import agent_core
from actors.client import (
    MAX_UPLOAD_REQUEST_BYTES,
    RedisMessageBus,
    RedisStorage,
    RuntimeApi,
    RuntimeClient,
    SessionDispatcher,
    ray_dispatcher,
    ray_workspaces,
)
from actors.sessions.extensions import (
    AgentMiddlewareFactory,
    AgentToolFactory,
    import_path,
    register_credential_types,
)
from actors.settings import RuntimeSettings
from actors.teams.store import SubAgentTemplate, template_registry
from agent_core.credential import CredentialBase
from serve.auth import AuthMode
from serve.body_limit import BodyLimit
from serve.console import install_console
from serve.errors import install_error_handlers
from serve.json_limits import JsonLimits
from serve.request_tracing import TraceRequests
from serve.routes import (
    admin,
    agents,
    chat,
    credentials,
    health,
    knowledge_bases,
    library,
    models,
    schedules,
    sessions,
    tts_models,
    workspace,
    workspace_files,
    workspace_library,
)
from serve.slashes import CollectionRoots, collection_roots
from workspaces import LocalWorkspaceManager, WorkspaceManagerBase
from workspaces.docker import DockerWorkspaceManager
from workspaces.e2b import E2BWorkspaceManager

log = logging.getLogger(__name__)


def create_app(
    storage: str | RedisStorage | None = None,
    message_bus: str | RedisMessageBus | None = None,
    workspace_manager: WorkspaceManagerBase | None = None,
    *,
    settings: RuntimeSettings | None = None,
    dispatcher: Callable[[RuntimeSettings], SessionDispatcher] = ray_dispatcher,
    extra_middlewares: Sequence[Middleware] = (),
    extra_agent_middlewares: AgentMiddlewareFactory | None = None,
    extra_agent_tools: AgentToolFactory | None = None,
    custom_subagent_templates: Sequence[SubAgentTemplate] | None = None,
    sub_agent_templates: Sequence[SubAgentTemplate] | None = None,
    extra_credentials: Sequence[type[CredentialBase]] = (),
    title: str = "Troupe",
    version: str = agent_core.__version__,
    auth: AuthMode = "dev",
) -> FastAPI:
    """Build the Agent Service app, AgentScope's `create_app` mapped onto Troupe's runtime.

    Sessions run in Ray actors (other processes, possibly other nodes), so what AgentScope
    passes as live objects Troupe passes as descriptions every process can rebuild from:

    Args:
        storage: The records (agents, sessions, credentials, transcripts, schedules, teams):
            a `RedisStorage` (as the spec's `RedisStorage(host=..., port=...)`; its key
            prefix and secret key come along) or a Redis URL. Troupe's storage is Redis only,
            opened by every API replica and session actor from its URL. Default:
            `settings.redis_url`, else `TROUPE_REDIS_URL`.
        message_bus: The inboxes, event logs and leases: a `RedisMessageBus` or a Redis URL.
            It must be the storage's Redis (a reply's transcript commits atomically with the
            inbox items it consumed and checks the session's lease); None means that one.
        workspace_manager: A `LocalWorkspaceManager`, `DockerWorkspaceManager` or
            `E2BWorkspaceManager`. Workspaces live in workspace actors on sandbox nodes, which
            rebuild the manager from settings: its backend, `basedir`, `ttl` and image or
            template travel; other Docker limits take their defaults. Default MCP servers and
            skills are not carried across processes: configure none.
        settings: The remaining runtime knobs (key prefix, Ray namespace, limits, timeouts);
            default `RuntimeSettings.from_env`. The arguments above override its fields.
        dispatcher: How sessions are reached: `ray_dispatcher` (default; Ray must be
            initialised) or `InProcessDispatcher` (every session in this process: tests,
            single-process servers).
        extra_middlewares: ASGI middlewares, outermost first (CORS, protocol adapters such as
            `AGUIProtocolMiddleware`, auth). Under Ray Serve the app is built on every replica,
            so they must pickle (a `Middleware` of an importable class does).
        extra_agent_middlewares: Async factory `(user_id, agent_id, session_id[, workspace])
            -> list[MiddlewareBase]`, called per reply in the session's actor; its middlewares
            follow Troupe's own. Must be a module-level function of a module every Ray worker
            can import: it travels as its import path (ValueError otherwise).
        extra_agent_tools: Async factory `(user_id, agent_id, session_id) -> list[ToolBase]`,
            called per reply in the session's actor; its tools join the basic group (a name
            clash ends that reply with a setup error). Importable, like the middleware factory.
        custom_subagent_templates: Worker types team leaders may create (AgentCreate's
            `subagent_type`). Plain data, so they travel with the settings.
        sub_agent_templates: The same, by the name the spec's Agent Team page uses (give
            one of the two).
        extra_credentials: Custom credential types (`CredentialBase` subclasses with a
            unique `type` literal), stored, listed by `GET /credential/schemas` and served by
            `GET /model?provider=<type>` like the shipped ones. Importable classes: they
            travel as import paths and every session process registers them.
        title: OpenAPI title.
        version: API version.
        auth: How callers are identified (`serve.auth`): `dev` trusts `X-User-ID` (a loopback
            server), `keys` requires an API key.

    Raises:
        ValueError: the message bus is another Redis than the storage, a factory is not
            importable, templates share a type or are given twice, a credential class is not
            importable or its `type` is missing or taken, or the workspace manager cannot be
            rebuilt.
    """
    updates: dict[str, Any] = {}
    if isinstance(storage, RedisStorage):
        updates["key_prefix"] = storage.keys.prefix
        if storage.secret_key is not None:
            updates["secret_key"] = storage.secret_key
        storage = storage.url
    if isinstance(message_bus, RedisMessageBus):
        message_bus = message_bus.url
    base = settings or RuntimeSettings.from_env(storage or message_bus)
    if storage is not None:
        updates["redis_url"] = storage
    redis_url = updates.get("redis_url", base.redis_url)
    if message_bus is not None and message_bus != redis_url:
        raise ValueError(
            f"message_bus {message_bus!r} is not the storage's Redis {redis_url!r}: Troupe "
            "commits transcripts and inbox items together, so both live in one Redis"
        )
    if workspace_manager is not None:
        updates.update(_workspace_settings(workspace_manager))
    if extra_agent_middlewares is not None:
        updates["agent_middlewares"] = import_path(extra_agent_middlewares)
    if extra_agent_tools is not None:
        updates["agent_tools"] = import_path(extra_agent_tools)
    if custom_subagent_templates is not None and sub_agent_templates is not None:
        raise ValueError("give custom_subagent_templates or sub_agent_templates, not both")
    chosen_templates = (
        custom_subagent_templates if sub_agent_templates is None else sub_agent_templates
    )
    if chosen_templates is not None:
        templates = list(chosen_templates)
        template_registry(templates)  # duplicate types fail here, not in a leader's actor
        updates["sub_agent_templates"] = templates
    if extra_credentials:
        paths = [import_path(cls) for cls in extra_credentials]
        register_credential_types(paths)  # a bad class fails here, not in a session's actor
        updates["credential_types"] = list(dict.fromkeys([*base.credential_types, *paths]))
    resolved = RuntimeSettings.model_validate({**base.model_dump(), **updates})
    app = build_app(
        lambda: RuntimeClient(
            resolved,
            dispatcher(resolved),
            ray_workspaces(resolved) if dispatcher is ray_dispatcher else None,
        ),
        middlewares=extra_middlewares,
        title=title,
        version=version,
        auth=auth,
    )
    app.state.settings = resolved
    return app


def _workspace_settings(manager: WorkspaceManagerBase) -> dict[str, Any]:
    """The runtime settings every process rebuilds `manager` from (its backend's knobs)."""
    if getattr(manager, "default_mcps", None) or getattr(manager, "skill_paths", None):
        raise ValueError(
            "default MCP servers and skills of a workspace manager are not carried to session "
            "processes; add them through /workspace/mcp and /workspace/skill"
        )
    if type(manager) is LocalWorkspaceManager:
        return {"workspace_root": str(manager.basedir), "workspace_ttl": manager.ttl}
    if type(manager) is DockerWorkspaceManager:
        return {
            "workspace_backend": "docker",
            "workspace_root": str(manager.basedir),
            "workspace_ttl": manager.ttl,
            "docker_image": manager.image,
            "docker_python": manager.python,
            "docker_url": manager.docker_url,
            "docker_network": manager.policy.network,
            "docker_mounts": manager.mounts,
        }
    if type(manager) is E2BWorkspaceManager:
        return {
            "workspace_backend": "e2b",
            "workspace_ttl": manager.ttl,
            "e2b_template": manager.template,
            "e2b_domain": manager.domain,
            **({"e2b_api_key": manager.api_key} if manager.api_key else {}),
        }
    raise ValueError(
        f"{type(manager).__name__}: Troupe rebuilds the workspace manager in every workspace "
        "actor from settings, so it supports LocalWorkspaceManager, DockerWorkspaceManager and "
        "E2BWorkspaceManager"
    )


def cors_middleware(origins: Sequence[str]) -> Middleware:
    """CORS for browser clients served from `origins` (e.g. `http://localhost:5173`).

    Any method and header (`X-User-ID` included) is allowed; no cookies are involved (the
    identity travels in a header), so credentials are not.
    """
    return Middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=["*"],
        allow_headers=["*"],
        expose_headers=["Retry-After"],
    )


def build_app(
    runtime_factory: Callable[[], RuntimeApi],
    *,
    middlewares: Sequence[Middleware] = (),
    title: str = "Troupe",
    version: str = agent_core.__version__,
    auth: AuthMode = "dev",
) -> FastAPI:
    """Build the HTTP API; `runtime_factory` is called once at startup, closed at shutdown.

    Args:
        runtime_factory: Builds the runtime client (and with it, how sessions are reached).
        middlewares: ASGI middlewares, outermost first.
        title: OpenAPI title.
        version: API version.
        auth: How callers are identified (`serve.auth`).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.runtime = runtime_factory()
        app.state.runtime.start_sweeper()
        try:
            await app.state.runtime.schedules.start()
        except Exception:  # the first /schedule request starts it; serving must not wait
            log.warning("the scheduler could not be started yet", exc_info=True)
        try:
            yield
        finally:
            await app.state.runtime.aclose()

    # FastAPI's own /docs and /redoc load from a CDN; install_console serves /docs locally.
    app = FastAPI(
        title=title,
        version=version,
        lifespan=lifespan,
        middleware=list(middlewares),
        docs_url=None,
        redoc_url=None,
    )
    app.state.auth = auth
    install_error_handlers(app)
    install_console(app)
    app.add_middleware(BodyLimit, limits={workspace_library.UPLOAD_PATH: MAX_UPLOAD_REQUEST_BYTES})
    app.add_middleware(JsonLimits)
    # Routes match in order: the hot path first, so it does not scan every other route.
    routers = (
        chat,
        health,
        admin,
        agents,
        credentials,
        models,
        tts_models,
        sessions,
        schedules,
        workspace,
        knowledge_bases,
        library,
        workspace_library,
        workspace_files,
    )
    for module in routers:
        app.include_router(module.router)
    paths = [getattr(route, "path", "") for module in routers for route in module.router.routes]
    app.add_middleware(CollectionRoots, roots=collection_roots(paths))
    # Outermost: the span covers everything the request does.
    app.add_middleware(TraceRequests)
    return app
