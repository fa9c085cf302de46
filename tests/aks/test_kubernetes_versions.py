"""The AKS release calendar: its data, the stage of a version on a day, and the verdicts."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from aks_kueue.aks import kubernetes_versions as kv
from aks_kueue.aks.kubernetes_versions import Stage


def test_the_calendar_is_dated_and_sourced():
    cal = kv.load()
    assert cal.as_of == date(2026, 8, 21) and cal.grace_days == 120
    assert cal.source.startswith("https://learn.microsoft.com/azure/aks/supported-kubernetes-versions")
    assert [r.minor for r in cal.releases] == list(range(29, 38))


def test_every_release_runs_preview_ga_end_of_life_lts_in_order():
    for release in kv.load().releases:
        assert release.preview.day <= release.ga.day < release.end_of_life.day < release.lts_end_of_life.day


def test_months_end_on_their_last_day_unless_the_page_gives_a_day():
    cal = kv.load()
    assert cal.release(35).end_of_life.day == date(2027, 3, 31)       # "Mar 2027"
    assert cal.release(34).end_of_life.day == date(2026, 11, 30)      # "Nov 2026"
    assert cal.release(30).end_of_life.day == date(2025, 8, 22)       # "Aug 22, 2025"
    assert cal.release(37).preview.day == date(2026, 9, 1)            # a preview counts from the 1st


@pytest.mark.parametrize("on,stage", [
    (date(2026, 8, 31), Stage.PLANNED),
    (date(2026, 9, 1), Stage.PREVIEW),
    (date(2026, 10, 1), Stage.SUPPORTED),
    (date(2027, 10, 31), Stage.SUPPORTED),
    (date(2027, 11, 1), Stage.LTS_ONLY),
    (date(2028, 10, 31), Stage.LTS_ONLY),
    (date(2028, 11, 1), Stage.RETIRED),
])
def test_the_stages_of_1_37(on, stage):
    assert kv.load().release(37).stage(on) is stage
    assert kv.judge_version("1.37", on).stage is stage


def test_supported_versions_follow_the_calendar():
    cal = kv.load()
    assert cal.supported(date(2026, 9, 1)) == ["1.34", "1.35", "1.36"]
    assert cal.supported(date(2026, 12, 1)) == ["1.35", "1.36", "1.37"]


def test_errors_and_warnings_by_stage():
    assert kv.judge_version("1.35", date(2026, 9, 1)) == kv.VersionVerdict(Stage.SUPPORTED)
    planned = kv.judge_version("1.37", date(2026, 8, 25))
    assert planned.error.startswith("Kubernetes 1.37 is not offered by AKS yet") and not planned.warnings
    retired = kv.judge_version("1.31.2", date(2026, 12, 1))
    assert retired.error.startswith("Kubernetes 1.31.2 reached the end of AKS support (Nov 2026)")
    lts = kv.judge_version("1.33", date(2026, 9, 1))
    assert lts.error is None and "(until 1.37 GA)" in lts.warnings[0].message


def test_the_proposed_versions_respect_the_callers_minimum():
    message = kv.judge_version("1.99", date(2026, 1, 15), at_least=34).error
    assert message.endswith("use one AKS supports on 2026-01-15: 1.34")
    assert kv.judge_version("1.99", date(2026, 1, 15)).error.endswith("1.32, 1.33 or 1.34")


def test_a_stale_calendar_says_so_once_the_grace_period_is_over():
    cal = kv.load()
    last_fresh = cal.as_of + timedelta(days=cal.grace_days)
    assert not cal.stale(last_fresh) and cal.stale(last_fresh + timedelta(days=1))
    assert kv.judge_version("1.36", last_fresh).warnings == ()
    assert "refresh it" in kv.judge_version("1.36", last_fresh + timedelta(days=1)).warnings[-1].fix
    # Past the grace period a version newer than the calendar is a warning, not an error.
    newer = kv.judge_version("1.38", last_fresh + timedelta(days=1))
    assert newer.error is None and newer.stage is Stage.UNKNOWN
    assert kv.judge_version("1.38", last_fresh).error is not None


def test_the_module_clock_is_used_by_default(monkeypatch):
    monkeypatch.setattr(kv, "today", lambda: date(2026, 8, 25))
    assert kv.judge_version("1.37").stage is Stage.PLANNED


def test_text_that_is_not_a_version_is_a_caller_error():
    with pytest.raises(ValueError):
        kv.judge_version("latest", date(2026, 9, 1))
