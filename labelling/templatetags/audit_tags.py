"""The audit section of a version's page and the mutation action of a gold set's page."""

from django import template

from config.progress import TaskStatus
from config.roles import MANAGE_GOLDSETS
from labelling.audit import audit_summary
from labelling.models import GoldSetAudit, Query, QueryOrigin
from labelling.mutation_operators import OPERATORS

register = template.Library()


def _manages_goldsets(context) -> bool:
    user = context.get("user")
    return user is not None and user.has_perm(MANAGE_GOLDSETS)


@register.inclusion_tag("labelling/_audit_section.html", takes_context=True)
def audit_section(context, version):
    """Render the version's latest audit (findings by class), one still running with its progress and, for
    engineers, the button to run one."""
    audit = GoldSetAudit.objects.filter(version=version, status=TaskStatus.DONE).first()
    latest = GoldSetAudit.objects.filter(version=version).exclude(status=TaskStatus.DONE).first()
    return {
        "version": version,
        "audit": audit,
        # An audit queued, running or failed after the latest finished one: its progress or its failure.
        "pending": latest if latest and (audit is None or latest.created_at >= audit.created_at) else None,
        "summary": audit_summary(findings=audit.findings) if audit else "",
        "can_run": _manages_goldsets(context),
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("labelling/_mutations_section.html", takes_context=True)
def mutations_section(context, gold_set):
    """Render how many mutated items wait as proposals and, for engineers, the form that seeds more."""
    mutated = Query.objects.filter(gold_set=gold_set, origin=QueryOrigin.MUTATED)
    return {
        "gold_set": gold_set,
        "proposed": mutated.filter(label_count=0).count(),
        "labelled": mutated.filter(label_count__gt=0).count(),
        "classes": sorted({error_class for _, error_class in OPERATORS.values()}),
        "can_run": _manages_goldsets(context),
        "csrf_token": context.get("csrf_token"),
    }
