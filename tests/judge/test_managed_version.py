"""A managed-extension version the program does not know Microsoft publishes is warned about
(issue 17, "Slips"), with the versions it knows and the `az` command that lists the published ones."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from aks_kueue.aks.managed_extension import KNOWN_VERSIONS, LIST_VERSIONS_COMMAND
from aks_kueue.cli import app
from aks_kueue.judge import judge
from aks_kueue.model.from_resources import from_resources
from aks_kueue.preview.pack import policy_view
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.versions import MANAGED_KUEUE_EXAMPLE_VERSION
from tests.conftest import edited, flat, model_of, run_config


def version(value: str):
    def edit(c):
        c["aks-kueue:kueue"]["version"] = value
    return edit


def unknown_version_findings(config: dict) -> list:
    return [f for f in judge(model_of(config, "prod")).findings if f.kind == "managed-version-unknown"]


def test_a_reported_version_that_does_not_exist_is_warned_with_the_known_ones_and_the_command():
    (finding,) = unknown_version_findings(edited("prod", version("0.19.7-aks.9.9.9")))
    assert finding.severity.value == "warning" and finding.key == "aks-kueue:kueue.version"
    assert finding.message == (
        "microsoft.kueue version 0.19.7-aks.9.9.9 is not one this program knows Microsoft publishes (it knows "
        "0.19.6-aks.0.4.4)")
    assert finding.fix == (
        "check that 0.19.7-aks.9.9.9 is published for the cluster with `az k8s-extension extension-types "
        "list-versions-by-cluster --resource-group <rg> --cluster-name <cluster> --cluster-type managedClusters "
        "--extension-type microsoft.kueue --release-train preview`, or pin a version the program knows "
        "(0.19.6-aks.0.4.4)")
    assert finding.numbers == {"version": "0.19.7-aks.9.9.9", "known": ["0.19.6-aks.0.4.4"]}


def test_a_known_version_and_no_version_are_not_warned():
    assert MANAGED_KUEUE_EXAMPLE_VERSION in KNOWN_VERSIONS
    assert unknown_version_findings(edited("prod", version(MANAGED_KUEUE_EXAMPLE_VERSION))) == []

    def train(c):
        del c["aks-kueue:kueue"]["version"]
        c["aks-kueue:kueue"]["releaseTrain"] = "stable"
    assert unknown_version_findings(edited("prod", train)) == []


def test_the_pack_warns_the_same_from_the_extension_resource():
    config = edited("prod", version("0.19.7-aks.9.9.9"))
    judged = judge(from_resources(policy_view(run_config(config, stack="prod"))).model)
    assert [f for f in judged.findings if f.kind == "managed-version-unknown"] == unknown_version_findings(config)


def test_the_preview_shows_the_warning_and_still_passes(tmp_path):
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump({"config": edited("prod", version("0.19.7-aks.9.9.9"))}))
    result = CliRunner().invoke(app, ["preview", "--config", str(path), "--json"])
    doc = json.loads(result.stdout)
    (finding,) = [f for f in doc["findings"] if f["kind"] == "managed-version-unknown"]
    assert LIST_VERSIONS_COMMAND in finding["fix"]
    assert not any(v["enforcementLevel"] == "mandatory" and "0.19.7-aks.9.9.9" in v["message"]
                   for v in doc["violations"])
    assert any(v["policy"] == "aks-kueue-warnings" and "0.19.7-aks.9.9.9" in v["message"] for v in doc["violations"])


def test_a_malformed_version_is_refused_naming_the_same_command():
    try:
        parse_settings(flat(edited("prod", version("latest"))))
    except SettingsError as error:
        (problem,) = [str(p) for p in error.problems]
    assert problem.startswith("aks-kueue:kueue.version: 'latest' is not an extension version")
    assert f"`{LIST_VERSIONS_COMMAND}`" in problem


def test_a_version_of_a_kueue_that_was_never_released_or_without_a_build_is_refused():
    # Issue 28: `version: 9.9.9` was only a warning whose own text said Azure refuses it.
    for wrong, why in (("9.9.9", "has no extension build (-aks.<build>)"),
                       ("0.19.9-aks.9.9.9", "names Kueue 0.19.9, which Kueue never released (0.19.0 to 0.19.7 exist)")):
        try:
            parse_settings(flat(edited("prod", version(wrong))))
            problems = []
        except SettingsError as error:
            problems = [str(p) for p in error.problems]
        assert problems == [f"aks-kueue:kueue.version: {wrong} is not a version Microsoft publishes, and Azure refuses "
                            "the install: microsoft.kueue versions are a Kueue release and the extension's build, such "
                            f"as 0.19.6-aks.0.4.4, and this one {why}; pin one `{LIST_VERSIONS_COMMAND}` lists, or "
                            "omit version to follow releaseTrain"]


def test_a_release_train_azure_does_not_publish_on_is_refused_and_stable_is_warned():
    def train(name):
        def edit(c):
            del c["aks-kueue:kueue"]["version"]
            c["aks-kueue:kueue"]["releaseTrain"] = name
        return edit
    try:
        parse_settings(flat(edited("prod", train("nightly"))))
        problems = []
    except SettingsError as error:
        problems = [str(p) for p in error.problems]
    assert len(problems) == 1 and problems[0].startswith(
        "aks-kueue:kueue.releaseTrain: 'nightly' is not a release train microsoft.kueue is published on")
    warned = parse_settings(flat(edited("prod", train("stable")))).warnings
    assert any(w.startswith("aks-kueue:kueue.releaseTrain: Microsoft documents microsoft.kueue on the preview train "
                            "only") for w in warned)
    assert not any("releaseTrain" in w for w in parse_settings(flat(edited("prod", train("preview")))).warnings)
