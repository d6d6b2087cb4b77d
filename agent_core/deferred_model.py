"""The base of the runtime's pydantic models: each builds its validator and serializer on first use.

A process imports far more models than it validates or dumps. A session host imports the
models of messages, events, records, settings and workspace requests (about 140), and its
first session builds about 40 of them (some 40 ms of CPU, once per process): a model nested
in another is built inside the outer one's schema, so the nested class's own validator is
often never needed. Deferring saves the host 1.8 MiB of its 15.9 at import and a quarter of
its import CPU time; after a first reply it still holds 0.4 MiB less.

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
