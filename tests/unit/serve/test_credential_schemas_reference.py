"""`POST /credential/` accepts every field AgentScope's credential schemas allow.

Compared against `tests/reference/data/credential_schemas.json` (written by
`tests/reference/generate_credential_schemas.py`) for every credential type Troupe supports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_core.credential import CREDENTIAL_TYPES
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
REFERENCE: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[2] / "reference" / "data" / "credential_schemas.json").read_text()
)
SHARED_TYPES = sorted(set(REFERENCE) & set(CREDENTIAL_TYPES))
# A value AgentScope's schema allows, per field (plain strings otherwise).
SAMPLES = {"id": "cred-chosen-by-client", "name": "Team key", "base_url": "http://127.0.0.1:9/v1"}


def full_body(kind: str) -> dict[str, Any]:
    """A credential of `kind` with every field AgentScope's schema has."""
    properties = REFERENCE[kind]["properties"]
    return {
        name: kind if name == "type" else SAMPLES.get(name, f"{name}-value") for name in properties
    }


def test_troupe_supports_agentscope_credential_types() -> None:
    assert SHARED_TYPES, "no credential type in common with AgentScope"
    print(f"credential types in common: {SHARED_TYPES} ({len(SHARED_TYPES)}/{len(REFERENCE)})")


@pytest.mark.parametrize("kind", SHARED_TYPES)
def test_required_fields_are_no_more_than_agentscope(kind: str) -> None:
    ours = CREDENTIAL_TYPES[kind].model_json_schema()
    assert set(ours.get("required", [])) <= set(REFERENCE[kind].get("required", []))
    # Everything AgentScope's form renders exists in ours, but `id`: the server assigns ids.
    assert set(REFERENCE[kind]["properties"]) - {"id"} <= set(ours["properties"])


@pytest.mark.parametrize("kind", SHARED_TYPES)
async def test_every_agentscope_field_is_accepted(service: Service, kind: str) -> None:
    body = full_body(kind)
    created = await service.api.post("/credential/", json={"data": body}, headers=ALICE)
    assert created.status_code == 201, created.text
    credential_id = created.json()["credential_id"]
    assert credential_id != body["id"]  # a client cannot choose (or overwrite) an id

    (view,) = (await service.api.get("/credential/", headers=ALICE)).json()["credentials"]
    assert view["id"] == credential_id
    assert view["data"]["name"] == "Team key"
    assert "id" not in view["data"]

    # Sending the view's data back with the credential's own id is an update...
    patch = {"data": {**view["data"], "id": credential_id, "name": "Renamed"}}
    updated = await service.api.patch(f"/credential/{credential_id}", json=patch, headers=ALICE)
    assert updated.status_code == 200, updated.text
    assert updated.json()["data"]["name"] == "Renamed"
    # ...another credential's id is refused, naming the field.
    patch["data"]["id"] = "someone-else"
    refused = await service.api.patch(f"/credential/{credential_id}", json=patch, headers=ALICE)
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "data", "id"]


async def test_unknown_fields_are_still_refused(service: Service) -> None:
    body = {"data": {**full_body("openai_credential"), "api_kee": "typo"}}
    response = await service.api.post("/credential/", json=body, headers=ALICE)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "api_kee"
