"""Template filters of the game pages: a player's spec as a person reads it (``{{ run.player|player_name }}``:
"Engine AI, Very Hard", not "engine:VeryHard"; the words are the core's, ``players.describe_player``)."""
from django import template

from gameplay.core.matches.players import describe_player

register = template.Library()


@register.filter
def player_name(spec) -> str:
    return describe_player(spec)
