"""`validate` and `simulate` over Kueue's own v0.19.2 examples (`tests/fixtures/kueue-examples`), a
corpus nobody here wrote, and the documented outcomes of Kueue's tasks that use them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.kueue.catalog import FRAMEWORKS

FIXTURES = Path(__file__).parents[1] / "fixtures"
EXAMPLES = FIXTURES / "kueue-examples"
CONFIGURATIONS = FIXTURES / "configurations"


def run(command: str, *args):
    result = CliRunner().invoke(app, [command, *args])
    return result.exit_code, result.stdout, result.stderr


def decisions(*args) -> list[dict]:
    code, out, err = run("simulate", "--json", *map(str, args))
    assert code == 0, err
    return json.loads(out)["workloads"]


# Resource transformations, as Kueue's tasks document them ---------------------------------------

def test_shared_quota_admits_four_and_keeps_the_fifth_waiting_with_kueues_message():
    # site/content/en/docs/tasks/manage/share_quotas_across_flavors.md: five 3-CPU jobs against 14 cpu_credits.
    job = EXAMPLES / "admin" / "shared-quota-sample-job.yaml"
    found = decisions(CONFIGURATIONS / "shared-quota.yaml", EXAMPLES / "admin" / "shared-quota-setup.yaml",
                      *[job] * 5)
    assert [d["mode"] for d in found] == ["Fit"] * 4 + ["Preempt"]
    assert [d["podSets"][0]["flavors"]["cpu"] for d in found[:4]] == ["on-demand"] * 3 + ["spot"]
    assert "insufficient unused quota for cpu_credits in flavor credits, 1 more needed" in found[4]["message"]
    assert found[4]["preemptionTargets"] == []
    assert len({d["name"] for d in found}) == 5


def test_without_the_transformation_all_five_would_be_admitted():
    # The same input without the Configuration: what the tool did before it applied transformations.
    job = EXAMPLES / "admin" / "shared-quota-sample-job.yaml"
    found = decisions(EXAMPLES / "admin" / "shared-quota-setup.yaml", *[job] * 5)
    assert [d["mode"] for d in found] == ["Fit"] * 5


def test_the_hami_example_fits_with_its_transformations():
    # site/content/en/docs/tasks/run/using_hami.md: 2 vGPUs x 30 cores and x 1024 MiB charge 60 and 2048.
    hami = EXAMPLES / "serving-workloads" / "sample-hami.yaml"
    [fits] = decisions(CONFIGURATIONS / "hami.yaml", hami)
    assert fits["mode"] == "Fit" and set(fits["podSets"][0]["flavors"]) == {
        "nvidia.com/gpu", "nvidia.com/total-gpucores", "nvidia.com/total-gpumem"}
    [refused] = decisions(hami)
    assert refused["mode"] == "NoFit" and "resource nvidia.com/gpucores unavailable" in refused["message"]


def test_the_transformations_are_named_on_stderr():
    code, _, err = run("simulate", str(CONFIGURATIONS / "hami.yaml"), str(EXAMPLES / "serving-workloads" /
                                                                          "sample-hami.yaml"))
    assert code == 0
    assert ("workloads are charged as the resources section of the Kueue Configuration in "
            f"{CONFIGURATIONS / 'hami.yaml'} document 0 says: nvidia.com/gpucores times nvidia.com/gpu -> "
            "nvidia.com/total-gpucores x1 (Replace)") in err


def test_integrations_on_the_command_line_keep_the_configurations_resources():
    # --integrations replaces the integration list; what Kueue charges still comes from the Configuration.
    only = CONFIGURATIONS / "shared-quota.yaml"
    job = EXAMPLES / "admin" / "shared-quota-sample-job.yaml"
    found = decisions("--integrations", "batch/job", only, EXAMPLES / "admin" / "shared-quota-setup.yaml", *[job] * 5)
    assert [d["mode"] for d in found][-1] == "Preempt"


def test_exclude_resource_prefixes_drop_what_kueue_does_not_count(tmp_path):
    setup = (EXAMPLES / "getting-started" / "quick-start-setup.yaml").read_text()
    labels = {"kueue.x-k8s.io/queue-name": "user-queue"}
    metadata = {"name": "vpc", "namespace": "default", "labels": labels}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
               "name": "c", "image": "busybox",
               "resources": {"requests": {"cpu": "1", "networking.example.com/vpc1": "1"}}}]}}}}
    configuration = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                     "resources": {"excludeResourcePrefixes": ["networking.example.com/"]}}
    (tmp_path / "setup.yaml").write_text(setup)
    (tmp_path / "job.json").write_text(json.dumps(job))
    (tmp_path / "configuration.json").write_text(json.dumps(configuration))
    [excluded] = decisions(tmp_path / "configuration.json", tmp_path / "setup.yaml", tmp_path / "job.json")
    assert excluded["mode"] == "Fit" and excluded["podSets"][0]["flavors"] == {"cpu": "default-flavor"}
    [counted] = decisions(tmp_path / "setup.yaml", tmp_path / "job.json")
    assert counted["mode"] == "NoFit" and "resource networking.example.com/vpc1 unavailable" in counted["message"]


# generateName -----------------------------------------------------------------------------------

def test_five_generate_name_jobs_are_five_workloads_three_fit_the_quick_start_queue():
    job = EXAMPLES / "jobs" / "sample-job.yaml"
    found = decisions(EXAMPLES / "getting-started" / "quick-start-setup.yaml", *[job] * 5)
    assert len({d["source"]["name"] for d in found}) == 5 and len({d["name"] for d in found}) == 5
    assert all(d["source"]["name"].startswith("sample-job-") for d in found)
    assert [d["mode"] for d in found] == ["Fit"] * 3 + ["Preempt"] * 2
    assert all("insufficient unused quota for cpu in flavor default-flavor, 3 more needed" in d["message"]
               for d in found[3:])


def test_generated_names_are_deterministic_and_avoid_real_names(tmp_path):
    job = EXAMPLES / "jobs" / "sample-job.yaml"
    first = decisions(EXAMPLES / "getting-started" / "quick-start-setup.yaml", job, job)
    again = decisions(EXAMPLES / "getting-started" / "quick-start-setup.yaml", job, job)
    assert [d["source"]["name"] for d in first] == [d["source"]["name"] for d in again]
    # A real Job that already has the first stand-in's name: the copy is named otherwise, and the
    # real names alone are judged for duplicates.
    taken = first[0]["source"]["name"]
    real = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": taken, "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}}}
    (tmp_path / "real.json").write_text(json.dumps(real))
    found = decisions(EXAMPLES / "getting-started" / "quick-start-setup.yaml", tmp_path / "real.json", job)
    assert found[0]["source"]["name"] == taken and found[1]["source"]["name"] not in (taken, "")
    code, _, err = run("simulate", str(EXAMPLES / "getting-started" / "quick-start-setup.yaml"),
                       str(tmp_path / "real.json"), str(tmp_path / "real.json"))
    assert code == 1 and "Duplicate value" in err


# The whole folder -------------------------------------------------------------------------------

def not_modelled(document: dict) -> list[dict]:
    return [s for s in document["skipped"] if s.get("notModelled")]


ALL_INTEGRATIONS = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                    "integrations": {"frameworks": list(FRAMEWORKS)},
                    "featureGates": {"SparkApplicationIntegration": True}}


def test_validate_over_the_examples_leaves_nothing_not_modelled(tmp_path):
    # With the chart's default integrations, and with every integration enabled (the Spark one with
    # its alpha gate) by a Configuration in the input.
    (tmp_path / "all.json").write_text(json.dumps(ALL_INTEGRATIONS))
    for extra in ([], [str(tmp_path / "all.json")]):
        code, out, err = run("validate", "--json", str(EXAMPLES), *extra)
        document = json.loads(out)
        assert not_modelled(document) == [], err
        assert not [s for s in document["skipped"] if "does not model" in s["reason"]]
        # Kueue's own minimal-cq.yaml is a fragment: its onFlavors names a flavor the queue lacks. Its
        # XGBoostJob writes `cpu: 0.5` unquoted, a JSON number that int-or-string quantities in a CRD
        # schema refuse (the Workload's, and the Training Operator's own); it is judged once enabled.
        invalid = [str(EXAMPLES / "admin" / "minimal-cq.yaml")]
        if extra:
            invalid.append(str(EXAMPLES / "jobs" / "sample-xgboostjob.yaml"))
        assert code == 1
        assert [o["file"] for o in document["objects"] if not o["valid"]] == invalid
    jobs = [o for o in document["objects"] if o["kind"] in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob",
                                                            "LeaderWorkerSet", "RayService", "AppWrapper",
                                                            "SparkApplication")]
    assert len(jobs) == 12 and all(o["valid"] for o in jobs if o["kind"] != "XGBoostJob")


def test_simulate_over_the_examples_leaves_nothing_not_modelled(tmp_path):
    # The folder at once: the examples define the same queues over and over, which the API server
    # refuses (exit 1), but every job is still judged and none is left not modelled.
    (tmp_path / "all.json").write_text(json.dumps(ALL_INTEGRATIONS))
    code, out, _ = run("simulate", "--json", str(tmp_path / "all.json"), str(EXAMPLES))
    assert code == 1 and not_modelled(json.loads(out)) == []
    # Each example job on the quick start's queue (every integration enabled): each is decided, and fits.
    setup = str(EXAMPLES / "getting-started" / "quick-start-setup.yaml")
    decided = []
    for folder in ("jobs", "appwrapper", "serving-workloads", "pods-kueue"):
        for path in sorted((EXAMPLES / folder).glob("*.yaml")):
            if path.name in ("sample-hami.yaml", "sample-leaderworkerset-tas.yaml"):
                continue  # their own queues: the tests above and test_integrations
            code, out, err = run("simulate", "--json", str(tmp_path / "all.json"), setup, str(path))
            if path.name == "sample-xgboostjob.yaml":
                assert code == 1
                continue
            assert code == 0, (path, err)
            document = json.loads(out)
            assert not_modelled(document) == [], path
            decided += [w["mode"] for w in document["workloads"]]
    assert len(decided) == 25 and set(decided) == {"Fit"}


def test_a_kind_left_to_an_external_framework_is_marked_not_modelled(tmp_path):
    # integrations.externalFrameworks: that kind's own controller builds its Workload; offline it cannot be
    # derived, and --json marks it. Without the entry, the Workflow is not Kueue's, but asks for a queue.
    workflow = EXAMPLES / "pod-based-workloads" / "workflow-single-queue.yaml"
    configuration = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                     "integrations": {"frameworks": ["batch/job"],
                                      "externalFrameworks": ["Workflow.v1alpha1.argoproj.io"]}}
    (tmp_path / "external.json").write_text(json.dumps(configuration))
    for command in ("validate", "simulate"):
        _, out, _ = run(command, "--json", str(tmp_path / "external.json"), str(workflow))
        [marked] = not_modelled(json.loads(out))
        assert marked["kind"] == "Workflow" and "external framework" in marked["reason"]
        assert "cannot be derived offline" in marked["reason"]
    _, out, _ = run("validate", "--json", str(workflow))
    [skipped] = json.loads(out)["skipped"]
    assert "notModelled" not in skipped and "Kueue manages the pods its controller creates" in skipped["reason"]
