from django.urls import path

from triage import alert_views, export_views, policy_preview_views, views

app_name = "triage"

urlpatterns = [
    path("", views.index, name="index"),
    path("next/", views.claim_next, name="claim_next"),
    path("items/<int:pk>/", views.item, name="item"),
    path("items/<int:pk>/decide/", views.decide, name="decide"),
    path("items/<int:pk>/release/", views.release, name="release"),
    path("items/<int:pk>/reopen/", views.reopen, name="reopen"),
    path("items/<int:pk>/undo/", views.undo, name="undo"),
    path("resolved/", views.resolved, name="resolved"),
    path("queue.<str:fmt>", export_views.queue_export, name="queue_export"),
    path("resolved.<str:fmt>", export_views.resolved_export, name="resolved_export"),
    path("unjudged/", views.unjudged, name="unjudged"),
    path("unjudged/<int:pk>/requeue/", views.requeue, name="requeue"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/monitor/", views.monitor_now, name="monitor_now"),
    path("dashboard/monitor/<int:pk>/", views.monitor_pass_progress, name="monitor_pass"),
    path("alerts/", alert_views.alerts, name="alerts"),
    path("policy-preview/", policy_preview_views.policy_preview_fragment, name="policy_preview"),
    path("alerts/<int:pk>/acknowledge/", alert_views.acknowledge_alert, name="acknowledge_alert"),
    path("alerts/<int:pk>/resolve/", alert_views.resolve_alert, name="resolve_alert"),
]
