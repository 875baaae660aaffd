from django.contrib import admin

from config.admin_readonly import ReadOnlyAdmin
from labelling.models import Adjudication, GoldSet, GoldSetVersion, GoldSetVersionItem, Label, LabelReveal, Query
from labelling.taxonomy_models import Taxonomy, TaxonomyClass, TaxonomyVersion


@admin.register(GoldSet)
class GoldSetAdmin(admin.ModelAdmin):
    # reveal_labels_after_labelling is set here, by admins: blind double labelling is the default.
    list_display = ["name", "overlap_share", "reveal_labels_after_labelling", "created_at"]


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["external_id", "source", "gold_set", "warehouse", "label_count", "created_at"]
    list_filter = ["source", "gold_set"]
    search_fields = ["external_id", "question", "sql"]


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ["query", "labeller", "decision", "error_class", "source", "is_current", "blind", "created_at"]
    list_filter = ["decision", "source", "is_current", "blind"]


@admin.register(LabelReveal)
class LabelRevealAdmin(ReadOnlyAdmin):
    list_display = ["query", "user", "shown_on", "revealed_at"]
    list_filter = ["shown_on"]


@admin.register(Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ["query", "adjudicator", "decision", "error_class", "reason", "created_at"]


@admin.register(GoldSetVersion)
class GoldSetVersionAdmin(ReadOnlyAdmin):
    list_display = ["gold_set", "number", "is_frozen", "unresolved_count", "published_at", "published_by"]


@admin.register(GoldSetVersionItem)
class GoldSetVersionItemAdmin(ReadOnlyAdmin):
    list_display = ["version", "query", "decision", "error_class"]
    list_filter = ["version"]


# Taxonomies are edited on their own page (/labelling/taxonomies/), whose services keep the
# versions, aliases and labels in step; the admin shows them, and never deletes a class.
@admin.register(Taxonomy)
class TaxonomyAdmin(ReadOnlyAdmin):
    list_display = ["name", "version", "created_at"]


@admin.register(TaxonomyClass)
class TaxonomyClassAdmin(ReadOnlyAdmin):
    list_display = ["taxonomy", "category", "name", "retired", "position"]
    list_filter = ["taxonomy", "retired"]


@admin.register(TaxonomyVersion)
class TaxonomyVersionAdmin(ReadOnlyAdmin):
    list_display = ["taxonomy", "number", "note", "created_at"]
