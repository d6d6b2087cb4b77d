"""Request parameters that several providers declare alike, as types to annotate fields with.

Each is optional: a field declared `temperature: Temperature = None` is sent only when set.
`thinking` declares the `thinking_enable` switch every provider has, in its own words.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

Temperature = Annotated[
    float | None, Field(ge=0, le=2, description="Sampling temperature; higher is more random.")
]
TopP = Annotated[
    float | None, Field(gt=0, le=1, description="Nucleus sampling: the probability mass kept.")
]
TopK = Annotated[int | None, Field(gt=0, description="Sample only among the k likeliest tokens.")]
Seed = Annotated[int | None, Field(description="Seed for best-effort determinism.")]
FrequencyPenalty = Annotated[
    float | None,
    Field(ge=-2, le=2, description="Penalty on tokens by their frequency so far."),
]
PresencePenalty = Annotated[
    float | None, Field(ge=-2, le=2, description="Penalty on tokens that appeared at all.")
]
ParallelToolCalls = Annotated[
    bool | None, Field(description="Whether the model may call several tools at once.")
]


def thinking(description: str) -> Any:
    """The `thinking_enable` field (off by default), `description` saying what it does."""
    return Field(default=False, title="Thinking", description=description)
