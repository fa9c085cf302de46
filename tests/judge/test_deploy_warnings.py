"""What may work but likely will not, where Azure's documentation does not say it is refused: warnings whose words
say so (issue 28). And the fleet's two refusals: a worker kubeconfig client-go cannot build a client from, and a
manager listing itself as a worker, before and after its first deploy."""

from __future__ import annotations

from datetime import date

from aks_kueue.judge import blocking_findings, judge
from aks_kueue.judge import fleet
from aks_kueue.judge.rules import RULES
from aks_kueue.kueue import multikueue as mk
from aks_kueue.model.fleet_outputs import StackOutputs
from aks_kueue.model.fleet import FLEET_OUTPUT
from tests.conftest import edited, filled_doc, model_of
from tests.fleet_stacks import MANAGER, WORKERS, config, manager_outputs, model, qualified, worker_stack_outputs

DAY = date(2026, 9, 1)


def findings(config_: dict, kind: str) -> list:
    return [f for f in judge(model_of(config_), today=DAY).findings if f.kind == kind]


def test_a_gpu_pool_without_a_taint_is_flagged_with_the_taint_to_add():
    def untainted(c):
        c["aks-kueue:nodePools"][1]["taints"] = []
    (found,) = findings(edited("dev", untainted), "gpu-pool-untainted")
    assert found.severity.value == "warning" and found.key == "aks-kueue:nodePools[1].taints"
    assert found.fix.startswith('add taints: ["sku=gpu:NoSchedule"]')
    assert findings(edited("dev", lambda c: None), "gpu-pool-untainted") == []


def test_private_and_ipv6_authorized_ranges_are_warned_as_letting_no_one_in():
    def ranges(c):
        c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"] = ["10.1.0.0/16", "2603:1030::/32",
                                                                            "52.160.10.0/24"]
    found = findings(edited("dev", ranges), "authorized-range-not-public")
    assert [f.key.rsplit(".", 1)[1] for f in found] == ["apiServerAuthorizedIpRanges[0]",
                                                        "apiServerAuthorizedIpRanges[1]"]
    assert found[0].message == "10.1.0.0/16 is not a public range, and clients reach the public API server from public " \
        "addresses"
    assert found[1].message == "2603:1030::/32 is an IPv6 range, and the API server has an IPv4 address only"
    # Why it is a warning, not an error, is the rule's explanation.
    assert "the documentation does not say whether the API refuses them" in RULES["authorized-range-not-public"].explanation


def test_a_public_service_range_is_warned_as_outside_microsofts_support():
    def public(c):
        c["aks-kueue:cluster"]["network"] = {"serviceCidr": "52.0.0.0/16", "dnsServiceIp": "52.0.0.10"}
    (found,) = findings(edited("dev", public), "network-range-public")
    assert found.key == "aks-kueue:cluster.network.serviceCidr"
    assert found.message == "52.0.0.0/16 is public address space"
    assert "leaves it outside Microsoft's support" in RULES["network-range-public"].explanation


def test_a_past_not_allowed_span_is_warned_and_a_past_start_date_is_not():
    def dates(c):
        window = c["aks-kueue:cluster"]["maintenance"]["autoUpgrade"]
        window["startDate"] = "2020-01-01"
        window["notAllowedDates"] = [{"start": "2025-12-20", "end": "2026-01-02"},
                                     {"start": "2026-12-20", "end": "2027-01-02"}]
    (found,) = findings(edited("prod", dates), "maintenance-date-past")
    assert found.key == "aks-kueue:cluster.maintenance.autoUpgrade.notAllowedDates[0]"
    assert found.message == "the span 2025-12-20 to 2026-01-02 ended before 2026-09-01"
    assert "blocks no upgrade" in RULES["maintenance-date-past"].explanation


def test_a_kubeconfig_without_clusters_or_contexts_is_one_kueue_cannot_use():
    assert mk.kubeconfig_problems({"apiVersion": "v1", "kind": "Config", "users": []}) == [
        "it has no clusters and contexts, so no client can be built from it (client-go: \"invalid configuration: no "
        "configuration has been provided\")"]
    wrong = {"clusters": [{"name": "a", "cluster": {"server": "https://a.example.com"}}],
             "contexts": [{"name": "a", "context": {"cluster": "a", "user": "u"}}],
             "users": [{"name": "u", "user": {"token": "x"}}], "current-context": "b"}
    assert mk.kubeconfig_problems(wrong) == [
        "current-context b names no context of the file (client-go: \"context was not found for specified context\")"]


def test_the_manager_refuses_a_worker_kubeconfig_without_clusters():
    import yaml

    empty = yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "users": [], "clusters": [], "contexts": []})
    workers = {stack: worker_stack_outputs(stack, kubeconfig=empty if stack == WORKERS[0] else "[secret]")
               for stack in WORKERS}
    refused = [f for f in fleet.kubeconfigs(model(MANAGER, None, workers)) if f.kind == fleet.KUBECONFIG_REFUSED]
    assert len(refused) == 1 and "no clusters and contexts" in refused[0].message


def test_a_manager_listing_itself_is_refused_before_and_after_its_first_deploy():
    own = qualified(MANAGER)

    def itself(c):
        c["aks-kueue:fleet"]["workers"].append({"name": "loopback", "stack": own})
    cfg = config(MANAGER, itself)
    before = model(MANAGER, cfg, {s: worker_stack_outputs(s) for s in WORKERS})
    after = model(MANAGER, cfg, {**{s: worker_stack_outputs(s) for s in WORKERS},
                                 MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})})
    for m in (before, after):
        (found,) = [f for f in blocking_findings(m) if f.kind == fleet.WORKER_IS_MANAGER]
        assert found.key == "aks-kueue:fleet.workers[2]"
        assert found.message == f"worker loopback names {own}, this manager's own stack"
        assert found.fix.startswith("remove it from aks-kueue:fleet.workers; a worker is another stack")
        # It is the one thing said of that entry: no "no outputs yet", no "not a worker's outputs".
        others = [f for f in judge(m, today=DAY).findings
                  if "loopback" in f.message + f.object and f.kind != fleet.WORKER_IS_MANAGER]
        assert others == []
    assert filled_doc(MANAGER)  # the shipped manager lists only other stacks
