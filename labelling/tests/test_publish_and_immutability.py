import pytest
from django.core.management import call_command, get_commands
from django.db import IntegrityError, connection, models, transaction

from labelling.models import GoldSetVersion, GoldSetVersionItem, ImmutableVersionError
from labelling.services import adjudication_create, goldset_publish, label_create
from labelling.tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(role_users):
    gold_set = factories.gold_set()
    q1, q2, q3 = (factories.query(gold_set=gold_set) for _ in range(3))
    label_create(query=q1, labeller=role_users["labeller"], decision="correct")
    label_create(query=q2, labeller=role_users["labeller"], decision="wrong", error_class="join_fanout")
    label_create(query=q3, labeller=role_users["labeller"], decision="correct")
    label_create(query=q3, labeller=role_users["analyst"], decision="wrong", error_class="missing_filter")
    return goldset_publish(gold_set=gold_set, user=role_users["ml_engineer"]), (q1, q2, q3)


def test_publish_freezes_agreed_and_single_labels_and_leaves_out_disagreements(published):
    version, (q1, q2, q3) = published
    items = {i.query_id: (i.decision, i.error_class) for i in version.items.all()}
    assert items == {q1.id: ("correct", ""), q2.id: ("wrong", "join_fanout")}
    assert version.is_frozen and version.number == 1 and version.unresolved_count == 1


def test_an_adjudication_settles_a_disagreement_in_the_next_version(published, role_users):
    version, (_, _, q3) = published
    adjudication_create(
        query=q3, adjudicator=role_users["admin"], decision="wrong", error_class="missing_filter", reason="cancelled"
    )
    nxt = goldset_publish(gold_set=version.gold_set, user=role_users["admin"])
    assert nxt.number == 2 and nxt.unresolved_count == 0
    assert nxt.items.get(query=q3).error_class == "missing_filter"
    assert version.items.count() == 2  # the first version did not move


def test_unsure_alone_is_not_a_final_label(role_users):
    gold_set = factories.gold_set()
    query = factories.query(gold_set=gold_set)
    label_create(query=query, labeller=role_users["labeller"], decision="unsure")
    version = goldset_publish(gold_set=gold_set)
    assert version.items.count() == 0 and version.unresolved_count == 1


def test_model_guards_refuse_changing_a_published_version(published):
    version, _ = published
    item = version.items.first()
    item.decision = "wrong"
    with pytest.raises(ImmutableVersionError):
        item.save()
    with pytest.raises(ImmutableVersionError):
        item.delete()
    version.note = "edited"
    with pytest.raises(ImmutableVersionError):
        version.save()
    with pytest.raises(ImmutableVersionError):
        version.delete()
    with pytest.raises(ImmutableVersionError):
        GoldSetVersionItem.objects.filter(version=version).update(decision="wrong")
    with pytest.raises(ImmutableVersionError):
        GoldSetVersion.objects.filter(pk=version.pk).delete()
    with pytest.raises(ImmutableVersionError):
        GoldSetVersionItem.objects.create(version=version, query=item.query, decision="correct")


def _plain(model):
    """A manager-free QuerySet: bypasses the model guards, so only the database can refuse."""
    return models.QuerySet(model=model)


@pytest.mark.parametrize(
    "change",
    [
        lambda v: _plain(GoldSetVersionItem).filter(version=v).update(decision="wrong", error_class="syntax"),
        lambda v: _plain(GoldSetVersionItem).filter(version=v)._raw_delete(connection.alias),
        lambda v: _plain(GoldSetVersion).filter(pk=v.pk).update(note="edited"),
        lambda v: _plain(GoldSetVersion).filter(pk=v.pk).update(is_frozen=False),
        lambda v: _plain(GoldSetVersion).filter(pk=v.pk)._raw_delete(connection.alias),
        lambda v: v.gold_set.delete(),
    ],
    ids=["item-update", "item-delete", "version-update", "version-unfreeze", "version-delete", "goldset-cascade"],
)
def test_the_database_refuses_every_orm_path_around_the_guards(published, change):
    version, _ = published
    with pytest.raises((IntegrityError, ImmutableVersionError)), transaction.atomic():
        change(version)
    assert GoldSetVersionItem.objects.filter(version=version).count() == 2


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE labelling_goldsetversionitem SET decision = 'wrong', error_class = 'syntax' WHERE version_id = %s",
        "DELETE FROM labelling_goldsetversionitem WHERE version_id = %s",
        "UPDATE labelling_goldsetversion SET number = 99 WHERE id = %s",
        "DELETE FROM labelling_goldsetversion WHERE id = %s",
    ],
)
def test_the_database_refuses_raw_sql_changes(published, sql):
    version, _ = published
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [version.pk])
    assert GoldSetVersionItem.objects.filter(version=version, decision="correct").count() == 1


def test_the_database_refuses_raw_inserts_into_a_published_version(published):
    version, (q1, _, q3) = published
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO labelling_goldsetversionitem (version_id, query_id, decision, error_class) "
            "VALUES (%s, %s, 'correct', '')",
            [version.pk, q3.pk],
        )
    assert version.items.count() == 2


def test_reset_demo_empties_the_database_published_versions_included(transactional_db, role_users):
    gold_set = factories.gold_set()
    label_create(query=factories.query(gold_set=gold_set), labeller=role_users["labeller"], decision="correct")
    goldset_publish(gold_set=gold_set)
    call_command("reset_demo", "--no-seed", "--noinput", verbosity=0)
    assert not GoldSetVersionItem.objects.exists()
    assert not GoldSetVersion.objects.exists()


def test_manage_py_flush_is_djangos_own_command():
    assert get_commands()["flush"] == "django.core"
