from django.apps import AppConfig

from ml import kinds


class DraftsConfig(AppConfig):
    name = "drafts"
    websocket_routes = "drafts.routing.websocket_urlpatterns"  # collected by mtgsite.routing

    def ready(self):
        from drafts.kinds import DRAFT_BOT  # noqa: PLC0415 - imports models: only once the app registry is ready

        kinds.register(DRAFT_BOT)
        from decks import guards  # noqa: PLC0415 - as above
        from drafts.access import may_read_deck  # noqa: PLC0415 - as above

        guards.register("draft seats", may_read_deck)
