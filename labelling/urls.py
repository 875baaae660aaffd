from django.urls import path

from labelling import audit_views, export_views, queue_views, taxonomy_views, views

app_name = "labelling"

urlpatterns = [
    path("", views.index, name="index"),
    path("import/", views.goldset_import, name="import"),
    path("progress/", views.labeller_progress, name="progress"),
    path("queue/<slug:scope>/", queue_views.queue, name="queue"),
    path("queue/<slug:scope>/undo/", queue_views.queue_undo, name="queue_undo"),
    path("queue/<slug:scope>/item/<int:pk>/", queue_views.queue_item, name="queue_item"),
    path("queue/<slug:scope>/item/<int:pk>/label/", queue_views.queue_label, name="queue_label"),
    path("queue/<slug:scope>/item/<int:pk>/next/", queue_views.queue_step, {"direction": "next"}, name="queue_next"),
    path("queue/<slug:scope>/item/<int:pk>/prev/", queue_views.queue_step, {"direction": "prev"}, name="queue_prev"),
    path("queries/<int:pk>/preview/", queue_views.preview, name="preview"),
    path("queue/<slug:scope>/item/<int:pk>/invariants/", queue_views.query_invariants, name="query_invariants"),
    path("queries/<int:pk>/adjudicate/", views.adjudicate, name="adjudicate"),
    path("queries/<int:pk>/adjudication/", views.adjudication, name="adjudication"),
    path("goldsets/<slug:name>/", views.goldset_detail, name="goldset_detail"),
    path("goldsets/<slug:name>/publish/", views.goldset_publish, name="goldset_publish"),
    path("goldsets/<slug:name>/thresholds/", views.goldset_thresholds, name="goldset_thresholds"),
    path("goldsets/<slug:name>/agreement/", views.agreement, name="agreement"),
    path("goldsets/<slug:name>/agreement.<str:fmt>", export_views.agreement_export, name="agreement_export"),
    path(
        "goldsets/<slug:name>/disagreements.<str:fmt>", export_views.disagreements_export, name="disagreements_export"
    ),
    path("goldsets/<slug:name>/v<int:number>/", views.version_browse, name="version_browse"),
    path("goldsets/<slug:name>/v<int:number>/agreement/", views.version_agreement, name="version_agreement"),
    path(
        "goldsets/<slug:name>/v<int:number>/items.<str:fmt>",
        export_views.version_items_export,
        name="version_items_export",
    ),
    path("goldsets/<slug:name>/v<int:number>/audit/", audit_views.version_audit, name="version_audit"),
    path("goldsets/<slug:name>/v<int:number>/audit/<int:pk>/", audit_views.audit_progress, name="audit_progress"),
    path("goldsets/<slug:name>/mutations/", audit_views.mutations_seed, name="mutations_seed"),
    path("goldsets/<slug:name>/diff/", views.version_diff, name="version_diff"),
    path("versions/<int:pk>/export.<str:fmt>", export_views.version_export, name="version_export"),
    path("taxonomies/", taxonomy_views.taxonomy_list, name="taxonomies"),
    path("taxonomies/<slug:name>/", taxonomy_views.taxonomy_detail, name="taxonomy"),
    path("taxonomies/<slug:name>/classes/", taxonomy_views.taxonomy_class_add, name="taxonomy_class_add"),
    path(
        "taxonomies/<slug:name>/classes/<int:pk>/rename/",
        taxonomy_views.taxonomy_class_rename,
        name="taxonomy_class_rename",
    ),
    path(
        "taxonomies/<slug:name>/classes/<int:pk>/retire/",
        taxonomy_views.taxonomy_class_retire,
        name="taxonomy_class_retire",
    ),
    path("taxonomies/<slug:name>/aliases/", taxonomy_views.taxonomy_alias_add, name="taxonomy_alias_add"),
]
