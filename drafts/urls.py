from django.urls import path, re_path

from drafts import views
from drafts.pods import rounds_views, views as pod_views

urlpatterns = [
    path("drafts/", views.draft_list, name="draft-list"),
    path("drafts/bots/", views.bots_page, name="draft-bots"),
    path("drafts/play/", pod_views.play, name="play"),
    path("drafts/pods/<uuid:draft_id>/", pod_views.pod_page, name="pod"),
    path("drafts/pods/<uuid:draft_id>/join/", pod_views.pod_join, name="pod-join"),
    path("drafts/pods/<uuid:draft_id>/leave/", pod_views.pod_leave, name="pod-leave"),
    path("drafts/pods/<uuid:draft_id>/start/", pod_views.pod_start, name="pod-start"),
    path("drafts/pods/<uuid:draft_id>/rounds/", rounds_views.round_start, name="pod-round-start"),
    path("drafts/mine/", pod_views.my_drafts, name="my-drafts"),
    path("drafts/mine/export.csv", pod_views.my_drafts_export, name="my-drafts-export"),
    path("drafts/mine/<int:seat_id>/delete/", pod_views.my_draft_delete, name="my-draft-delete"),
    path("drafts/consent/", pod_views.consent_view, name="draft-consent"),
    path("drafts/data/consented.csv", pod_views.consented_export, name="draft-consented-export"),
    path("accounts/signup/", pod_views.signup, name="signup"),
    re_path(r"^drafts/bots/(?P<set_code>[A-Za-z0-9]{2,6})/archetype\.(?P<fmt>svg|png)$", views.archetype_heatmap,
            name="draft-archetype-heatmap"),
    path("drafts/bots/versions/<int:version_id>/loss.svg", views.version_loss_plot, name="draft-bot-loss"),
    path("drafts/<uuid:draft_id>/", views.draft_detail, name="draft-detail"),
    path("drafts/<uuid:draft_id>/export.csv", views.draft_export, name="draft-export"),
    path("drafts/<uuid:draft_id>/seats/<int:seat_number>/", views.seat_detail, name="draft-seat"),
    path("drafts/<uuid:draft_id>/seats/<int:seat_number>/build/", pod_views.deck_builder, name="deck-builder"),
    re_path(r"^drafts/(?P<draft_id>[0-9a-f-]{36})/seats/(?P<seat_number>[0-9])/history\.(?P<fmt>svg|png)$",
            views.seat_history_plot, name="draft-seat-plot"),
]
