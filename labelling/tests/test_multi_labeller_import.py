"""One file, several labellers who disagree: import, resolve by majority, agreement as data."""

import io
import itertools
import json

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from labelling import goldset_io
from labelling.agreement_report import agreement_report
from labelling.goldset_io import goldset_import
from labelling.goldset_records import GoldImportError
from labelling.models import GoldSet, GoldSetVersion, Label, Query
from labelling.services import goldset_publish, label_create

pytestmark = pytest.mark.django_db

RATERS = ["expert_a", "expert_b", "expert_c"]
# Per item: the three experts' votes (None: that expert did not rate it). Written with the
# aliases a public dataset uses: 1/true/yes = correct, 0/false/no = wrong.
VOTES = {
    "it-01": ("1", "true", "yes"),
    "it-02": ("0", "false", "no"),
    "it-03": ("1", "1", "0"),  # majority correct
    "it-04": ("0", "0", "1"),  # majority wrong
    "it-05": ("yes", "no", "no"),  # majority wrong
    "it-06": ("1", "1", "1"),
    "it-07": ("0", "1", "1"),  # majority correct
    "it-08": ("0", "0", "0"),
    "it-09": ("1", "0", None),  # two raters, a tie: left out
    "it-10": ("true", "false", "yes"),  # majority correct
    "it-11": ("1", "0", "unsure"),  # no strict majority: left out
    "it-12": ("no", "no", "yes"),  # majority wrong
}
CORRECT_WORDS = {"1", "true", "yes"}


def decision_of(vote):
    if vote == "unsure":
        return "unsure"
    return "correct" if vote in CORRECT_WORDS else "wrong"


def records():
    lines = []
    for item, votes in VOTES.items():
        for rater, vote in zip(RATERS, votes, strict=True):
            if vote is None:
                continue
            lines.append(
                {
                    "id": item,
                    "question": f"Question {item}?",
                    "sql": f"SELECT {item[-2:]} FROM orders",
                    "label": vote if vote != "unsure" else "wrong",
                    "labeller": rater,
                }
            )
    # "unsure" is not an import label: it-11's third vote is a manual label added below.
    return [r for r in lines if not (r["id"] == "it-11" and r["labeller"] == "expert_c")]


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def expected_majority():
    """Resolve VOTES directly: a strict majority of the item's votes, else left out."""
    kept, left_out = {}, []
    for item, votes in VOTES.items():
        decisions = [decision_of(v) for v in votes if v is not None]
        top = max(set(decisions), key=decisions.count)
        if decisions.count(top) * 2 > len(decisions) and top != "unsure":
            kept[item] = top
        else:
            left_out.append(item)
    return kept, left_out


def direct_fleiss(table):
    """Fleiss' kappa straight from its definition (items x categories counts, n raters each)."""
    table = np.asarray(table, dtype=float)
    items, raters = table.shape[0], table[0].sum()
    p_j = table.sum(axis=0) / (items * raters)
    p_i = ((table * (table - 1)).sum(axis=1)) / (raters * (raters - 1))
    p_bar, p_e = p_i.mean(), (p_j**2).sum()
    return (p_bar - p_e) / (1 - p_e)


@pytest.fixture
def imported(db, tmp_path, monkeypatch):
    # Batches of 5 lines: an item's three labels straddle batch boundaries.
    monkeypatch.setattr(goldset_io, "BATCH_SIZE", 5)
    path = write_jsonl(tmp_path / "experts.jsonl", records())
    call_command(
        "import_gold",
        str(path),
        "--gold-set",
        "experts",
        "--create-labellers",
        "--resolve",
        "manual",
        stdout=io.StringIO(),
    )
    gold_set = GoldSet.objects.get(name="experts")
    query = Query.objects.get(gold_set=gold_set, external_id="it-11")

    label_create(query=query, labeller=get_user_model().objects.get(username="expert_c"), decision="unsure")
    return gold_set


def test_one_file_with_three_disagreeing_labellers_publishes_by_majority_with_the_left_out_listed(imported):
    out = io.StringIO()
    call_command("publish_gold", "--gold-set", "experts", "--resolve", "majority", stdout=out)
    version = GoldSetVersion.objects.filter(gold_set=imported).order_by("-number").first()
    kept, left_out = expected_majority()
    assert version.resolution == "majority"
    assert version.items.count() == len(kept) == 10
    assert {i.query.external_id: i.decision for i in version.items.select_related("query")} == kept
    assert sorted(entry["id"] for entry in version.left_out) == sorted(left_out) == ["it-09", "it-11"]
    assert {entry["reason"] for entry in version.left_out} == {"unresolved tie"}
    unanimous = sum(1 for item in kept if len({decision_of(v) for v in VOTES[item] if v}) == 1)
    assert version.resolution_counts["agreement"] == unanimous
    assert version.resolution_counts["majority"] == len(kept) - unanimous
    assert version.resolution_counts["left_out"] == 2
    assert "2 left out: 2 unresolved tie" in out.getvalue() and "left out: it-09" in out.getvalue()


def test_the_majority_import_in_one_step_matches_publishing_afterwards(db, tmp_path):
    path = write_jsonl(tmp_path / "experts.jsonl", records())
    out = io.StringIO()
    call_command(
        "import_gold", str(path), "--gold-set", "one-step", "--create-labellers", "--resolve", "majority", stdout=out
    )
    version = GoldSetVersion.objects.get(gold_set__name="one-step")
    # it-11 has only two (disagreeing) import votes here: a tie, like it-09.
    assert version.items.count() == 10 and version.resolution == "majority"
    assert sorted(e["id"] for e in version.left_out) == ["it-09", "it-11"]
    assert "10 items published under majority" in out.getvalue()
    assert "12 new items" in out.getvalue() and "labellers created: expert_a, expert_b, expert_c" in out.getvalue()


def test_agreement_figures_match_scikit_learn_and_a_direct_fleiss_computation(imported):
    version = goldset_publish(gold_set=imported, resolve="majority")
    report = agreement_report(gold_set=imported, version=version)
    by_pair = {(p["a"], p["b"]): p for p in report["pairs"]}
    assert set(by_pair) == set(itertools.combinations(RATERS, 2))
    for a, b in itertools.combinations(range(3), 2):
        both = [(decision_of(v[a]), decision_of(v[b])) for v in VOTES.values() if v[a] is not None and v[b] is not None]
        expected = cohen_kappa_score([x for x, _ in both], [y for _, y in both])
        pair = by_pair[(RATERS[a], RATERS[b])]
        assert pair["n"] == len(both)
        assert pair["cohen_kappa"] == pytest.approx(expected, abs=1e-6)
        assert pair["low_support"] is True  # 11 or 12 shared items < 20
    three = [[decision_of(v) for v in votes] for votes in VOTES.values() if None not in votes]
    categories = sorted({d for r in three for d in r})
    table = [[r.count(c) for c in categories] for r in three]
    assert report["fleiss_items"] == len(three) and report["fleiss_raters"] == 3
    assert report["fleiss_kappa"] == pytest.approx(direct_fleiss(table), abs=1e-6)
    # The labeller x labeller confusion adds up to the pair's shared items.
    for confusion in report["confusion"]:
        assert sum(map(sum, confusion["matrix"])) == by_pair[(confusion["a"], confusion["b"])]["n"]
    # Every wrong vote is unclassified: no per-class figure, and the report says how many it left out.
    wrong_votes = sum(decision_of(v) == "wrong" for votes in VOTES.values() for v in votes if v)
    assert report["by_error_class"] == {} and report["unclassified_left_out"] == wrong_votes


def test_agreement_report_command_json_matches_the_page(imported, client, role_users):
    out = io.StringIO()
    call_command("agreement_report", "--gold-set", "experts", "--format", "json", stdout=out)
    from_command = json.loads(out.getvalue())
    client.force_login(role_users["ml_engineer"])
    from_page = json.loads(b"".join(client.get("/labelling/goldsets/experts/agreement.json").streaming_content))
    assert from_command == from_page
    page = client.get("/labelling/goldsets/experts/agreement/").content.decode()
    first = from_command["pairs"][0]
    assert f"{first['cohen_kappa']:.3f}" in page
    assert "(fewer than 20)" in page  # the low-support caveat beside thin figures
    table = io.StringIO()
    call_command("agreement_report", "--gold-set", "experts", "--format", "table", stdout=table)
    assert f"{first['cohen_kappa']:.3f}" in table.getvalue()
    rows = io.StringIO()
    call_command("agreement_report", "--gold-set", "experts", "--format", "csv", stdout=rows)
    assert rows.getvalue().startswith('"figure","a","b","error_class","n","value"')


def test_unknown_labellers_are_all_named_at_once_without_the_flag(db, tmp_path):
    path = write_jsonl(tmp_path / "experts.jsonl", records())
    with pytest.raises(GoldImportError) as error:
        goldset_import(path_or_file=path, gold_set_name="strangers")
    message = str(error.value)
    assert all(f"'{name}'" in message for name in RATERS) and "--create-labellers" in message
    assert not Query.objects.exists() and not get_user_model().objects.filter(username__in=RATERS).exists()


def test_created_labellers_hold_the_labeller_role_and_no_usable_password(db, tmp_path):
    goldset_import(path_or_file=write_jsonl(tmp_path / "e.jsonl", records()), gold_set_name="e", create_labellers=True)
    for name in RATERS:
        user = get_user_model().objects.get(username=name)
        assert not user.has_usable_password()
        assert list(user.groups.values_list("name", flat=True)) == ["labeller"]


def test_the_same_labeller_labelling_an_item_twice_differently_is_refused(db, tmp_path):
    rows = records()[:3] + [dict(records()[0], label="0")]
    with pytest.raises(GoldImportError, match=r"^line 4: id 'it-01' labelled twice by labeller 'expert_a'"):
        goldset_import(path_or_file=write_jsonl(tmp_path / "e.jsonl", rows), gold_set_name="e", create_labellers=True)


def test_positive_means_wrong_reads_one_as_an_error_and_a_wrong_without_class_is_unclassified(db, tmp_path):
    rows = [
        {"id": "x1", "question": "q", "sql": "SELECT 1", "label": 1},
        {"id": "x2", "question": "q", "sql": "SELECT 2", "label": False},
    ]
    version = goldset_import(
        path_or_file=write_jsonl(tmp_path / "p.jsonl", rows), gold_set_name="p", positive_means="wrong"
    )
    items = {i.query.external_id: (i.decision, i.error_class) for i in version.items.select_related("query")}
    assert items == {"x1": ("wrong", "unclassified"), "x2": ("correct", "")}


def test_an_empty_file_is_an_error_even_for_an_existing_gold_set(db, tmp_path):
    goldset_import(
        path_or_file=write_jsonl(tmp_path / "one.jsonl", records()[:1]), gold_set_name="e", create_labellers=True
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(GoldImportError, match="the file has no records"):
        goldset_import(path_or_file=empty, gold_set_name="e")
    assert GoldSetVersion.objects.filter(gold_set__name="e").count() == 1


def test_json_nested_5000_deep_and_a_lone_surrogate_are_clear_errors(db, tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"id": "a", "question": ' + "[" * 5000 + "]" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(GoldImportError, match=r"^line 1: invalid JSON \(nested too deeply\)"):
        goldset_import(path_or_file=deep, gold_set_name="deep")
    surrogate = tmp_path / "surrogate.jsonl"
    surrogate.write_text('{"id": "a", "question": "q", "sql": "SELECT \'\\ud800\'", "label": "correct"}\n')
    with pytest.raises(GoldImportError, match=r"^line 1: field 'sql' contains a lone surrogate \(\\ud800"):
        goldset_import(path_or_file=surrogate, gold_set_name="surrogate")
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_gold", str(surrogate), "--gold-set", "surrogate")
    assert not Query.objects.exists() and not Label.objects.exists()


def test_the_command_reports_exact_counts_when_a_file_changes_nothing(db, tmp_path):
    path = write_jsonl(tmp_path / "e.jsonl", records())
    goldset_import(path_or_file=path, gold_set_name="again", create_labellers=True)
    out = io.StringIO()
    call_command("import_gold", str(path), "--gold-set", "again", stdout=out)
    text = out.getvalue()
    assert "0 new items, 12 already in the gold set, 0 labels created, 0 updated" in text
    assert f"{len(records())} skipped ({len(records())} unchanged" in text


def test_per_class_figures_carry_their_support_and_leave_unclassified_out(db, tmp_path):
    votes = {  # two labellers: (a, b) as decision:class
        "c1": ("wrong:join_fanout", "wrong:join_fanout"),
        "c2": ("wrong:join_fanout", "wrong:other"),
        "c3": ("correct", "wrong:join_fanout"),
        "c4": ("wrong", "wrong"),  # unclassified twice
        "c5": ("correct", "correct"),
    }
    rows = []
    for item, pair in votes.items():
        for rater, vote in zip(("ann", "ben"), pair, strict=True):
            decision, _, klass = vote.partition(":")
            rows.append({"id": item, "question": "q", "sql": f"SELECT '{item}'", "label": decision,
                         "error_class": klass or None, "labeller": rater})  # fmt: skip
    version = goldset_import(path_or_file=write_jsonl(tmp_path / "c.jsonl", rows), gold_set_name="classes",
                             create_labellers=True)  # fmt: skip
    report = agreement_report(gold_set=version.gold_set)
    assert set(report["by_error_class"]) == {"join_fanout", "other"}
    fanout = report["by_error_class"]["join_fanout"]
    assert fanout["support"] == 4
    a = [v[0] == "wrong:join_fanout" for v in votes.values()]
    b = [v[1] == "wrong:join_fanout" for v in votes.values()]
    assert fanout["pairs"][0]["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-6)
    assert report["unclassified_left_out"] == 2
    decisions_a = [v[0].split(":")[0] for v in votes.values()]
    decisions_b = [v[1].split(":")[0] for v in votes.values()]
    assert report["pairs"][0]["cohen_kappa"] == pytest.approx(cohen_kappa_score(decisions_a, decisions_b), abs=1e-6)
