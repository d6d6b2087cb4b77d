"""workspaces: execution environments for tools (local directory, sandboxes)."""
