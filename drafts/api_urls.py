"""The drafts app's /api/ routes: sets, simulated drafts and pick suggestions, and online pods (included under
/api/ by mtgsite.urls)."""
from django.urls import path

from drafts.api import DraftDetailView, DraftExportView, SetListView, SimulateView, SuggestView
from drafts.pods.api import PodCreateView, PodJoinView, PodPickView, PodStartView, PodView
from drafts.pods.rounds_api import PodRoundsView

urlpatterns = [
    path("drafts/sets", SetListView.as_view(), name="api-draft-sets"),
    path("drafts/simulate", SimulateView.as_view(), name="api-draft-simulate"),
    path("drafts/suggest", SuggestView.as_view(), name="api-draft-suggest"),
    path("drafts/<uuid:draft_id>", DraftDetailView.as_view(), name="api-draft-detail"),
    path("drafts/<uuid:draft_id>/export", DraftExportView.as_view(), name="api-draft-export"),
    path("pods", PodCreateView.as_view(), name="api-pods"),
    path("pods/<uuid:draft_id>", PodView.as_view(), name="api-pod"),
    path("pods/<uuid:draft_id>/join", PodJoinView.as_view(), name="api-pod-join"),
    path("pods/<uuid:draft_id>/start", PodStartView.as_view(), name="api-pod-start"),
    path("pods/<uuid:draft_id>/picks", PodPickView.as_view(), name="api-pod-pick"),
    path("pods/<uuid:draft_id>/rounds", PodRoundsView.as_view(), name="api-pod-rounds"),
]
