"""Card catalogue and decks (persistence only; the rules live in decks.core)."""
import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from decks.core.cards import COLOR_ORDER
from decks.core.cards import mana_symbols as cost_symbols
from plumbing.jobs import JobRow


class Card(models.Model):
    """One card by its oracle name (a split or double-faced card is one row; its faces are in ``faces``)."""

    name = models.CharField(max_length=200, unique=True)
    # Lookup key: casefolded, accents and apostrophes unified (decks.core.names.normalize_name).
    name_key = models.CharField(max_length=200, db_index=True)
    front_name = models.CharField(max_length=200, db_index=True)
    mana_cost = models.CharField(max_length=100, blank=True)
    mana_value = models.FloatField(default=0)
    colors = models.CharField(max_length=5, blank=True, help_text="WUBRG letters, empty for colorless")
    color_identity = models.CharField(max_length=5, blank=True)
    type_line = models.CharField(max_length=200, blank=True)
    supertypes = models.CharField(max_length=100, blank=True)
    types = models.CharField(max_length=100, blank=True, db_index=True)
    subtypes = models.CharField(max_length=200, blank=True)
    oracle_text = models.TextField(blank=True)
    power = models.CharField(max_length=10, blank=True)
    toughness = models.CharField(max_length=10, blank=True)
    loyalty = models.CharField(max_length=10, blank=True)
    defense = models.CharField(max_length=10, blank=True)
    layout = models.CharField(max_length=30, default="normal")
    keywords = models.JSONField(default=list, blank=True)
    faces = models.JSONField(default=list, blank=True, help_text="other faces: name, mana cost, type line, text, P/T")
    # How many copies a deck may hold: 4, or more for basics and "any number of cards named" cards (0 = any).
    copy_limit = models.PositiveSmallIntegerField(default=4)
    source = models.CharField(max_length=30, default="oracle", help_text="mtgjson or oracle corpus")
    deck_count = models.PositiveIntegerField(default=0, help_text="distinct corpus decks playing it")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def is_basic(self):
        return "Basic" in self.supertypes.split() and "Land" in self.types.split()

    @property
    def primary_type(self):
        """The type a deck page groups the card under."""
        kinds = self.types.split()
        for kind in ("Creature", "Planeswalker", "Battle", "Land", "Instant", "Sorcery", "Artifact", "Enchantment"):
            if kind in kinds:
                return kind
        return kinds[0] if kinds else "Other"

    @property
    def color_list(self):
        return [c for c in COLOR_ORDER if c in self.colors]

    @property
    def mana_symbols(self):
        return cost_symbols(self.mana_cost)


class CardSet(models.Model):
    code = models.CharField(max_length=10, unique=True)
    name = models.CharField(max_length=200, blank=True)
    release_date = models.DateField(null=True, blank=True)
    set_type = models.CharField(max_length=40, blank=True)
    source = models.CharField(max_length=40, blank=True)

    class Meta:
        ordering = ["code"]

    def __str__(self):
        return self.code


class Printing(models.Model):
    RARITIES = [(r, r) for r in ("common", "uncommon", "rare", "mythic", "special", "basic")]
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="printings")
    card_set = models.ForeignKey(CardSet, on_delete=models.CASCADE, related_name="printings")
    rarity = models.CharField(max_length=10, choices=RARITIES)
    collector_number = models.CharField(max_length=20, blank=True)
    is_booster = models.BooleanField(default=True)
    arena_id = models.PositiveIntegerField(null=True, blank=True)
    position = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="row in the set's draft list (17Lands column order)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["card_set", "card"], name="printing_unique_card_per_set")]

    def __str__(self):
        return f"{self.card.name} ({self.card_set.code})"


class Legality(models.Model):
    STATUSES = [(s, s) for s in ("legal", "restricted", "banned", "not_legal")]
    SOURCES = [("mtgjson", "MTGJSON legalities"), ("observed", "played in a deck of that format")]
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="legalities")
    format = models.CharField(max_length=20, db_index=True)
    status = models.CharField(max_length=12, choices=STATUSES)
    source = models.CharField(max_length=10, choices=SOURCES)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["card", "format"], name="legality_unique_card_format")]

    def __str__(self):
        return f"{self.card.name}: {self.status} in {self.format} ({self.source})"


class DeckQuerySet(models.QuerySet):
    def listed(self):
        """The decks anyone may find: in the deck list, search, card pages and the API's lists."""
        return self.filter(public=True)

    def newest(self):
        """Most recent first, by the date the deck list shows: a corpus deck's last tournament (``last_seen``), a
        person's deck's day it was saved (``created``); on the same day the list that first appeared latest first."""
        added = TruncDate("created")
        return self.annotate(newest_date=Coalesce("last_seen", added),
                             newest_since=Coalesce("first_seen", added)).order_by("-newest_date", "-newest_since", "-id")

    def owned_by(self, user=None, guest: str | None = None):
        """A person's own decks: a signed-in ``user``'s, else the guest session ``guest``'s (none without one)."""
        if user is not None and user.is_authenticated:
            return self.filter(owner=user)
        if guest:
            return self.filter(owner__isnull=True, guest=guest)
        return self.none()


class Deck(models.Model):
    """A distinct 60+15 (or any) list. Corpus lists are stored once with how often they appeared.

    A deck a person saves (an import, a completion, a deck built from a draft pool) is unlisted until its
    owner makes it public: reachable by its link, in its owner's "My decks", in no list or search."""

    name = models.CharField(max_length=200, blank=True)
    format = models.CharField(max_length=20, blank=True, db_index=True)
    list_hash = models.CharField(max_length=40, db_index=True, help_text="sha1 of format + sorted main + side")
    source = models.CharField(max_length=20, default="user", db_index=True)  # user | corpus | text
    occurrences = models.PositiveIntegerField(default=1)
    first_seen = models.DateField(null=True, blank=True, db_index=True)
    last_seen = models.DateField(null=True, blank=True)
    main_count = models.PositiveSmallIntegerField(default=0)
    side_count = models.PositiveSmallIntegerField(default=0)
    # Names from the source that the catalogue does not know: [[name, count, "main"|"side"], ...]
    unresolved = models.JSONField(default=list, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    guest = models.CharField(max_length=40, blank=True, db_index=True,
                             help_text="the guest session that saved it (plumbing.guests); empty with an owner")
    public = models.BooleanField(default=False, db_index=True,
                                 help_text="listed for everyone (the corpus; a person's deck once they make it "
                                           "public); else reachable only by its link")
    created = models.DateTimeField(auto_now_add=True)
    # Filled by the analyze_deck task: {"formats": {fmt: [problems]}, "curve": {...}, ...}
    analysis = models.JSONField(null=True, blank=True)
    analyzed_at = models.DateTimeField(null=True, blank=True)

    objects = DeckQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            # A corpus list is stored once; users may keep their own copies of any list.
            models.UniqueConstraint(fields=["list_hash"], condition=models.Q(source="corpus"), name="deck_unique_corpus_list"),
        ]

    def __str__(self):
        return self.name or f"{self.format or 'deck'} #{self.pk}"

    @property
    def title(self):
        return str(self)

    @property
    def seen_or_added(self):
        """The date a deck list shows and sorts "newest" by (``DeckQuerySet.newest``): the corpus deck's last
        tournament, else the day it was saved."""
        return self.last_seen or timezone.localdate(self.created)

    def is_owned_by(self, user=None, guest: str | None = None) -> bool:
        """Whether this is the signed-in ``user``'s deck, or the guest session ``guest``'s."""
        if self.owner_id is not None:
            return user is not None and user.is_authenticated and user.pk == self.owner_id
        return bool(self.guest) and self.guest == guest


class DeckCard(models.Model):
    deck = models.ForeignKey(Deck, on_delete=models.CASCADE, related_name="cards")
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="deck_entries")
    board = models.CharField(max_length=4, choices=[("main", "main"), ("side", "side")])
    count = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["deck", "board", "card"], name="deckcard_unique")]


class DeckAppearance(models.Model):
    """One time a corpus list was played (an event result). Deduplicated by ``key``."""

    deck = models.ForeignKey(Deck, on_delete=models.CASCADE, related_name="appearances")
    key = models.CharField(max_length=40, unique=True)
    date = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=40, blank=True)
    event = models.CharField(max_length=300, blank=True)
    event_uri = models.CharField(max_length=500, blank=True)
    result = models.CharField(max_length=100, blank=True)
    dup_of_earlier = models.BooleanField(default=False)


class CompletionJob(JobRow):
    """One deck-completion request: the user's cards in, a legal 60 + 15 deck out (run by a Celery task)."""

    STATUSES = [("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")]
    SAMPLERS = [("fast", "fast (DDIM)"), ("full", "full (1000-step DDPM)")]
    MODELS = [("masked", "masked diffusion + retrieval"), ("manamorphosis", "Manamorphosis")]
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=8, choices=STATUSES, default="queued", db_index=True)
    progress = models.FloatField(default=0.0)
    message = models.CharField(max_length=200, blank=True)
    format = models.CharField(max_length=20)
    known_main = models.JSONField(default=list)  # [[name, count], ...] canonical names
    known_side = models.JSONField(default=list)
    collection = models.JSONField(null=True, blank=True)  # [[name, count], ...]: complete from these cards only
    generate_side = models.BooleanField(default=True)
    sampler = models.CharField(max_length=4, choices=SAMPLERS, default="fast")
    model = models.CharField(max_length=16, choices=MODELS, default="masked",
                             help_text="masked: retrieval + masked diffusion (kind deck_masked); manamorphosis: the "
                                       "continuous diffusion (deck_diffusion), which alone uses the sampler")
    seed = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    deck = models.ForeignKey(Deck, null=True, blank=True, on_delete=models.SET_NULL, related_name="completion_jobs")
    model_version = models.ForeignKey("ml.ModelVersion", null=True, blank=True, on_delete=models.SET_NULL)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    client_key = models.CharField(max_length=80, blank=True, db_index=True,
                                  help_text="who asked (plumbing.limits: user:<id>, guest:<session> or ip:<address>); "
                                            "their unfinished jobs are capped")
    guest = models.CharField(max_length=40, blank=True, default="",
                             help_text="the guest session (plumbing.guests) whose decks get the result; empty for a user")
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True, db_index=True)  # the workers' pace (plumbing.limits)
    worker = models.CharField(max_length=200, blank=True, help_text="the Celery worker (its -n name) that ran it last; "
                                                                    "the machine's name when it ran in the web process "
                                                                    "(embedded stack)")

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"completion {self.id} ({self.status})"

    @property
    def known_main_count(self):
        return sum(c for _, c in self.known_main)

    @property
    def known_side_count(self):
        return sum(c for _, c in self.known_side)
