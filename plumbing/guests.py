"""Guests: people who play or draft without an account are known by their session key."""


def guest_key(request, create: bool = False) -> str | None:
    """The guest's session key (made on first use so a seat or a game can be bound to it)."""
    if request.user.is_authenticated:
        return None
    if not request.session.session_key and create:
        request.session["guest"] = True
        request.session.save()
    return request.session.session_key
