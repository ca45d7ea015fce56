"""The authorization matrix: every page, API endpoint and websocket route × anonymous, guest, user,
other user and staff (docs/reliability.md, "Who may see what").

The routes are read from the URL conf (``get_resolver``) and from the websocket routing, so a route
added without an entry in :data:`EXPECTED` / :data:`EXPECTED_WS` fails
``test_every_route_has_an_entry``. Each entry names the request (method, URL arguments, body) and what
each role gets: a status, where a redirect goes, and for the few routes whose status says nothing
(a form post that always redirects) whether the object changed. Every request that could write runs
in a transaction rolled back afterwards, so the roles see the same world.

The world (:func:`world`) is owned by ``user`` and by the guest: a deck each (unlisted: their own, readable by
its link, in no list for anyone else), a completion job, a pod
being drafted (user in seat 0, the guest in seat 1, a bot), a pod in the lobby, a finished pod, a
game against the AI, a model version, a training run, a gauntlet run. The pod's cards come from a
set of planted names (``MTX ...``); the bodies a role gets from the routes about a pod or a game must
not hold a card that role may not see: another seat's pack or pool, the AI's hand.
"""
from __future__ import annotations

import csv
import io
import json
import re
import types
from dataclasses import dataclass, field
from typing import Callable

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLResolver, get_resolver, path, reverse

from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401 - fixtures
from tests.drafts.test_pod_views import finish
from tests.mtgsite.conftest import run_with_fresh_layers
from tests.ws import connect_path, guest_session

ROLES = ("anonymous", "guest", "user", "other_user", "staff")
SET = "MTX"  # the planted set: every card of the pods is named "MTX ..."


# --- outcomes ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Out:
    """What a role gets: a status; for a redirect, the URL name it goes to; for a route whose status says
    nothing (a form post that always redirects back), whether the watched object changed."""

    status: int
    to: str = ""
    changed: bool | None = None

    def __str__(self):
        change = "" if self.changed is None else " changed" if self.changed else " unchanged"
        return f"{self.status}{' -> ' + self.to if self.to else ''}{change}"


OK, CREATED, ACCEPTED = Out(200), Out(201), Out(202)
BAD, FORBIDDEN, MISSING, NOT_ALLOWED, CONFLICT = Out(400), Out(403), Out(404), Out(405), Out(409)
LOGIN = Out(302, "login")  # the site's login page, with ?next=
ADMIN_LOGIN = Out(302, "admin:login")


def every(out: Out) -> dict:
    return {role: out for role in ROLES}


def staff_only(ok: Out = OK) -> dict:
    """plumbing.staff.staff_only: anonymous visitors log in, signed-in people who are not staff get a 403."""
    return {"anonymous": LOGIN, "guest": LOGIN, "user": FORBIDDEN, "other_user": FORBIDDEN, "staff": ok}


def only(ok: Out, *roles: str, others: Out = MISSING) -> dict:
    return {role: ok if role in roles else others for role in ROLES}


def signed_in(ok: Out = OK) -> dict:
    return {role: LOGIN if role in ("anonymous", "guest") else ok for role in ROLES}


# --- the table -----------------------------------------------------------------------------------------

@dataclass
class Route:
    expect: dict
    method: str = "get"
    url: Callable = lambda w: {}  # the URL's arguments, from the world
    body: object = None  # form data, or a JSON body with json=True
    json: bool = False
    watch: Callable | None = None  # the state that Out.changed describes
    about: str = ""  # "pod", "done" or "game": the body must not show that object's hidden cards to this role;
    # "decks": a list, which must not show another person's unlisted deck


def pk_of(key: str, attr: str):
    """The URL argument ``key``: the primary key of the world's ``attr``."""
    return lambda w: {key: getattr(w, attr).pk}


pod_id, lobby_id, done_id = pk_of("draft_id", "pod"), pk_of("draft_id", "lobby"), pk_of("draft_id", "done")
game_id, version_id = pk_of("game_id", "game"), pk_of("version_id", "version")
run_id, gauntlet_id = pk_of("run_id", "training_run"), pk_of("run_id", "gauntlet")


def seat(draft: str, n: int, **extra):
    return lambda w: {"draft_id": getattr(w, draft).pk, "seat_number": n, **extra}


def deck_public(attr: str):
    """Whether the world's deck ``attr`` is public now (the state a visibility switch changes)."""
    return lambda w: type(getattr(w, attr)).objects.get(pk=getattr(w, attr).pk).public


def owner_flips(owner: str, ok: Out, attr: str) -> dict:
    """A deck's visibility switch: its owner gets ``ok`` (and the deck changes), anyone else a 403 (unchanged):
    the deck itself is readable by its link."""
    return {role: Out(ok.status, ok.to, changed=True) if role == owner else Out(403, changed=False)
            for role in ROLES}


def lobby_seats(w):
    return sorted(w.lobby.seat_set.values_list("seat", flat=True)), w.lobby_status()


def rounds_played(w):
    from drafts.models import DraftRound

    return DraftRound.objects.count()


EXPECTED: dict[str, Route | list[Route]] = {
    # accounts (django.contrib.auth.urls) and sign-up
    "login": Route(every(OK)),
    "logout": Route(every(NOT_ALLOWED)),  # POST only
    "password_change": Route(signed_in()),
    "password_change_done": Route(signed_in()),
    "password_reset": Route(every(OK)),
    "password_reset_done": Route(every(OK)),
    "password_reset_confirm": Route(every(OK), url=lambda w: {"uidb64": "MQ", "token": "set-password"}),
    "password_reset_complete": Route(every(OK)),
    "signup": Route(every(OK)),
    # the API: public reads, anyone may import, complete, simulate, rank, open a pod or play
    "api-schema": Route(every(OK)),
    "api-card-list": Route(every(OK)),
    "api-card-detail": Route(every(OK), url=lambda w: {"pk": w.card.pk}),
    "api-deck-list": Route(every(OK), about="decks"),
    # a person's deck: anyone with its link reads it, its owner alone lists or unlists it
    "api-deck-detail": [Route(every(OK), url=lambda w: {"pk": w.deck.pk}),
                        Route(every(OK), url=lambda w: {"pk": w.guest_deck.pk}),
                        Route(owner_flips("user", OK, "deck"), "patch", json=True, url=lambda w: {"pk": w.deck.pk},
                              body={"public": True}, watch=deck_public("deck")),
                        Route(owner_flips("guest", OK, "guest_deck"), "patch", json=True,
                              url=lambda w: {"pk": w.guest_deck.pk}, body={"public": True},
                              watch=deck_public("guest_deck"))],
    "api-deck-export": Route(every(OK), url=lambda w: {"pk": w.deck.pk}),
    "api-completion": Route(every(ACCEPTED), "post", json=True,
                            body=lambda w: {"format": "standard", "main": [[w.card.name, 4]]}),
    "api-completion-detail": Route(every(OK), url=lambda w: {"job_id": w.job.pk}),
    "api-draft-sets": Route(every(OK)),
    "api-draft-simulate": Route(every(BAD), "post", json=True, body={"set": "NOPE", "seats": 2}),
    "api-draft-suggest": Route(every(OK), "post", json=True,
                               body=lambda w: {"set": SET, "bot": "draftsim", "pack": w.pack_of(0)[:3]}),
    "api-draft-detail": [Route(every(OK), url=pod_id, about="pod"), Route(every(OK), url=done_id, about="done")],
    "api-draft-export": Route(only(OK, "user", "guest", "staff"), url=pod_id, about="pod"),
    "api-pods": Route(every(CREATED), "post", json=True, body={"set": SET, "seats": 2, "display_name": "Zed"}),
    "api-pod": [Route(every(OK), url=pod_id, about="pod"), Route(every(OK), url=done_id, about="done")],
    "api-pod-join": Route(every(OK), "post", json=True, url=lobby_id, body={"display_name": "Zed"},
                          watch=lobby_seats),
    "api-pod-start": Route({**only(FORBIDDEN, "anonymous", "guest", "other_user", "staff"), "user": OK}, "post",
                           json=True, url=lobby_id),
    # seat 0's pick: the guest's own seat (1) has no such card in its pack
    "api-pod-pick": Route({"anonymous": FORBIDDEN, "guest": CONFLICT, "user": OK, "other_user": FORBIDDEN,
                           "staff": FORBIDDEN}, "post", json=True, url=pod_id, about="pod",
                          body=lambda w: {"card": w.only_in_pack_of(0, not_in=1), "pack_number": 0,
                                          "pick_number": 1, "client_pick_id": "matrix-1"}),
    "api-games": Route(every(BAD), "post", json=True, body={"deck": "sample:mono_red_aggro"}),
    "api-game-advice": Route(every(BAD), "post", json=True, body={"seat": 0}),
    "api-game-decks": Route(every(OK)),
    "api-game": Route(only(OK, "user"), url=game_id, about="game"),
    "api-game-actions": Route(only(BAD, "user"), "post", json=True, url=game_id, about="game",
                              body={"key": "not an action", "revision": 1}),
    # conceding a game: its owner only (the world's game is still being played; the transaction is rolled back)
    "api-game-concede": Route(only(OK, "user"), "post", json=True, url=game_id, about="game"),
    # the review of a game: its owner only; the world's game is still being played, so its owner gets a 409
    "api-game-review": [Route(only(CONFLICT, "user"), url=game_id, about="game"),
                        Route(only(CONFLICT, "user"), "post", json=True, url=game_id, about="game")],
    # simulated drafts and the bots: public
    "draft-list": Route(every(OK), about="pod"),
    "draft-bots": Route(every(OK)),
    "draft-archetype-heatmap": Route(every(OK), url=lambda w: {"set_code": SET, "fmt": "svg"}),
    "draft-bot-loss": Route(every(OK), url=version_id),
    # online pods: the pod's page and status are public, each seat's picks private to its drafter (and staff)
    "play": Route(every(OK), about="pod"),
    "pod": [Route(every(OK), url=pod_id, about="pod"), Route(every(OK), url=done_id, about="done")],
    "pod-join": Route({role: Out(302, "pod", changed=role not in ("user", "guest")) for role in ROLES}, "post",
                      url=lobby_id, body={"display_name": "Zed", "consent": "no"}, watch=lobby_seats),
    "pod-leave": Route({**{role: Out(302, "pod", changed=False) for role in ROLES},
                        "guest": Out(302, "play", changed=True)}, "post", url=lobby_id, watch=lobby_seats),
    "pod-start": Route({role: Out(302, "pod", changed=role == "user") for role in ROLES}, "post", url=lobby_id,
                       watch=lobby_seats),
    # play your pod: a finished pod's drafters only. The planted cards are vanilla creatures the engine plays: the
    # guest's auto-built deck starts a game; the user's saved deck (a pool's first 23 cards, no lands) is refused
    "api-pod-rounds": [Route(only(OK, "user", "guest", others=FORBIDDEN), url=done_id, about="done"),
                       Route({**only(BAD, "user", others=FORBIDDEN), "guest": CREATED}, "post", json=True,
                             url=done_id, about="done", body={"level": "engine:Easy"})],
    "pod-round-start": Route({role: Out(302, "game", changed=True) if role == "guest" else Out(302, "pod", changed=False)
                              for role in ROLES}, "post", url=done_id, body={"level": "engine:Easy"},
                             watch=rounds_played),
    "my-drafts": Route(every(OK), about="pod"),
    "my-drafts-export": Route(only(OK, "user", "guest"), about="done"),
    "my-draft-delete": Route(only(Out(302, "my-drafts"), "user"), "post", url=lambda w: {"seat_id": w.done_seat.pk}),
    "draft-consent": Route(every(Out(302, "my-drafts")), "post", body={"consent": "no"}),
    "draft-consented-export": Route({**every(ADMIN_LOGIN), "staff": OK}),
    "draft-detail": [Route(every(OK), url=pod_id, about="pod"), Route(every(OK), url=done_id, about="done")],
    "draft-export": [Route(only(OK, "user", "guest", "staff"), url=pod_id, about="pod"),
                     # a finished pod's bot seats stay private until its rounds are played: its drafters only
                     Route(only(OK, "user", "guest", "staff"), url=done_id, about="done")],
    "draft-seat": [Route(only(OK, "user", "staff"), url=seat("pod", 0), about="pod"),
                   Route(only(OK, "guest", "staff"), url=seat("pod", 1), about="pod"),
                   Route(only(OK, "staff"), url=seat("pod", 2), about="pod"),  # a bot's seat, while drafting
                   # ... and once the pod is finished, until its people have played their rounds (drafts.rounds)
                   Route(only(OK, "staff"), url=seat("done", 2), about="done")],
    "deck-builder": [Route(only(OK, "user"), url=seat("done", 0), about="done"),
                     Route(only(OK, "guest"), url=seat("done", 1), about="done"),
                     Route(only(Out(302, "pod"), "user"), url=seat("pod", 0), about="pod")],
    "draft-seat-plot": [Route(only(OK, "user", "staff"), url=seat("done", 0, fmt="svg"), about="done"),
                        Route(only(OK, "staff"), url=seat("pod", 2, fmt="svg"), about="pod")],
    # games against the AI: the game's owner only
    "games": Route(every(OK), about="game"),
    "game": Route(only(OK, "user"), url=game_id, about="game"),
    "game-concede": Route(only(Out(302, "game"), "user"), "post", url=game_id, about="game"),
    "game-review": [Route(only(CONFLICT, "user"), url=game_id, about="game"),
                    Route(only(CONFLICT, "user"), "post", url=game_id, about="game")],
    # staff pages: the gauntlet and the models
    "gauntlet-list": Route(staff_only()),
    "gauntlet-detail": Route(staff_only(), url=gauntlet_id),
    "gauntlet-progress": Route(staff_only(), url=gauntlet_id),
    "gauntlet-export": Route(staff_only(), url=gauntlet_id),
    "gauntlet-heatmap": Route(staff_only(), url=lambda w: {"run_id": w.gauntlet.pk, "fmt": "svg"}),
    "gauntlet-cancel": Route(staff_only(Out(302, "gauntlet-detail")), "post", url=gauntlet_id),
    "gauntlet-resume": Route(staff_only(Out(302, "gauntlet-detail")), "post", url=gauntlet_id),
    "ml-models": Route(staff_only()),
    "ml-train": Route(staff_only(BAD), "post", body={"kind": "nope"}),
    "ml-upload": Route(staff_only(BAD), "post"),
    "ml-rollback": Route(staff_only(Out(302, "ml-models")), "post", body={"kind": "draft_bot", "scope": "none"}),
    "ml-activate": Route(staff_only(Out(302, "ml-models")), "post", url=version_id),
    "ml-evaluate": Route(staff_only(Out(302, "ml-run")), "post", url=version_id),
    "ml-delete": Route(staff_only(Out(302, "ml-models")), "post", url=version_id),
    "ml-run": Route(staff_only(), url=run_id),
    "ml-run-json": Route(staff_only(), url=run_id),
    "ml-run-cancel": Route(staff_only(Out(302, "ml-run")), "post", url=run_id),
    # the catalogue, decks and deck completion: public (a completion job is read by its random id)
    # (a person's own deck is unlisted: in no list but its owner's "My decks", readable by its link)
    "home": Route(every(OK), about="decks"),
    "card-list": Route(every(OK)),
    "card-detail": Route(every(OK), url=lambda w: {"card_id": w.card.pk}, about="decks"),
    "deck-list": Route(every(OK), about="decks"),
    "my-decks": Route(every(OK), about="decks"),
    "deck-import": Route(every(OK)),
    "deck-detail": [Route(every(OK), url=lambda w: {"deck_id": w.deck.pk}),
                    Route(every(OK), url=lambda w: {"deck_id": w.guest_deck.pk})],
    "deck-visibility": [Route(owner_flips("user", Out(302, "deck-detail"), "deck"), "post",
                              url=lambda w: {"deck_id": w.deck.pk}, body={"visibility": "public"},
                              watch=deck_public("deck")),
                        Route(owner_flips("guest", Out(302, "deck-detail"), "guest_deck"), "post",
                              url=lambda w: {"deck_id": w.guest_deck.pk}, body={"visibility": "public"},
                              watch=deck_public("guest_deck"))],
    "deck-export": Route(every(OK), url=lambda w: {"deck_id": w.deck.pk}),
    "completion-form": Route(every(OK)),
    "completion-job": Route(every(OK), url=lambda w: {"job_id": w.job.pk}),
}

# Websocket routes, by their route text: "accept" or the close code.
EXPECTED_WS = {
    "ws/decks/<int:deck_id>/": (every("accept"), lambda w: {"deck_id": w.deck.pk}, ""),
    "ws/jobs/<uuid:job_id>/": (every("accept"), lambda w: {"job_id": w.job.pk}, ""),
    "ws/pods/<uuid:draft_id>/": (every("accept"), pod_id, "pod"),  # a seat's socket gets its own view only
    "ws/games/<uuid:game_id>/": (only("accept", "user", others=4403), game_id, "game"),
}


# --- the routes ---------------------------------------------------------------------------------------

def http_routes(urlconf=None) -> dict[str, str]:
    """Every URL pattern of ``urlconf`` (the site's by default): {key: route}; the key is the pattern's
    name (``admin:...`` inside the admin), or its route when it has no name."""
    out = {}

    def walk(patterns, prefix, namespace):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
            else:
                route = prefix + str(p.pattern)
                key = p.name or route
                out[f"{namespace}:{key}" if namespace else key] = route

    walk(get_resolver(urlconf).url_patterns, "", None)
    return out


def ws_routes(patterns=None) -> list[str]:
    """The websocket routes (mtgsite.routing and the apps' routing.py)."""
    from mtgsite.routing import websocket_urlpatterns

    return [str(p.pattern) for p in (websocket_urlpatterns if patterns is None else patterns)]


def missing_entries(routes, expected) -> list[str]:
    """Routes with no entry (admin routes are covered by one rule); and entries for routes that are gone."""
    keys = [k for k in routes if not k.startswith("admin:")]
    return [f"no entry for {k}" for k in keys if k not in expected] + [f"no route for {k}" for k in expected
                                                                        if k not in routes]


def test_every_route_has_an_entry():
    assert missing_entries(http_routes(), EXPECTED) == []
    assert missing_entries(ws_routes(), EXPECTED_WS) == []
    assert any(k.startswith("admin:") for k in http_routes())  # covered by the admin rule


def test_a_route_without_an_entry_fails():
    from mtgsite import urls
    from mtgsite.routing import websocket_urlpatterns

    def view(request):
        raise AssertionError("never called")

    urlconf = types.ModuleType("brand_new_urls")  # what ROOT_URLCONF names: a module with urlpatterns
    urlconf.urlpatterns = [*urls.urlpatterns, path("brand-new/", view, name="brand-new"), path("unnamed/", view)]
    assert missing_entries(http_routes(urlconf), EXPECTED) == ["no entry for brand-new", "no entry for unnamed/"]
    ws = [*websocket_urlpatterns, path("ws/brand-new/<int:n>/", view)]
    assert missing_entries(ws_routes(ws), EXPECTED_WS) == ["no entry for ws/brand-new/<int:n>/"]
    assert missing_entries(http_routes(), {**EXPECTED, "gone": Route(every(OK))}) == ["no route for gone"]


# --- the world ----------------------------------------------------------------------------------------

@dataclass
class World:
    users: dict
    sessions: dict = field(default_factory=dict)  # role -> session key
    hidden: dict = field(default_factory=dict)  # (object, role) -> card names that role may not see (as of now)

    def client(self, role: str) -> Client:
        client = Client()
        if self.sessions.get(role):
            client.cookies["sessionid"] = self.sessions[role]
        return client

    def pack_of(self, n: int) -> list[str]:
        from drafts.pods import service

        return [c["name"] for c in service.snapshot(self.pod.pk, n)[1]["pack"] or []]

    def only_in_pack_of(self, n: int, not_in: int) -> str:
        theirs = set(self.pack_of(not_in))
        return next(name for name in self.pack_of(n) if name not in theirs)

    def lobby_status(self) -> str:
        self.lobby.refresh_from_db()
        return self.lobby.status

    def hidden_now(self, about: str, role: str, fresh: bool = False) -> set[str]:
        """The card names of ``about`` (the pod being drafted, the finished pod, the game) that ``role``
        may not see now: other seats' packs and picks (less what the role sees itself: a name can be
        in two seats' packs), the AI's hand (less the names public on the board). Worked out again
        with ``fresh`` (after a request that may have changed the object), else remembered."""
        if fresh or (about, role) not in self.hidden:
            self.hidden[about, role] = self._hidden(about, role)
        return self.hidden[about, role]

    def _hidden(self, about: str, role: str) -> set[str]:
        if about == "decks":  # the links to (and names of) the unlisted decks that are not this role's own
            from decks.models import Deck

            unlisted = Deck.objects.filter(public=False).exclude(
                pk__in=Deck.objects.owned_by(self.users.get(role), self.sessions.get("guest") if role == "guest" else None))
            return {text for deck in unlisted for text in (f'"/decks/{deck.pk}/"', deck.name) if text}
        if about == "game":
            from gameplay.play import session

            self.game.refresh_from_db()
            state = json.loads(self.game.state)["state"]
            hand = {state["objects"][str(o)]["name"] for o in state["players"][1 - self.game.human_seat]["hand"]}
            board = json.dumps(session.view_of(self.game)["board"])
            return {n for n in hand if n not in board}
        draft = getattr(self, about)
        cards = {n: seat_cards(draft, n) for n in range(draft.seats)}
        public = set()  # a finished pod's bot seat stays private until the pod's rounds are played
        visible = {"user": {0}, "guest": {1}, "staff": set(cards)}.get(role, set()) | public
        shown = set().union(*(cards[n] for n in visible))
        decks = {f"/decks/{pk}/" for pk in draft.seat_set.exclude(seat__in=visible).exclude(deck=None)
                 .values_list("deck_id", flat=True)}  # a deck built from a private pool (page and API)
        return (set().union(*(cards[n] for n in cards if n not in visible)) - shown) | decks


def seat_cards(draft, n: int) -> set[str]:
    """Every card seat ``n`` of a pod holds or has been shown: its pack now, its picks and the packs it picked from."""
    from drafts.pods import service

    names = {p.pick for p in draft.seat_set.get(seat=n).picks.all()}
    for p in draft.seat_set.get(seat=n).picks.all():
        names.update(p.pack or [])
    view = service.snapshot(draft.pk, n)[1]
    names.update(c["name"] for c in (view["pack"] or []) + view["pool"])
    return names


def pod_of(set_code, seats, user, guest, *, seed, start=True):
    """A pod with ``user`` in seat 0 (the host) and the guest in seat 1; bots fill the rest when started."""
    from drafts.pods import service

    draft, _ = service.create_pod(set_code, seats, "draftsim", 0, "Ana", user=user, consent=True, seed=seed)
    service.join_pod(draft.pk, "Gus", session_key=guest, consent=False)
    if start:
        service.start_pod(draft.pk, user)
    draft.refresh_from_db()
    return draft


@pytest.fixture
def world(request, unthrottled, settings, tmp_path, django_user_model):
    from decks.forms import import_deck
    from decks.models import Card, CompletionJob
    from gameplay.gauntlet.models import GauntletRun
    from gameplay.play import session
    from ml import registry
    from ml.models import TrainingRun
    from tests.drafts.conftest import make_set
    from tests.ml.conftest import archetype_config, tiny_tensors

    request.getfixturevalue("game_catalogue")  # the engine's cards: the game below
    settings.MTG_MODEL_DIR = tmp_path / "models"
    session.GAME_CACHE.clear()
    names = make_set(SET)
    users = {"user": django_user_model.objects.create_user("ana", password="pw-ana-12345"),
             "other_user": django_user_model.objects.create_user("ben", password="pw-ben-12345"),
             "staff": django_user_model.objects.create_user("cy", password="pw-cy-12345", is_staff=True)}
    w = World(users=users)
    for role, user in users.items():
        client = Client()
        client.force_login(user)
        w.sessions[role] = client.session.session_key
    w.sessions["guest"] = guest = guest_session()

    w.card = Card.objects.get(name=names[0])
    w.deck = import_deck("\n".join(f"4 {n}" for n in names[:15]), name="Ana's deck", owner=users["user"]).deck
    w.guest_deck = import_deck("\n".join(f"4 {n}" for n in names[1:16]), name="Gus private deck", guest=guest).deck
    w.job = CompletionJob.objects.create(format="standard", known_main=[[names[0], 4]], owner=users["user"])
    w.pod = pod_of(SET, 3, users["user"], guest, seed=1)
    from drafts.pods import service

    for n in (0, 1):  # a pick each, so that both people have a pool
        view = service.snapshot(w.pod.pk, n)[1]
        service.make_pick(w.pod.pk, n, view["pack"][0]["name"], 0, 0, f"first-{n}")
    w.lobby = pod_of(SET, 4, users["user"], guest, seed=2, start=False)
    w.done = pod_of(SET, 3, users["user"], guest, seed=3)
    finish(w.done)
    w.done_seat = w.done.seat_set.get(seat=0)
    pool = [p.pick for p in w.done_seat.picks.all()]
    built = w.client("user").post(reverse("deck-builder", kwargs=seat("done", 0)(w)), content_type="application/json",
                                  data={"main": [[n, 1] for n in pool[:23]], "side": [[n, 1] for n in pool[23:]]})
    assert built.status_code == 200, built.content
    assert not w.done.seat_set.get(seat=0).deck.public  # a deck built from a draft pool is unlisted too
    w.game, _ = session.create_game("sample:mono_red_aggro", "sample:mono_white_weenie", "engine:VeryEasy",
                                    first="you", user=users["user"], seed=8)
    assert w.hidden_now("game", "user"), "the AI's hand should hold a card the person cannot see"
    w.version = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=f"archetype:{SET}",
                                      metrics={"history": {"train_loss": [2.0, 1.5], "val_loss": [2.1, 1.7]}})
    w.training_run = TrainingRun.objects.create(job="evaluate", kind="draft_bot", scope=f"archetype:{SET}",
                                                target_version=w.version)
    w.gauntlet = GauntletRun.objects.create(name="matrix", games_per_pair=2, status="running", total=2,
                                            created_by=users["staff"],
                                            decks=[{"name": "a", "source": "sample", "cards": [[names[0], 60]]},
                                                   {"name": "b", "source": "sample", "cards": [[names[1], 60]]}])
    return w


# --- asking ------------------------------------------------------------------------------------------

def ask(w: World, role: str, name: str, route: Route):
    """(outcome, body) of one request, in a transaction rolled back afterwards."""
    kwargs = route.url(w)
    url = reverse(name, kwargs=kwargs)
    client = w.client(role)
    body = route.body(w) if callable(route.body) else route.body
    with transaction.atomic():
        before = route.watch(w) if route.watch else None
        try:
            if route.json:
                response = getattr(client, route.method)(url, json.dumps(body or {}), content_type="application/json")
            elif route.method == "post":
                response = client.post(url, body or {})
            else:
                response = client.get(url)
        except Exception as exc:  # a 500: recorded, not raised
            transaction.set_rollback(True)
            return Out(500, to=repr(exc)[:200]), b""
        changed = None if route.watch is None else route.watch(w) != before
        hidden = w.hidden_now(route.about, role, fresh=route.method != "get") if route.about else set()
        transaction.set_rollback(True)
    if route.method != "get":
        w.hidden.clear()  # that was the world as the request left it, now rolled back
    to = ""
    if response.status_code in (301, 302):
        to = where(response["Location"])
    expected_changed = route.expect[role].changed
    content = b"".join(response.streaming_content) if response.streaming else response.content
    shown = leaks(hidden, content, response.get("Content-Type", ""))
    return Out(response.status_code, to, changed if expected_changed is not None else None), shown


def where(location: str) -> str:
    from django.urls import Resolver404, resolve
    from urllib.parse import urlsplit

    try:
        match = resolve(urlsplit(location).path)
    except Resolver404:
        return location
    return match.view_name


def leaks(hidden: set[str], content: bytes, content_type: str) -> list[str]:
    """The hidden names a body shows. A 17Lands CSV names every card of the set in its header: there a
    card is shown when a row picks it or counts it in its pack or pool."""
    if not hidden:
        return []
    text = content.decode("utf-8", "replace")
    if content_type.startswith("text/csv"):
        shown = set()
        for row in csv.DictReader(io.StringIO(text)):
            shown.add(row.get("pick"))
            for column, value in row.items():
                prefix = next((p for p in ("pack_card_", "pool_") if column.startswith(p)), None)
                if prefix and value not in ("", "0"):
                    shown.add(column[len(prefix):])
        return sorted(hidden & shown)
    return sorted(n for n in hidden if n in text)


@pytest.mark.django_db(transaction=True)  # the websocket consumers read the world from their own threads
def test_authorization_matrix(world):
    """Pages and API (:data:`EXPECTED`), the admin (one rule) and the websockets (:data:`EXPECTED_WS`)."""
    w = world
    # the check sees a leak: what staff may read of seat 0 holds cards hidden from another user
    page = w.client("staff").get(reverse("draft-seat", kwargs=seat("pod", 0)(w)))
    assert leaks(w.hidden_now("pod", "other_user"), page.content, page["Content-Type"])
    problems = http_problems(w) + admin_problems(w) + ws_problems(w)
    assert not problems, "\n".join(problems)


def http_problems(w: World) -> list[str]:
    problems = []
    for name, entry in EXPECTED.items():
        for route in entry if isinstance(entry, list) else [entry]:
            for role in ROLES:
                got, leak = ask(w, role, name, route)
                want = route.expect[role]
                if got != want:
                    problems.append(f"{name} {route.url(w)} as {role}: got {got}, expected {want}")
                if leak:
                    problems.append(f"{name} {route.url(w)} as {role} shows hidden cards: {leak[:5]}")
    return problems


# --- the admin: one rule --------------------------------------------------------------------------------

ADMIN_ARGS = {"app_label": "auth", "object_id": "1", "id": "1", "content_type_id": "1", "url": "no-such-page/"}


def fill(route: str, args: dict) -> str:
    """A URL for ``route`` (path converters and regex groups alike) with ``args``."""
    route = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(args[m.group(1)]), route)
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(args[m.group(1)]), route)
    return "/" + route.replace("^", "").replace("$", "")


def admin_outcome(client, url: str) -> Out:
    try:
        response = client.get(url)
    except Exception as exc:  # a 500: recorded, not raised
        return Out(500, repr(exc)[:200])
    return Out(response.status_code, where(response["Location"]) if response.status_code in (301, 302) else "")


def admin_problems(w: World) -> list[str]:
    """Every admin URL sends whoever is not staff to the admin's login page (which itself is open; its
    logout sends them to its index, which sends them to log in), and lets staff in: 200, or 403 / 404
    where a staff account lacks a model's permission, never the login page."""
    problems = []
    for key, route in http_routes().items():
        if not key.startswith("admin:"):
            continue
        url = fill(route, ADMIN_ARGS)
        for role in ROLES:
            got = admin_outcome(w.client(role), url)
            if role != "staff":
                want_ok = got == {"admin:login": OK, "admin:logout": Out(302, "admin:index")}.get(key, ADMIN_LOGIN)
            else:
                want_ok = got.status < 500 and got.to != "admin:login"
            if not want_ok:
                problems.append(f"{key} {url} as {role}: got {got}")
    return problems


# --- websockets ---------------------------------------------------------------------------------------

async def ws_outcome(w: World, role: str, url: str, hidden: set[str]) -> tuple[object, list[str]]:
    """("accept" or the close code, hidden names in what the socket was sent)."""
    comm, connected, code = await connect_path(url, w.sessions.get(role))
    if not connected:
        return code, []
    sent = []
    await comm.send_json_to({"v": 1, "action": "sync"})
    while not await comm.receive_nothing(timeout=0.3):
        sent.append(await comm.receive_from())
    await comm.disconnect()
    return "accept", leaks(hidden, "\n".join(sent).encode(), "application/json")


def ws_problems(w: World) -> list[str]:
    problems = []
    for route, (expect, args, about) in EXPECTED_WS.items():
        url = fill(route, args(w))
        for role in ROLES:
            hidden = w.hidden_now(about, role) if about else set()
            got, leak = run_with_fresh_layers(ws_outcome(w, role, url, hidden))
            if got != expect[role]:
                problems.append(f"{url} as {role}: got {got}, expected {expect[role]}")
            if leak:
                problems.append(f"{url} as {role} was sent hidden cards: {leak[:5]}")
    return problems
