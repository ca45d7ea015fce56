"""All websocket routes: each app names its own list in its AppConfig (``websocket_routes``, a dotted path), so
the project imports no app."""
from django.apps import apps
from django.utils.module_loading import import_string


def collect() -> list:
    """The websocket routes of every installed app that has some, in the order of INSTALLED_APPS."""
    return [route for config in apps.get_app_configs() if getattr(config, "websocket_routes", None)
            for route in import_string(config.websocket_routes)]


websocket_urlpatterns = collect()
