"""Card search shared by the /cards/ page and GET /api/cards/ (one filtering function for both).

``parse_card_query`` reads request parameters into a ``CardQuery`` plus plain-English notes about
anything it had to ignore; ``filter_cards`` turns a ``CardQuery`` into a queryset.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.paginator import Paginator
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from decks.core.names import normalize_name
from decks.core.rules import FORMATS, normalize_format
from decks.models import Card, Legality

COLOR_CHOICES = [("W", "White"), ("U", "Blue"), ("B", "Black"), ("R", "Red"), ("G", "Green"), ("C", "Colorless")]
SORTS = {
    "relevance": ("name",),  # ranked in filter_cards when there is a name query
    "name": ("name",),
    "mv": ("mana_value", "name"),
    "popularity": ("-deck_count", "name"),
}
SORT_CHOICES = [("relevance", "Best match"), ("name", "Name"), ("mv", "Mana value"), ("popularity", "Popularity")]
SORT_ALIASES = {"mana_value": "mv", "manavalue": "mv", "cmc": "mv", "deck_count": "popularity", "popular": "popularity"}
PAGE_SIZE = 50
MAX_PARAM_LENGTH = 200
TYPE_FIELDS = ("types", "subtypes", "supertypes")


@dataclass
class CardQuery:
    q: str = ""
    type: str = ""
    colors: list[str] = field(default_factory=list)
    text: str = ""
    format: str = ""
    sort: str = "name"

    @property
    def is_empty(self) -> bool:
        return not (self.q or self.type or self.colors or self.text or self.format)


def _param(params, name: str, notes: list[str]) -> str:
    value = " ".join(str(params.get(name, "") or "").replace("\x00", "").split())  # PostgreSQL refuses NUL
    if len(value) > MAX_PARAM_LENGTH:
        notes.append(f"The {name} filter was cut to {MAX_PARAM_LENGTH} characters.")
        value = value[:MAX_PARAM_LENGTH]
    return value


def _list_param(params, name: str) -> list[str]:
    if hasattr(params, "getlist"):
        values = params.getlist(name)
    else:
        raw = params.get(name, [])
        values = raw if isinstance(raw, (list, tuple)) else [raw]
    out: list[str] = []
    for value in values:
        out += [v for v in str(value or "").replace(",", " ").split()]
    return out


def known_format(value: str) -> str | None:
    """The format key for ``value``: one of FORMATS, or any format the catalogue has legalities for."""
    fmt = normalize_format(value)
    if fmt:
        return fmt
    key = value.strip().casefold()
    if key and len(key) <= 20 and Legality.objects.filter(format=key).exists():
        return key
    return None


def parse_card_query(params) -> tuple[CardQuery, list[str]]:
    """Request parameters (a QueryDict or a dict) -> the query and notes about ignored parameters."""
    notes: list[str] = []
    query = CardQuery(
        q=_param(params, "q", notes),
        type=_param(params, "type", notes),
        text=_param(params, "text", notes),
    )

    colors: list[str] = []
    for raw in _list_param(params, "color"):
        letters = raw.upper()
        # "WU" and "W,U" both work; names such as "blue" too.
        names = {name.upper(): letter for letter, name in COLOR_CHOICES}
        if letters in names:
            letters = names[letters]
        for letter in letters:
            if letter not in dict(COLOR_CHOICES):
                notes.append(f"Unknown colour {raw!r} ignored; use W, U, B, R, G or C.")
                break
            if letter not in colors:
                colors.append(letter)
    if "C" in colors and len(colors) > 1:
        notes.append("Colorless cannot be combined with colours; the Colorless choice was ignored.")
        colors.remove("C")
    query.colors = [c for c, _ in COLOR_CHOICES if c in colors]

    fmt = _param(params, "format", notes)
    if fmt:
        found = known_format(fmt)
        if found:
            query.format = found
        else:
            notes.append(f"Unknown format {fmt!r}; showing cards of every format. Known formats: {', '.join(FORMATS)}.")

    sort = _param(params, "sort", notes).lower()
    sort = SORT_ALIASES.get(sort, sort)
    if sort and sort not in SORTS:
        notes.append(f"Unknown sort {sort!r}; sorted by name.")
        sort = ""
    # With a name query the best match (exact, then prefix, then popular) comes first.
    query.sort = sort or ("relevance" if query.q else "name")
    return query, notes


def _word_q(fieldname: str, word: str) -> Q:
    """``word`` is one whole space-separated word of ``fieldname`` (case-insensitive)."""
    return (Q(**{f"{fieldname}__iexact": word}) | Q(**{f"{fieldname}__istartswith": word + " "})
            | Q(**{f"{fieldname}__iendswith": " " + word}) | Q(**{f"{fieldname}__icontains": f" {word} "}))


def filter_cards(query: CardQuery, queryset: QuerySet | None = None) -> QuerySet:
    qs = Card.objects.all() if queryset is None else queryset
    key = normalize_name(query.q) if query.q else ""
    if key:
        qs = qs.filter(Q(name_key__contains=key) | Q(front_name__iexact=query.q))
    if query.type:
        for word in query.type.replace("—", " ").replace("-", " ").split():
            cond = Q()
            for fieldname in TYPE_FIELDS:
                cond |= _word_q(fieldname, word)
            qs = qs.filter(cond)
    if query.colors == ["C"]:
        qs = qs.filter(colors="")
    else:
        for letter in query.colors:
            qs = qs.filter(colors__contains=letter)
    if query.text:
        qs = qs.filter(oracle_text__icontains=query.text)
    if query.format:
        qs = qs.filter(id__in=Legality.objects.filter(format=query.format, status__in=("legal", "restricted"))
                       .values("card_id"))
    if query.sort == "relevance" and key:
        rank = Case(When(name_key=key, then=Value(0)), When(front_name__iexact=query.q, then=Value(0)),
                    When(name_key__startswith=key, then=Value(1)), default=Value(2), output_field=IntegerField())
        return qs.annotate(rank=rank).order_by("rank", "-deck_count", "name")
    return qs.order_by(*SORTS.get(query.sort, SORTS["name"]))


def search_cards(params) -> tuple[CardQuery, QuerySet, list[str]]:
    query, notes = parse_card_query(params)
    return query, filter_cards(query), notes


def paginate(request, object_list, per_page: int | None = None):
    """A page of ``object_list`` and a note when the ``page`` parameter had to be corrected."""
    paginator = Paginator(object_list, per_page or PAGE_SIZE)
    raw = str(request.GET.get("page", "") or "").strip()
    number, note = 1, None
    if raw:
        try:
            number = int(raw)
        except ValueError:
            note = f"Page {raw[:20]!r} is not a page number; showing page 1."
        else:
            if number < 1:
                note, number = f"There is no page {number}; showing page 1.", 1
            elif number > paginator.num_pages:
                note = f"There is no page {number}; showing the last page ({paginator.num_pages})."
                number = paginator.num_pages
    return paginator.page(number), note


def query_without_page(request) -> str:
    """The current query string without ``page``, for page links that keep the filters."""
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()
