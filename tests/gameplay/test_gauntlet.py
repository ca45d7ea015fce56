"""The gauntlet's shell: runs and games in the database, Celery tasks (eager here), the command, the pages.

Real games on the real sample decks with the engine's VeryEasy AI; most runs cut games at a small
decision cap (scored as draws) to keep the suite quick, one plays its games to the end.
"""
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from gameplay.core.engine.adapter import EnginePanic
from gameplay.gauntlet import service, tasks
from gameplay.gauntlet.models import GauntletGame, GauntletRun
from gameplay.gauntlet.tasks import play_gauntlet_game

pytestmark = pytest.mark.django_db


def quiet():
    return {"stdout": io.StringIO(), "stderr": io.StringIO()}


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process on either stack (the real worker is in test_gauntlet_live)."""
    from mtgsite.celery import app

    before = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.update(task_always_eager=True, task_eager_propagates=True)
    yield
    app.conf.update(task_always_eager=before[0], task_eager_propagates=before[1])


def samples(*names):
    return [service.sample_deck(n) for n in names]


def test_a_real_gauntlet_through_celery_tasks(game_catalogue, eager_tasks, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = tasks.start_run(samples("mono_red_aggro", "mono_white_weenie"), 2, "engine:VeryEasy", seed=11)
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.errors) == ("done", 2, 2, 0)
    assert run.started and run.finished and run.runner == "celery"
    games = list(run.games.order_by("index"))
    assert [g.seats for g in games] == [[0, 1], [1, 0]] and games[0].seed == games[1].seed
    for g in games:
        assert g.status == "done" and g.attempts == 1 and g.turns > 0 and g.decisions > 10 and g.seconds > 0
        assert g.winner in (0, 1) and g.winner_deck == g.seats[g.winner] and not g.cut
    summary, cards = run.results["summary"], run.results["cards"]
    assert summary["decks"] == ["mono_red_aggro", "mono_white_weenie"]
    cell = summary["matrix"][0][1]
    assert cell["games"] == 2 and cell["wins"] == sum(g.winner_deck == 0 for g in games)
    assert summary["games"]["scored"] == 2 and summary["timing"]["mean_turns"] > 0
    by = {c["card"]: c for c in cards}
    assert by["Burst Lightning"]["decks"] == 1 and by["Burst Lightning"]["games"] == 2
    assert "Mountain" not in by
    # a redelivered task does not play or count the game twice
    assert play_gauntlet_game(run.pk, 0) is None
    assert service.record_game(run.pk, 1, {"winner": 0}) is False
    run.refresh_from_db()
    assert run.done == 2 and GauntletGame.objects.get(run=run, index=0).attempts == 1


def test_an_engine_panic_is_recorded_and_the_run_carries_on(game_catalogue, eager_tasks, monkeypatch,
                                                            django_capture_on_commit_callbacks):
    from gameplay.core.matches import roundrobin as core

    real = core.play_game
    calls = []

    def flaky(game, seats, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise EnginePanic("the rules engine crashed: index out of bounds")
        return real(game, seats, **kwargs)

    monkeypatch.setattr(core, "play_game", flaky)
    with django_capture_on_commit_callbacks(execute=True):
        run = tasks.start_run(samples("mono_blue_faeries", "dimir_terror", "mono_red_aggro"), 1, "engine:VeryEasy",
                                       max_decisions=30)
    run.refresh_from_db()
    assert (run.status, run.done, run.errors, run.total) == ("done", 3, 1, 3)
    bad = run.games.get(status="error")
    assert bad.index == 1 and "EnginePanic" in bad.error and bad.winner is None
    summary = run.results["summary"]
    assert summary["games"] == {"finished": 3, "scored": 2, "errors": 1, "draws": 2, "cut": 2}
    a, b = bad.deck_a, bad.deck_b
    assert summary["matrix"][a][b]["games"] == 0 and summary["matrix"][a][b]["rate"] is None
    # cut games are draws: half a win each
    assert all(c is None or c["games"] == 0 or c["rate"] == 0.5 for row in summary["matrix"] for c in row)


def test_the_command_plays_here_and_writes_json_and_heatmap(game_catalogue, tmp_path, capsys):
    out, plot = tmp_path / "results.json", tmp_path / "heatmap.svg"
    call_command("gauntlet", decks="mono_red_aggro,mono_white_weenie,mono_blue_faeries", games=2,
                 player="engine:VeryEasy", max_decisions=25, seed=5, out=str(out), plot=str(plot))
    text = capsys.readouterr().out
    assert "3 decks" in text and "6 games" in text and "standings" in text and "cards most present" in text
    data = json.loads(out.read_text())
    assert data["status"] == "done" and data["total"] == 6 and len(data["games"]) == 6 and data["seed"] == 5
    assert data["results"]["summary"]["games"]["cut"] == 6  # 25 decisions end no game
    assert {g["decks"][0] for g in data["games"]} == {"mono_red_aggro", "mono_white_weenie", "mono_blue_faeries"}
    assert plot.read_bytes().startswith(b"<?xml") and b"mono_blue_faeries" in plot.read_bytes()
    run = GauntletRun.objects.get()
    assert run.runner == "local" and run.done == 6


def test_the_command_with_a_process_pool_and_a_deck_file(game_catalogue, tmp_path, capsys):
    from tests.gameplay.conftest import sample_deck_lists

    lists = []
    for name in ("mono_red_aggro", "dimir_terror"):
        lists.append(f"Name: {name} from a file\n" + "\n".join(f"{c} {n}" for n, c in sample_deck_lists()[name]["main"]))
    deck_file = tmp_path / "decks.txt"
    deck_file.write_text("\n\n".join(lists))
    call_command("gauntlet", deck_file=[str(deck_file)], games=2, player="engine:VeryEasy", max_decisions=20,
                 workers=2)
    run = GauntletRun.objects.get()
    assert run.deck_names == ["mono_red_aggro from a file", "dimir_terror from a file"]
    assert (run.status, run.done, run.errors) == ("done", 2, 0)
    assert all(g.decisions == 20 and g.cut for g in run.games.all())


def test_bad_input_is_refused_with_the_cards_listed(game_catalogue):
    from decks.models import Card

    red = service.sample_deck("mono_red_aggro")
    with pytest.raises(service.GauntletError, match="at least two decks"):
        service.create_run([red], 2, "engine:VeryEasy")
    with pytest.raises(service.GauntletError, match="between 1 and"):
        service.create_run([red, red], 0, "engine:VeryEasy")
    with pytest.raises(service.GauntletError, match="Bad player"):
        service.create_run([red, red], 2, "engine:Godlike")
    with pytest.raises(service.GauntletError, match="at least 40"):
        service.create_run([red, {"name": "tiny", "cards": [["Mountain", 20]]}], 2, "engine:VeryEasy")

    Card.objects.create(name="Firesong and Sunspeaker", name_key="firesong and sunspeaker",
                        front_name="Firesong and Sunspeaker", mana_cost="{4}{R}", types="Creature",
                        supertypes="Legendary", subtypes="Minotaur Cleric",
                        oracle_text="Red instant and sorcery spells you control have lifelink.\nWhenever a white instant "
                        "or sorcery spell causes you to gain life, Firesong and Sunspeaker deals 3 damage to any target.",
                        power="4", toughness="6", color_identity="RW")
    game_catalogue.build()
    bad = {"name": "bad red", "cards": red["cards"][:-2] + [["Nonexistent Card", 2], ["Firesong and Sunspeaker", 2]]}
    with pytest.raises(service.GauntletError) as info:
        service.create_run([red, bad], 2, "engine:VeryEasy")
    assert info.value.problems == ["bad red: unknown cards: Nonexistent Card",
                                   "bad red: cards the engine does not fully support: Firesong and Sunspeaker"]
    assert info.value.decks["bad red"]["unknown"] == ["Nonexistent Card"]
    assert any("gain life" in p for p in info.value.decks["bad red"]["unsupported"]["Firesong and Sunspeaker"])
    assert not GauntletRun.objects.exists()  # nothing stored

    with pytest.raises(CommandError, match="bad red: cards the engine does not fully support: Firesong and Sunspeaker"):
        call_command("gauntlet", deck_id=[str(_saved(bad).pk)], decks="mono_red_aggro", games=2, **quiet())
    with pytest.raises(CommandError, match="No sample deck 'nope'"):
        call_command("gauntlet", decks="nope,mono_red_aggro", **quiet())
    with pytest.raises(CommandError, match="give decks"):
        call_command("gauntlet", **quiet())


def _saved(deck):
    """A saved deck (the catalogue's cards of ``deck``)."""
    from decks.models import Card, Deck, DeckCard

    d = Deck.objects.create(name=deck["name"], list_hash="x", source="user")
    for name, count in deck["cards"]:
        card = Card.objects.filter(name=name).first()
        if card is not None:
            DeckCard.objects.create(deck=d, card=card, board="main", count=count)
    return d


def test_decklist_text_splits_and_reports_bad_lines(game_catalogue):
    assert service.split_decklists("4 A\n\n2 B\n---\n3 C\n===\n") == ["4 A\n\n2 B", "3 C"]
    assert service.split_decklists("Name: one\n4 A\nName: two\n4 B") == ["Name: one\n4 A", "Name: two\n4 B"]
    with pytest.raises(service.GauntletError) as info:
        service.decks_from_text("4 Burst Lightning\n4 Nonexistent Card\n")
    assert "line 2" in info.value.problems[0]


def _staff(django_user_model, staff=True):
    return django_user_model.objects.create_user("staffer" if staff else "player", password="pw", is_staff=staff)


def test_pages_are_staff_only(client, django_user_model, game_catalogue):
    run = service.create_run(samples("mono_red_aggro", "mono_white_weenie"), 2, "engine:VeryEasy")
    urls = [reverse("gauntlet-list"), reverse("gauntlet-detail", args=[run.pk]),
            reverse("gauntlet-progress", args=[run.pk]), reverse("gauntlet-heatmap", args=[run.pk, "svg"]),
            reverse("gauntlet-export", args=[run.pk])]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(_staff(django_user_model, staff=False))
    for url in urls:
        assert client.get(url).status_code == 403
    assert client.post(reverse("gauntlet-cancel", args=[run.pk])).status_code == 403
    assert client.post(reverse("gauntlet-list"), {"sample": ["mono_red_aggro", "dimir_terror"],
                                                  "games_per_pair": 2, "player": "random",
                                                  "max_decisions": 10}).status_code == 403
    assert GauntletRun.objects.count() == 1


def test_start_a_gauntlet_from_the_page_and_follow_it(client, django_user_model, game_catalogue, eager_tasks,
                                                      django_capture_on_commit_callbacks):
    client.force_login(_staff(django_user_model))
    page = client.get(reverse("gauntlet-list"))
    assert page.status_code == 200 and b"mono_blue_faeries" in page.content and b"engine:VeryHard" in page.content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("gauntlet-list"), {
            "sample": ["mono_red_aggro", "mono_blue_faeries", "dimir_terror"], "games_per_pair": 2,
            "player": "engine:VeryEasy", "max_decisions": 20, "seed": 3})
    run = GauntletRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("gauntlet-detail", args=[run.pk])
    assert run.created_by.username == "staffer" and run.status == "done" and run.done == 6
    progress = client.get(reverse("gauntlet-progress", args=[run.pk])).json()
    assert progress["status"] == "done" and progress["done"] == progress["total"] == 6
    assert {s["name"] for s in progress["standings"]} == {"mono_red_aggro", "mono_blue_faeries", "dimir_terror"}
    detail = client.get(reverse("gauntlet-detail", args=[run.pk]))
    assert detail.status_code == 200
    assert b'id="heatmap"' in detail.content and b'id="gauntlet-cards"' in detail.content
    assert b"Spellstutter Sprite" in detail.content  # a card of the faeries list
    svg = client.get(reverse("gauntlet-heatmap", args=[run.pk, "svg"]))
    assert svg["Content-Type"] == "image/svg+xml" and b"dimir_terror" in svg.content
    assert client.get(reverse("gauntlet-heatmap", args=[run.pk, "png"])).content.startswith(b"\x89PNG")
    export = client.get(reverse("gauntlet-export", args=[run.pk])).json()
    assert len(export["games"]) == 6 and export["results"]["summary"]["games"]["scored"] == 6
    listing = client.get(reverse("gauntlet-list"))
    assert f'href="{reverse("gauntlet-detail", args=[run.pk])}"'.encode() in listing.content


def test_the_page_lists_bad_input(client, django_user_model, game_catalogue):
    client.force_login(_staff(django_user_model))
    one = client.post(reverse("gauntlet-list"), {"sample": ["mono_red_aggro"], "games_per_pair": 2,
                                                 "player": "engine:Medium", "max_decisions": 100})
    assert one.status_code == 400 and b"at least two decks" in one.content
    zero = client.post(reverse("gauntlet-list"), {"sample": ["mono_red_aggro", "dimir_terror"], "games_per_pair": 0,
                                                  "player": "engine:Medium", "max_decisions": 100})
    assert zero.status_code == 400 and b"greater than or equal to 1" in zero.content
    pasted = client.post(reverse("gauntlet-list"), {
        "sample": ["mono_red_aggro"], "games_per_pair": 2, "player": "engine:Medium", "max_decisions": 100,
        "decklists": "Name: homebrew\n20 Mountain\n4 Nonexistent Card\n"})
    assert pasted.status_code == 400 and b"homebrew, line 3" in pasted.content
    assert not GauntletRun.objects.exists()


def test_cancel_and_resume(client, django_user_model, game_catalogue, eager_tasks, django_capture_on_commit_callbacks):
    client.force_login(_staff(django_user_model))
    run = service.create_run(samples("mono_red_aggro", "mono_white_weenie"), 4, "engine:VeryEasy", max_decisions=15)
    service.record_game(run.pk, 0, {"winner": 1, "turns": 3, "decisions": 15, "seconds": 0.1})
    # a worker died mid-game: re-queue what did not finish; the recorded game is not played again
    GauntletGame.objects.filter(run=run, index=1).update(status="running", attempts=1)
    GauntletRun.objects.filter(pk=run.pk).update(status="running")
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(reverse("gauntlet-resume", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert (run.status, run.done) == ("done", 4)
    assert GauntletGame.objects.get(run=run, index=0).attempts == 0 and GauntletGame.objects.get(run=run, index=1).attempts == 2

    other = service.create_run(samples("mono_red_aggro", "mono_white_weenie"), 4, "engine:VeryEasy", max_decisions=15)
    service.record_game(other.pk, 0, {"winner": 0, "turns": 3, "decisions": 15, "seconds": 0.1})
    assert client.post(reverse("gauntlet-cancel", args=[other.pk])).status_code == 302
    other.refresh_from_db()
    assert other.status == "cancelled" and other.results["summary"]["games"]["scored"] == 1
    assert play_gauntlet_game(other.pk, 1) is None  # the remaining games are skipped
    assert other.games.filter(status="pending").count() == 3
    assert not service.cancel_run(other)


def test_the_command_resumes_an_interrupted_run(game_catalogue):
    run = service.create_run(samples("mono_red_aggro", "dimir_terror"), 3, "engine:VeryEasy", max_decisions=10,
                              runner="local")
    service.record_game(run.pk, 0, {"winner": 0, "turns": 2, "decisions": 10, "seconds": 0.1})
    GauntletGame.objects.filter(run=run, index=1).update(status="running", attempts=1)  # the command was killed
    GauntletRun.objects.filter(pk=run.pk).update(status="running")
    out = io.StringIO()
    call_command("gauntlet", resume=run.pk, stdout=out, stderr=io.StringIO())
    assert "1 of 3 games done" in out.getvalue() and "1 were interrupted" in out.getvalue()
    run.refresh_from_db()
    assert (run.status, run.done) == ("done", 3) and run.results["summary"]["games"]["scored"] == 3
    with pytest.raises(CommandError, match="is done; nothing to resume"):
        call_command("gauntlet", resume=run.pk, **quiet())
    with pytest.raises(CommandError, match="no gauntlet #999"):
        call_command("gauntlet", resume=999, **quiet())
