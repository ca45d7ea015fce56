"""Fuzzing the API against its own OpenAPI schema (``/api/schema/``, drf-spectacular) with schemathesis.

Every operation of the schema gets a bounded number of generated requests (valid ones, and ones that
break the schema), through the site's WSGI application on the test database: none may be answered with
a 5xx, with a status the schema does not list, or with a body that breaks the schema. The generated
bodies are steered some of the time towards the world's real objects (the planted set, the guest's
pod seat and game, a sample deck, a real engine state), so that the fuzz reaches past the first
"unknown set" into the code behind it. Reproducible: derandomized, no example database.
"""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401 - fixtures

EXAMPLES = 10  # per operation and kind of request
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
SET = "FZZ"  # the planted set of guest_world (tests/mtgsite/conftest.py)


def schema_operations() -> list[str]:
    """Every operation of the schema, as "METHOD path" (read when the tests are collected)."""
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return [f"{method.upper()} {path}" for path, item in paths.items() for method in item]


@pytest.fixture
def wsgi_app():
    """The site's WSGI application, serving this test's database connection: Django closes a request's
    connections when it ends (the test client turns that off, and so does this)."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield WSGIHandler()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def refuse_nul(execute, sql, params, many, context):
    """What PostgreSQL does and SQLite does not: refuse a text (or JSON) parameter holding a NUL character."""
    rows = params if many else [params]
    for row in rows or []:
        for value in (row.values() if isinstance(row, dict) else row) or []:
            if isinstance(value, str) and ("\x00" in value or "\\u0000" in value):
                raise ValueError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    return execute(sql, params, many, context)


@pytest.fixture
def postgres_text(db):
    """The embedded stack's database refuses NUL characters in text like PostgreSQL, so that the fuzz finds
    on SQLite a request that would fail on the services stack."""
    from django.db import connection

    with connection.execute_wrapper(refuse_nul):
        yield


@pytest.fixture
def api_schema(wsgi_app, guest_world):
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)


def own_objects(world) -> dict:
    """Path parameters naming the world's objects (the guest's pod and game, a deck, a job)."""
    return {"id": world["deck"].pk, "pk": world["deck"].pk, "job_id": str(world["job"].pk),
            "draft_id": str(world["pod"].pk), "game_id": str(world["game"].pk)}


def body(required: dict, optional: dict | None = None) -> st.SearchStrategy:
    return st.fixed_dictionaries(required, optional=optional or {})


def now(fn) -> st.SearchStrategy:
    """A value read from the world when the example is drawn (the pod and the game move on as the fuzz plays)."""
    return st.builds(fn)


def steered(path: str, world) -> st.SearchStrategy | None:
    """Valid bodies about the world's real things, for the operations where a generated body would almost
    always stop at the first check (an unknown set, card, deck or action); the schema's own and its
    negated strategies bring the wrong types and shapes."""
    from drafts.pods import service
    from gameplay.play import session

    names = st.sampled_from(world["names"])
    cards = st.lists(st.tuples(names, st.integers(1, 4)).map(list), min_size=1, max_size=15)
    decklist = cards.map(lambda rows: "\n".join(f"{n} {name}" for name, n in rows))
    formats = st.sampled_from(["standard", "modern", "pauper", "vintage"])
    bots = st.sampled_from(["draftsim", "archetype"])
    person = st.from_regex(r"[A-Za-z][A-Za-z0-9 .'-]{0,20}", fullmatch=True)
    seed = st.integers(0, 1000)

    def seat_view():
        return service.snapshot(world["pod"].pk, 0)[1]

    def game_view():
        world["game"].refresh_from_db()
        return session.view_of(world["game"])

    decks = st.sampled_from(["sample:mono_red_aggro", "sample:mono_white_weenie", f"deck:{world['deck'].pk}"])
    bodies = {
        "/api/decks/": body({"text": decklist}, {"name": person, "format": formats}),
        "/api/decks/complete": body({"format": formats}, {
            "text": decklist, "main": cards, "side": cards, "model": st.sampled_from(["masked", "manamorphosis"]),
            "sampler": st.sampled_from(["fast", "full"]), "seed": seed, "generate_side": st.booleans()}),
        "/api/drafts/simulate": body({"set": st.just(SET)}, {
            "bots": st.lists(bots, min_size=2, max_size=8), "bot": bots, "seats": st.integers(2, 8), "seed": seed}),
        "/api/drafts/suggest": body({"set": st.just(SET), "pack": st.lists(names, min_size=1, max_size=15)}, {
            "bot": bots, "pool": st.lists(names, max_size=30), "pack_number": st.integers(0, 2),
            "pick_number": st.integers(0, 14)}),
        "/api/pods": body({"set": st.just(SET), "display_name": person}, {
            "seats": st.integers(2, 8), "bot": bots, "pick_timer": st.sampled_from([0, 30, 45, 60, 90, 120]),
            "consent": st.booleans()}),
        "/api/pods/{draft_id}/join": body({"display_name": person}, {"consent": st.booleans()}),
        "/api/pods/{draft_id}/picks": body({
            "card": now(lambda: (seat_view()["pack"] or [{"name": "none"}])[0]["name"]),
            "pack_number": now(lambda: seat_view()["pack_number"]),
            "pick_number": now(lambda: seat_view()["pick_number"]),
            "client_pick_id": st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True)}),
        "/api/games": body({"deck": decks, "opponent_deck": decks}, {
            "opponent": st.sampled_from(["engine:VeryEasy", "random"]), "seat": st.integers(0, 1),
            "first": st.sampled_from(["you", "ai", "random"]), "seed": seed}),
        "/api/games/advice": body({"state": now(lambda: world["game"].state), "seat": st.integers(0, 1)}, {
            "algorithm": st.sampled_from(["flat", "mcts", "minimax"]),
            "level": st.sampled_from(["fast", "default", "strong", "flat", "minimax"]),
            "budget": body({}, {"seconds": st.floats(0.01, 0.2), "simulations": st.integers(1, 4)}), "seed": seed}),
        "/api/games/{game_id}/actions": body({
            "key": now(lambda: (game_view()["actions"] or [{"key": "none"}])[0]["key"]),
            "revision": now(lambda: game_view()["revision"])}, {
            "client_action_id": st.text(min_size=1, max_size=64),
            "pass_until": st.sampled_from(["end_of_turn", "my_turn"])}),
    }
    return bodies.get(path)


def strategies(operation, world) -> list[tuple[str, int, st.SearchStrategy]]:
    """(kind, examples, strategy): requests as the schema allows them, requests that break it (anything,
    the path too), valid requests about the world's own objects, and steered bodies (see :func:`steered`)."""
    own = {p.name: own_objects(world)[p.name] for p in operation.path_parameters}
    out = [("schema", EXAMPLES, operation.as_strategy())]
    if own or operation.query or operation.body:  # something to negate
        out.append(("negated", EXAMPLES, operation.as_strategy(generation_mode=GenerationMode.NEGATIVE)))
    if own:
        out.append(("own", EXAMPLES // 2, operation.as_strategy(path_parameters=own)))
    bodies = steered(operation.path, world)
    if bodies is not None:
        out.append(("steered", EXAMPLES, bodies.flatmap(lambda b: operation.as_strategy(
            path_parameters=own, body=b, media_type="application/json"))))
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("operation", schema_operations())
def test_fuzz_operation(api_schema, guest_world, postgres_text, settings, operation):
    settings.GAME_API_ADVICE_MAX_SECONDS = 0.2  # the advice endpoint searches while the request waits
    method, path = operation.split(" ", 1)
    op = api_schema[path][method]
    cookies = {"sessionid": guest_world["guest"]}  # the guest who holds the pod's seat and the game
    for kind, examples, strategy in strategies(op, guest_world):
        statuses = set()

        @given(case=strategy)
        @hypothesis_settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(HealthCheck),
                             phases=[Phase.explicit, Phase.generate, Phase.shrink])
        def fuzz(case):
            statuses.add(case.call_and_validate(checks=CHECKS, cookies=cookies).status_code)

        fuzz()
        if kind == "steered":  # the steering still reaches past the first checks
            assert any(200 <= s < 300 for s in statuses), (kind, sorted(statuses))


# --- what the fuzz found -------------------------------------------------------------------------------

@pytest.mark.django_db
def test_nul_characters_are_refused_before_they_reach_the_database(client, admin_client, postgres_text):
    """A NUL character in a search parameter reached PostgreSQL, which refuses it: a 500 on the services
    stack. The API answers 400; the pages' filters drop the character."""
    import json

    for url, params in (("/api/cards/", {"q": "bolt\x00"}), ("/api/decks/", {"format": "\x00"})):
        r = client.get(url, params)
        assert r.status_code == 400 and "NUL" in r.json()["errors"][0]["message"]
    r = client.post("/api/decks/", json.dumps({"text": "4 Island", "name": "a\u0000b"}),
                    content_type="application/json")
    assert r.status_code == 400 and "NUL" in r.json()["errors"][0]["message"]
    r = client.post("/api/pods", "set=FZZ%00&display_name=Ana", content_type="application/x-www-form-urlencoded")
    assert r.status_code == 400 and "NUL" in r.json()["errors"][0]["message"]
    r = client.post("/api/drafts/simulate", {"set": "FZZ\x00", "seats": "2"})  # multipart
    assert r.status_code == 400 and "NUL" in r.json()["errors"][0]["message"]
    assert client.get("/cards/", {"q": "bolt\x00", "type": "\x00", "text": "a\x00b"}).status_code == 200
    assert client.get("/drafts/", {"set": "BLB\x00"}).status_code == 200
    assert admin_client.get("/drafts/data/consented.csv", {"set": "\x00"}).status_code == 404  # nothing to export


@pytest.mark.django_db
def test_api_errors_share_one_shape(client):
    """DRF's own 404s read {"detail": ...} and an /api/ URL with no route got Django's HTML page; the API's
    errors are all {"errors": [{"message": ...}]}, as the schema says."""
    for url in ("/api/cards/999999/", "/api/decks/?page=99", "/api/games/not-a-game", "/api/nothing-here"):
        r = client.get(url)
        assert r.status_code == 404 and r["Content-Type"] == "application/json", url
        assert r.json()["errors"][0]["message"], url
    r = client.delete("/api/cards/")
    assert r.status_code == 405 and "DELETE" in r.json()["errors"][0]["message"]
    assert client.get("/no-such-page/")["Content-Type"].startswith("text/html")
