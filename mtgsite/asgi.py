"""ASGI entry point: HTTP through Django, websockets through Channels.

The URL configuration is loaded here, at start-up, under a progress bar (``MTG_PROGRESS=1``, as ``make run``
sets): its views load torch, which the first request paid for otherwise (about 9 s on the shared 2-core
machine, silent, with the port already open)."""
import os

from django.core.asgi import get_asgi_application
from django.urls import get_resolver

from plumbing.progress import ticking

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mtgsite.settings")
LOAD_SECONDS = 8.0  # the estimate behind the bar's ETA (Django, the views, torch) on the shared 2-core machine

with ticking("server: loading the site (Django, the views, torch)", expected=LOAD_SECONDS):
    django_asgi_app = get_asgi_application()
    get_resolver().url_patterns  # noqa: B018  (imports every view now, not in the first request)

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from mtgsite.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
