"""decks.embeddings.text: card dicts -> Manamorphosis-style tokens (pure, no database)."""
from pathlib import Path

from decks.embeddings.text import NLTK_DATA_DIR, card_tokens, stopwords


def card(**fields):
    base = {"name": "Test Card", "mana_cost": "", "type_line": "", "supertypes": "", "types": "", "subtypes": "",
            "oracle_text": "", "power": "", "toughness": "", "loyalty": "", "faces": []}
    base.update(fields)
    return base


BOLT = card(name="Lightning Bolt", mana_cost="{R}", type_line="Instant", types="Instant",
            oracle_text="Lightning Bolt deals 3 damage to any target.")


def test_lightning_bolt_tokens():
    assert card_tokens(BOLT) == ["|R|", "|Instant|", "@", "deals", "3", "damage", "target"]


def test_mana_cost_symbols_and_symbols_in_text():
    tokens = card_tokens(card(mana_cost="{2}{W}{U/P}", type_line="Artifact", types="Artifact",
                              oracle_text="{T}, Pay {1}{G}: Add {C}{C}."))
    assert tokens[:3] == ["|2|", "|W|", "|U/P|"]
    assert tokens[3] == "|Artifact|"
    assert tokens[4:] == ["|T|", "pay", "|1|", "|G|", ":", "add", "|C|", "|C|"]


def test_power_toughness_loyalty_and_type_tokens():
    tokens = card_tokens(card(name="Goblin Guide", mana_cost="{R}", type_line="Creature — Goblin Scout",
                              types="Creature", subtypes="Goblin Scout", power="2", toughness="2",
                              oracle_text="Haste"))
    assert tokens == ["|R|", "$2$", "#2#", "|Creature|", "goblin", "scout", "haste"]
    star = card_tokens(card(type_line="Creature — Avatar", types="Creature", subtypes="Avatar", power="*",
                            toughness="1+*"))
    assert "$*$" in star and "#1+*#" in star
    walker = card_tokens(card(type_line="Legendary Planeswalker — Jace", supertypes="Legendary",
                              types="Planeswalker", subtypes="Jace", loyalty="3"))
    assert walker == ["!3!", "|Legendary|", "|Planeswalker|", "jace"]


def test_types_parsed_from_type_line_when_fields_are_missing():
    tokens = card_tokens({"name": "X", "type_line": "Legendary Snow Artifact Creature — Golem Time Lord"})
    assert tokens == ["|Legendary|", "|Snow|", "|Artifact|", "|Creature|", "golem", "time", "lord"]


def test_own_name_and_self_references_become_at():
    tokens = card_tokens(card(name="Blazing Thing", type_line="Creature — Elemental", types="Creature",
                              oracle_text="When Blazing Thing enters, this creature deals 1 damage to you. "
                                          "Sacrifice This Enchantment. Return this card to hand. Copy this spell. "
                                          "Crew this Vehicle. Attach this Equipment. Blazing Thing's power."))
    assert tokens.count("@") == 8
    assert "blazing" not in tokens and "thing" not in tokens
    for word in ("creature", "enchantment", "vehicle", "equipment", "spell"):
        assert word not in tokens


def test_legendary_short_name_and_face_names():
    jace = card(name="Jace, the Mind Sculptor", type_line="Legendary Planeswalker — Jace", supertypes="Legendary",
                types="Planeswalker", subtypes="Jace", oracle_text="[−1]: Jace deals 2 damage. Jace's ability.")
    tokens = card_tokens(jace)
    assert tokens.count("@") == 2 and "[-1]" in tokens and ":" in tokens
    # A non-legendary name with a comma keeps its words outside the full name.
    plain = card(name="Borrowing 100, Arrows", type_line="Sorcery", types="Sorcery", oracle_text="Borrowing 100 wins.")
    assert "@" not in card_tokens(plain)
    # Adventure / double-faced: the other face's name and text are included, every name becomes @.
    brazen = card(name="Brazen Borrower // Petty Theft", mana_cost="{1}{U}{U}", type_line="Creature — Faerie Rogue",
                  types="Creature", subtypes="Faerie Rogue", power="3", toughness="1",
                  oracle_text="Flash\nBrazen Borrower can block only creatures with flying.",
                  faces=[{"name": "Petty Theft", "mana_cost": "{1}{U}", "type_line": "Instant — Adventure",
                          "oracle_text": "Return target nonland permanent an opponent controls to its owner's hand. "
                                         "Petty Theft is cool.", "power": "", "toughness": "", "loyalty": ""}])
    tokens = card_tokens(brazen)
    assert tokens.count("@") == 2
    assert ["|1|", "|U|", "|Instant|", "adventure"] == tokens[tokens.index("|Instant|") - 2:tokens.index("|Instant|") + 2]
    assert "nonland" in tokens and "petty" not in tokens and "brazen" not in tokens


def test_back_face_of_transform_card():
    delver = card(name="Delver of Secrets // Insectile Aberration", mana_cost="{U}", type_line="Creature — Human Wizard",
                  types="Creature", subtypes="Human Wizard", power="1", toughness="1",
                  oracle_text="Transform this creature.",
                  faces=[{"name": "Insectile Aberration", "mana_cost": "", "type_line": "Creature — Human Insect",
                          "oracle_text": "Flying", "power": "3", "toughness": "2", "loyalty": ""}])
    assert card_tokens(delver) == ["|U|", "$1$", "#1#", "|Creature|", "human", "wizard", "transform", "@",
                                   "$3$", "#2#", "|Creature|", "human", "insect", "flying"]


def test_reminder_text_removed_but_basic_land_keeps_its_mana_ability():
    tokens = card_tokens(card(type_line="Creature — Bird", types="Creature", subtypes="Bird",
                              oracle_text="Flying (This creature can't be blocked except by creatures with flying "
                                          "(or reach).)\nVigilance"))
    assert tokens == ["|Creature|", "bird", "flying", "vigilance"]
    forest = card(name="Forest", type_line="Basic Land — Forest", supertypes="Basic", types="Land", subtypes="Forest",
                  oracle_text="({T}: Add {G}.)")
    assert card_tokens(forest) == ["|Basic|", "|Land|", "forest", "|T|", ":", "add", "|G|"]


def test_stop_words_removed_and_lowercase():
    tokens = card_tokens(card(type_line="Sorcery", types="Sorcery",
                              oracle_text="Draw Two Cards. Then You May Discard A Card If It Is Red."))
    assert tokens == ["|Sorcery|", "draw", "two", "cards", "may", "discard", "card", "red"]
    assert all(t == t.lower() for t in tokens if not t.startswith("|"))


def test_punctuation():
    text = ('Landfall — Whenever a land you control enters, target creature gets +1/+1 and -2/-0 until end of turn; '
            'it gains "{T}: Add {C}." • Choose one & create a 2/2 token. Non-Human creatures get +X/+0. '
            "Your opponent's hand, isn't it?")
    tokens = card_tokens(card(type_line="Enchantment", types="Enchantment", oracle_text=text))
    for kept in ("-", "+1/+1", "-2/-0", '"', "|T|", ":", "|C|", "•", "2/2", "non-human", "+x/+0", "opponents", "isnt"):
        assert kept in tokens, kept
    assert not any(ch in t for t in tokens for ch in ",.;?()") and "&" not in tokens
    assert tokens.count('"') == 2


def test_stopwords_come_from_the_shipped_nltk_corpus():
    words = stopwords()
    shipped = (NLTK_DATA_DIR / "corpora" / "stopwords" / "english").read_text().split()
    assert words == frozenset(shipped) and len(shipped) == 179
    assert {"the", "a", "of", "to", "you", "this", "don't"} <= words and "draw" not in words
    import nltk

    assert str(NLTK_DATA_DIR) in nltk.data.path
    assert Path(NLTK_DATA_DIR, "corpora", "stopwords", "README").exists()
