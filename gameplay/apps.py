from django.apps import AppConfig


class GameplayConfig(AppConfig):
    name = "gameplay"
    websocket_routes = "gameplay.routing.websocket_urlpatterns"  # collected by mtgsite.routing

    def ready(self):
        from decks import panels  # noqa: PLC0415 - the card and deck pages' panels: once the apps are loaded
        from gameplay import kinds, setup  # noqa: PLC0415 - the training shells import models: once the registry is ready

        kinds.register()
        setup.register()  # the engine cards' steps of setup_site
        # the card and deck pages say whether the rules engine supports their cards
        from gameplay.carddb import support_view  # noqa: PLC0415 - imports models: once the registry is ready

        panels.register("engine", "gameplay/_engine_support.html", support_view)
