"""Skills, part of agent_core's tool layer: SKILL.md instruction sets, their loaders and viewer."""

from agent_core.skill.loader import LocalSkillLoader, SkillLoaderBase
from agent_core.skill.skill import Skill, parse_frontmatter, skills_prompt_fragment
from agent_core.skill.viewer import SkillViewer

__all__ = [
    "LocalSkillLoader",
    "Skill",
    "SkillLoaderBase",
    "SkillViewer",
    "parse_frontmatter",
    "skills_prompt_fragment",
]
