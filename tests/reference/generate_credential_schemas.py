"""Record the JSON schema of every AgentScope 2.0.11 credential type (`GET /credential/schemas`).

Usage (from the repository root, with AgentScope installed in the bench venv)::

    .bench-venv/bin/python tests/reference/generate_credential_schemas.py

Writes `tests/reference/data/credential_schemas.json`: `{credential type: JSON schema}`, sorted.
`tests/unit/serve/test_credential_schemas_reference.py` checks that `POST /credential/` accepts
every field AgentScope's schema of each type Troupe supports allows.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentscope.credential import CredentialFactory

OUT = Path(__file__).parent / "data" / "credential_schemas.json"


def main() -> None:
    """Write the schemas."""
    schemas = {
        schema["properties"]["type"]["const"]: schema for schema in CredentialFactory.list_schemas()
    }
    OUT.write_text(json.dumps(schemas, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(schemas)} credential schemas to {OUT}")


if __name__ == "__main__":
    main()
