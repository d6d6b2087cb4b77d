"""The base of the runtime's pydantic models: each builds its validator and serializer on first use.

A process imports far more models than it validates or dumps. A session host imports the
models of messages, events, records, settings and workspace requests, and its first session
builds under a third of them, once per process: a model nested in another is built inside
the outer one's schema, so the nested class's own validator is often never needed. Deferring
saves import time and memory (`bench/imports.py`).

`agent_core`, `workspaces` and `actors` derive their models from `DeferredModel`; each
subclass's `model_config` is merged with this one (`extra`, `frozen`, ... as usual). The API's
schemas (`serve`) stay plain: FastAPI builds them all with the app anyway. `DEFERRED` is the
same setting for a module's `TypeAdapter` over a union or a container of models, which would
otherwise build their schemas when the module is imported.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DEFERRED = ConfigDict(defer_build=True)
"""Config of a `TypeAdapter` built on first use (pydantic refuses it for one model class)."""


class DeferredModel(BaseModel):
    """A pydantic model whose validator and serializer are built when first used."""

    model_config = DEFERRED
