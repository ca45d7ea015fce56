from django.urls import path, re_path

from drafts import views

urlpatterns = [
    path("drafts/", views.draft_list, name="draft-list"),
    path("drafts/bots/", views.bots_page, name="draft-bots"),
    re_path(r"^drafts/bots/(?P<set_code>[A-Za-z0-9]{2,6})/archetype\.(?P<fmt>svg|png)$", views.archetype_heatmap,
            name="draft-archetype-heatmap"),
    path("drafts/bots/versions/<int:version_id>/loss.svg", views.version_loss_plot, name="draft-bot-loss"),
    path("drafts/<uuid:draft_id>/", views.draft_detail, name="draft-detail"),
    path("drafts/<uuid:draft_id>/export.csv", views.draft_export, name="draft-export"),
    path("drafts/<uuid:draft_id>/seats/<int:seat_number>/", views.seat_detail, name="draft-seat"),
    re_path(r"^drafts/(?P<draft_id>[0-9a-f-]{36})/seats/(?P<seat_number>[0-9])/history\.(?P<fmt>svg|png)$",
            views.seat_history_plot, name="draft-seat-plot"),
]
