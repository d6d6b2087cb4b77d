"""Session titles: a session created without a name is titled after its first reply.

Such a session starts named after its creation time. Once its first reply is stored, the
session's own model is asked for a short title of the opening message (structured output).
When that call fails (a broken credential, usually, which the reply already reported) an excerpt
of the message is used instead. Either way the name is then settled: titling happens once.
"""

from __future__ import annotations

import logging

from pydantic import Field

from agent_core.deferred_model import DeferredModel
from agent_core.message import Msg, UserMsg
from agent_core.model.base import ChatModelBase

log = logging.getLogger(__name__)

# AgentScope's prompt and limits: a name is a sidebar label, not a summary.
NAMING_PROMPT = (
    "Give the conversation that opens with the following message a short title.\n\n{text}"
)
NAMING_INPUT_LIMIT = 2000
NAMING_NAME_LIMIT = 60


class SessionTitle(DeferredModel):
    """What the model hands over when titling a session."""

    title: str = Field(
        description=(
            "A short title for the conversation, written in the same language as the user's "
            "message, at most eight words, with no quotes and no trailing punctuation."
        )
    )


def opening_text(inputs: list[Msg]) -> str:
    """The text of the user turn that opened a reply ("" when it carried none)."""
    return "\n".join(msg.get_text_content() or "" for msg in inputs).strip()


async def session_title(model: ChatModelBase, text: str) -> str:
    """A short title for a conversation opening with `text` (an excerpt if the model fails)."""
    name = text[:NAMING_NAME_LIMIT]
    prompt = NAMING_PROMPT.format(text=text[:NAMING_INPUT_LIMIT])
    try:
        answer = await model.generate_structured_output([UserMsg("user", prompt)], SessionTitle)
    except Exception as exc:  # best effort: the excerpt still beats a timestamp
        log.warning("titling a session failed, keeping an excerpt instead: %s", exc)
        return name
    title = str(answer.content.get("title") or "").strip()
    return title[:NAMING_NAME_LIMIT] if title else name
