from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

handler404 = "plumbing.api.not_found"  # JSON under /api/

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # /api/: the OpenAPI schema, then each app's own API routes
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("decks.api_urls")),
    path("api/", include("drafts.api_urls")),
    path("api/", include("gameplay.api_urls")),
    path("", include("drafts.urls")),
    path("games/gauntlet/", include("gameplay.gauntlet.urls")),
    path("models/", include("ml.urls")),
    path("", include("gameplay.urls")),
    path("", include("decks.urls")),
]
