from django.urls import path

from judges import compare_views, dashboard_views, export_views, views

app_name = "judges"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.judge_create, name="judge_create"),
    path("<int:pk>/", views.judge_detail, name="judge_detail"),
    path("<int:pk>/edit/", views.judge_edit, name="judge_edit"),
    path("<int:pk>/clone/", views.judge_clone, name="judge_clone"),
    path("<int:pk>/compare/", views.judge_compare, name="judge_compare"),
    path("verdicts/<int:pk>/", views.verdict_detail, name="verdict_detail"),
    path("runs/new/", views.run_start, name="run_start"),
    path("runs/estimate/", views.run_estimate, name="run_estimate"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/resume/", views.run_resume, name="run_resume"),
]

# The comparison dashboard.
urlpatterns += [
    path("dashboard/", dashboard_views.dashboard_index, name="dashboard-index"),
    path("dashboard/<int:version_id>/", dashboard_views.dashboard, name="dashboard"),
    path("dashboard/<int:version_id>/report.json", dashboard_views.dashboard_report_json, name="dashboard-report-json"),
    path("dashboard/<int:version_id>/compare/", compare_views.compare_page, name="compare"),
    path("dashboard/<int:version_id>/ensemble/", dashboard_views.dashboard_ensemble, name="dashboard-ensemble"),
    path("dashboard/<int:version_id>/missed/", dashboard_views.dashboard_missed, name="dashboard-missed"),
    path("dashboard/<int:version_id>/cell/", dashboard_views.dashboard_cell, name="dashboard-cell"),
    path("dashboard/<int:version_id>/items/<int:query_id>/", dashboard_views.dashboard_item, name="dashboard-item"),
]

# CSV/JSON downloads of the dashboard's tables (judges.export_views).
urlpatterns += [
    path(
        "dashboard/<int:version_id>/<str:table>.<str:fmt>",
        export_views.dashboard_table_export,
        name="dashboard-table-export",
    ),
]
