"""Model management pages (staff only), included under /models/."""
from django.urls import path

from ml import views

urlpatterns = [
    path("", views.models_page, name="ml-models"),
    path("train/", views.train, name="ml-train"),
    path("upload/", views.upload, name="ml-upload"),
    path("rollback/", views.rollback, name="ml-rollback"),
    path("versions/<int:version_id>/activate/", views.activate, name="ml-activate"),
    path("versions/<int:version_id>/evaluate/", views.evaluate, name="ml-evaluate"),
    path("versions/<int:version_id>/delete/", views.delete, name="ml-delete"),
    path("runs/<int:run_id>/", views.run_detail, name="ml-run"),
    path("runs/<int:run_id>/progress.json", views.run_json, name="ml-run-json"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="ml-run-cancel"),
]
