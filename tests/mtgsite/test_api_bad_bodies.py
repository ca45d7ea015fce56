"""One contract per endpoint (issue 37, item 3): every POST of the OpenAPI schema (``/api/schema/``) that takes a
body is validated by the serializer that documents it, so a body that breaks the documented shape is answered
with a documented 400 in the one error shape (``{"errors": [{"message", "field"?}]}``), never a 500, and nothing
behind it runs. The operations are read from the schema: a new POST is walked without an entry here.

Three bad bodies per operation: a JSON array instead of an object, every documented property of the wrong JSON
type, and (where the schema says which are required) an empty object."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401 - fixtures
from tests.mtgsite.test_api_fuzz import own_objects

WRONG = {"string": ["not", "a", "string"], "integer": "not an integer", "number": "not a number",
         "boolean": "not a boolean", "array": "not an array", "object": "not an object"}


def schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def resolve(spec: dict, node: dict) -> dict:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def posts_with_a_body() -> list[str]:
    spec = schema()
    return [path for path, item in spec["paths"].items()
            if "post" in item and "requestBody" in item["post"]]


def required(spec: dict, operation: dict) -> list[str]:
    return resolve(spec, operation["requestBody"]["content"]["application/json"]["schema"]).get("required", [])


def bad_bodies(spec: dict, operation: dict) -> list:
    body = resolve(spec, operation["requestBody"]["content"]["application/json"]["schema"])
    properties = {name: resolve(spec, p) for name, p in body.get("properties", {}).items()}
    wrong = {name: WRONG[p["type"]] for name, p in properties.items() if p.get("type") in WRONG}
    bodies = [[1, 2], wrong]
    if body.get("required"):
        bodies.append({})
    return bodies


def test_every_post_with_a_body_is_walked():
    """The walk sees the POSTs the site has (a schema without them would walk nothing)."""
    assert {"/api/decks/", "/api/decks/complete", "/api/drafts/simulate", "/api/drafts/suggest", "/api/pods",
            "/api/pods/{draft_id}/join", "/api/pods/{draft_id}/picks", "/api/games", "/api/games/advice",
            "/api/games/{game_id}/actions"} <= set(posts_with_a_body())


@pytest.mark.django_db
@pytest.mark.parametrize("path", posts_with_a_body())
def test_a_bad_body_is_a_documented_400(guest_world, path):
    from decks.models import CompletionJob, Deck
    from drafts.models import Draft
    from gameplay.models import PlayedGame

    spec = schema()
    operation = spec["paths"][path]["post"]
    assert "400" in operation["responses"], f"POST {path} does not document its 400"
    client = Client()
    client.cookies["sessionid"] = guest_world["guest"]
    url = path.format(**own_objects(guest_world))
    counts = lambda: [m.objects.count() for m in (CompletionJob, Deck, Draft, PlayedGame)]  # noqa: E731
    before = counts()
    for body in bad_bodies(spec, operation):
        response = client.post(url, json.dumps(body), content_type="application/json")
        assert response.status_code == 400, (path, body, response.status_code, response.content[:300])
        errors = response.json()["errors"]
        assert errors and all(isinstance(e.get("message"), str) and e["message"] for e in errors), errors
        assert all(set(e) <= {"message", "field", "line", "text", "suggestions"} for e in errors), errors
        if isinstance(body, dict) and body:  # the errors name the fields sent wrong, or the required ones missing
            named = {e.get("field", "").split(".")[0] for e in errors} - {""}
            assert named, f"POST {path}: no error names a field (is the body checked by its serializer?) {errors}"
            assert named <= set(body) | set(required(spec, operation)), (path, errors)
    assert counts() == before, f"POST {path} wrote rows for a bad body"
