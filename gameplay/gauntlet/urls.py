"""The gauntlet's pages, included under /games/gauntlet/ (mtgsite/urls.py)."""
from django.urls import path, re_path

from gameplay.gauntlet import views

urlpatterns = [
    path("", views.gauntlet_list, name="gauntlet-list"),
    path("<int:run_id>/", views.gauntlet_detail, name="gauntlet-detail"),
    path("<int:run_id>/progress.json", views.gauntlet_progress, name="gauntlet-progress"),
    path("<int:run_id>/results.json", views.gauntlet_export, name="gauntlet-export"),
    re_path(r"^(?P<run_id>[0-9]+)/heatmap\.(?P<fmt>svg|png)$", views.gauntlet_heatmap, name="gauntlet-heatmap"),
    path("<int:run_id>/cancel/", views.gauntlet_cancel, name="gauntlet-cancel"),
    path("<int:run_id>/resume/", views.gauntlet_resume, name="gauntlet-resume"),
]
