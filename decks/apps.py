from django.apps import AppConfig

from ml import kinds


class DecksConfig(AppConfig):
    name = "decks"
    verbose_name = "Cards and decks"
    websocket_routes = "decks.routing.websocket_urlpatterns"  # collected by mtgsite.routing

    def ready(self):
        # card embeddings and deck completion: the training modules read models, so once the registry is ready
        from decks.kinds import KINDS  # noqa: PLC0415 - imports models: only once the app registry is ready

        from decks import setup  # noqa: PLC0415 - imports models: only once the app registry is ready

        for kind in KINDS:
            kinds.register(kind)
        setup.register()  # the cards', sets' and decks' steps of setup_site
