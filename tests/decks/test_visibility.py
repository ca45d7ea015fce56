"""People's decks are theirs (issue 28, item 4): a deck a person saves is unlisted until they make it public.

Unlisted: reachable by its link (page, export, API detail), in its owner's "My decks" (an account's, or a guest
session's), and in no list: not /decks/ nor its format filter, not the home page, not a card page's decks, not the
API's list. The tournament corpus stays listed. Only the owner flips the switch (page and API).
"""
from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from decks.models import Card, CompletionJob, Deck
from tests.decks.completion.conftest import eager_tasks, tiny_corpus, tiny_models  # noqa: F401 - fixtures
from tests.decks.test_pages import GOOD_LIST
from tests.ws import guest_session

pytestmark = pytest.mark.django_db

PARTIAL = "4 Lightning Bolt\n4 Goblin Guide\n2 Inspiring Vantage\n1 Plains\n"  # no corpus deck plays Plains


def as_guest(key: str | None = None) -> Client:
    client = Client()
    client.cookies["sessionid"] = key or guest_session()
    return client


def signed_in(django_user_model, name: str) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_user(name, password=f"pw-{name}-12345"))
    return client


def where_listed(client: Client, deck: Deck) -> list[str]:
    """The lists (pages and API) that show ``deck`` to ``client``'s person. The card page is its card that the
    fewest decks play (a card page shows the 10 most played)."""
    link = f'href="/decks/{deck.pk}/"'
    card = min(Card.objects.filter(deck_entries__deck=deck).distinct(), key=lambda c: (c.deck_entries.count(), c.pk))
    pages = {"home": reverse("home"), "deck list": reverse("deck-list"),
             "deck list, its format": f"{reverse('deck-list')}?format={deck.format}",
             "deck list, most played": f"{reverse('deck-list')}?sort=popularity",
             "card page": reverse("card-detail", args=[card.pk]), "my decks": reverse("my-decks")}
    shown = [name for name, url in pages.items() if link in client.get(url).content.decode()]
    for name, params in (("API list", {}), ("API list, its format", {"format": deck.format})):
        response = client.get(reverse("api-deck-list"), params)
        assert response.status_code == 200
        if deck.pk in [d["id"] for d in response.json()["results"]]:
            shown.append(name)
    return shown


def reachable_by_link(client: Client, deck: Deck) -> bool:
    return all(client.get(url).status_code == 200 for url in (
        reverse("deck-detail", args=[deck.pk]), reverse("deck-export", args=[deck.pk]),
        reverse("api-deck-detail", args=[deck.pk]), reverse("api-deck-export", args=[deck.pk])))


def flip(client: Client, deck: Deck, visibility: str):
    return client.post(reverse("deck-visibility", args=[deck.pk]), {"visibility": visibility})


def test_a_guests_completed_deck_is_theirs_until_they_make_it_public(
        tiny_models, eager_tasks, django_user_model, django_capture_on_commit_callbacks):  # noqa: F811 - fixtures
    owner = Client()  # a guest with no session yet: completing a deck gives them one
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post(reverse("completion-form"), {"text": PARTIAL, "format": "modern",
                                                           "sideboard": "generate", "sampler": "fast", "seed": "3"})
    assert response.status_code == 302
    job = CompletionJob.objects.get()
    assert job.status == "done", job.error
    deck = job.deck
    assert (deck.source, deck.public, deck.owner, deck.guest) == ("completion", False, None,
                                                                  owner.session.session_key)
    others = {"anonymous": Client(), "another guest": as_guest(), "a user": signed_in(django_user_model, "ben")}

    corpus = Deck.objects.filter(source="corpus").order_by("-id").first()
    assert corpus.public and "deck list" in where_listed(others["anonymous"], corpus)  # the corpus stays listed
    for who, client in others.items():
        assert where_listed(client, deck) == [], who
        assert reachable_by_link(client, deck), who
    assert where_listed(owner, deck) == ["my decks"]
    assert reachable_by_link(owner, deck)
    page = owner.get(reverse("deck-detail", args=[deck.pk])).content.decode()
    assert "Unlisted" in page and "Make public" in page
    assert "Make public" not in others["another guest"].get(reverse("deck-detail", args=[deck.pk])).content.decode()

    # nobody else flips it, on the page or in the API
    for who, client in others.items():
        assert flip(client, deck, "public").status_code == 403, who
        response = client.patch(reverse("api-deck-detail", args=[deck.pk]), {"public": True},
                                content_type="application/json")
        assert response.status_code == 403 and response.json()["errors"][0]["message"], who
    deck.refresh_from_db()
    assert not deck.public

    response = flip(owner, deck, "public")
    assert response.status_code == 302 and response["Location"] == reverse("deck-detail", args=[deck.pk])
    for who, client in others.items():
        listed = where_listed(client, deck)
        assert {"deck list", "deck list, its format", "card page", "API list", "API list, its format"} <= set(listed)
        assert "my decks" not in listed, who
    assert "my decks" in where_listed(owner, deck)

    assert flip(owner, deck, "unlisted").status_code == 302  # and back
    assert all(where_listed(client, deck) == [] for client in others.values())


def test_imports_and_api_decks_are_their_owners(catalogue, django_user_model):
    user = signed_in(django_user_model, "ana")
    response = user.post(reverse("deck-import"), {"text": GOOD_LIST, "name": "Ana's burn", "format": "modern"})
    assert response.status_code == 302
    mine = Deck.objects.get(name="Ana's burn")
    assert (mine.public, mine.owner.username, mine.guest) == (False, "ana", "")

    guest = APIClient()  # a guest through the API: the import gives them a session, the deck is theirs
    body = guest.post(reverse("api-deck-list"), {"text": GOOD_LIST, "format": "modern"}, format="json").json()
    theirs = Deck.objects.get(pk=body["id"])
    assert body["public"] is False and theirs.guest == guest.session.session_key and theirs.owner is None

    anonymous = Client()
    assert where_listed(anonymous, mine) == where_listed(anonymous, theirs) == []
    assert where_listed(user, mine) == ["my decks"] and where_listed(user, theirs) == []
    assert user.patch(reverse("api-deck-detail", args=[theirs.pk]), {"public": True},
                      content_type="application/json").status_code == 403
    response = guest.patch(reverse("api-deck-detail", args=[theirs.pk]), {"public": True}, format="json")
    assert response.status_code == 200 and response.json()["public"] is True
    assert "API list" in where_listed(anonymous, theirs)
    assert user.patch(reverse("api-deck-detail", args=[mine.pk]), {"public": True},
                      content_type="application/json").json()["public"] is True
    assert "deck list" in where_listed(anonymous, mine)


def test_bad_input_is_a_clean_4xx(catalogue):
    owner = as_guest()
    assert owner.post(reverse("deck-import"), {"text": GOOD_LIST}).status_code == 302
    deck = Deck.objects.get()
    url, api = reverse("deck-visibility", args=[deck.pk]), reverse("api-deck-detail", args=[deck.pk])
    assert owner.post(reverse("deck-visibility", args=[999_999]), {"visibility": "public"}).status_code == 404
    assert owner.get(url).status_code == 405
    for body in ({}, {"visibility": "everyone"}, {"visibility": "\x00"}):
        assert owner.post(url, body).status_code == 400, body
    assert owner.patch(reverse("api-deck-detail", args=[999_999]), {"public": True},
                       content_type="application/json").status_code == 404
    for body in ({}, {"public": "yes"}, {"public": 1}, {"public": True, "name": "mine"}, [True], "true"):
        response = owner.patch(api, json.dumps(body), content_type="application/json")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "public", body
    assert owner.patch(api, "{not json", content_type="application/json").status_code == 400
    assert owner.patch(api, "public=1", content_type="application/x-www-form-urlencoded").status_code == 400
    for method in ("put", "delete"):
        assert getattr(owner, method)(api, {"public": True}, content_type="application/json").status_code == 405
    assert owner.post(api, {"public": True}, content_type="application/json").status_code == 405
    deck.refresh_from_db()
    assert not deck.public
    # the page's switch needs the CSRF token like every other form post
    strict = Client(enforce_csrf_checks=True)
    strict.cookies["sessionid"] = owner.cookies["sessionid"].value
    assert strict.post(url, {"visibility": "public"}).status_code == 403
    deck.refresh_from_db()
    assert not deck.public


@pytest.mark.django_db(transaction=True)
def test_the_migration_unlists_peoples_decks_and_keeps_the_corpus_listed():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("decks", "0007_completionjob_worker")], [("decks", "0008_deck_visibility")]
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        old = executor.loader.project_state(before).apps.get_model("decks", "Deck")
        ids = {source: old.objects.create(name=source, list_hash=source, source=source).pk
               for source in ("corpus", "text", "user", "completion", "draft")}
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        public = dict(Deck.objects.filter(pk__in=ids.values()).values_list("source", "public"))
    finally:
        # back to the newest schema: the tests after this one in the process share the database
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert public == {"corpus": True, "text": True, "user": False, "completion": False, "draft": False}
