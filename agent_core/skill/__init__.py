"""Skills, part of agent_core's tool layer: SKILL.md instruction sets, their loaders and viewer.

The skill model loads eagerly; the loaders and the viewer (a tool) load on first use, so a
process that only carries skills in its records does not load the tool layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from agent_core.skill.skill import Skill, parse_frontmatter, skills_prompt_fragment

if TYPE_CHECKING:
    from agent_core.skill.loader import LocalSkillLoader, SkillLoaderBase
    from agent_core.skill.viewer import SkillViewer

__getattr__ = lazy_names(
    __name__,
    {
        "LocalSkillLoader": "agent_core.skill.loader",
        "SkillLoaderBase": "agent_core.skill.loader",
        "SkillViewer": "agent_core.skill.viewer",
    },
)

__all__ = [
    "LocalSkillLoader",
    "Skill",
    "SkillLoaderBase",
    "SkillViewer",
    "parse_frontmatter",
    "skills_prompt_fragment",
]
