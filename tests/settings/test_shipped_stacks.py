"""The shipped production stack is honest: rejected until its placeholders are filled in, saying what to fill in;
its filled-in variant (the README's tour) is the same stack with those values put in, and passes (issue 28)."""

from __future__ import annotations

from datetime import date

import yaml

from aks_kueue.judge import judge
from tests.conftest import FILLED_PROD, ROOT, filled, filled_doc, model_of, stack_doc

DAY = date(2026, 9, 1)
PLACEHOLDER_KEYS = ["aks-kueue:cluster.security.apiServerAuthorizedIpRanges[0]",
                    "aks-kueue:cluster.security.entraAdminGroupObjectIds[0]",
                    "aks-kueue:queues.localQueues[0].submitterGroups[0]",
                    "aks-kueue:queues.localQueues[1].submitterGroups[0]"]


def errors(config: dict) -> list:
    return [f for f in judge(model_of(config, "prod"), today=DAY).findings if f.severity.value == "error"]


def test_the_shipped_prod_is_rejected_for_its_placeholders_alone_each_with_its_key():
    found = errors(stack_doc("prod"))
    assert {f.kind for f in found} == {"placeholder-value"}
    assert [f.key for f in found] == PLACEHOLDER_KEYS
    assert all(f.fix.startswith("put ") for f in found)
    header = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text().split("config:", 1)[0]
    assert "FILL IN BEFORE USE" in header
    for key in ("entraAdminGroupObjectIds", "apiServerAuthorizedIpRanges", "submitterGroups"):
        assert key in header


def test_in_development_the_same_placeholders_are_warnings():
    config = stack_doc("prod")
    config["aks-kueue:environment"] = "development"
    warned = [f for f in judge(model_of(config, "prod"), today=DAY).findings if f.kind == "placeholder-value"]
    assert [f.key for f in warned] == PLACEHOLDER_KEYS and {f.severity.value for f in warned} == {"warning"}


def test_the_filled_in_variant_is_prod_with_the_placeholders_filled_and_it_passes():
    assert yaml.safe_load(FILLED_PROD.read_text())["config"] == filled_doc("prod")
    assert errors(filled_doc("prod")) == []
    # Only the placeholder values differ from the shipped stack.
    shipped, variant = stack_doc("prod"), filled_doc("prod")
    assert {k for k in shipped if shipped[k] != variant[k]} == {"aks-kueue:cluster", "aks-kueue:queues"}


def test_an_ipv6_documentation_range_and_a_fleets_egress_are_placeholders_too():
    def edit(c):
        c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"] = ["2001:db8:1::/48"]
    config = filled(stack_doc("prod"))
    edit(config)
    (found,) = errors(config)
    assert found.key == "aks-kueue:cluster.security.apiServerAuthorizedIpRanges[0]"
    assert found.message.startswith("2001:db8:1::/48 is a documentation range (RFC 3849)")
    manager = stack_doc("fleet-manager")
    keys = [f.key for f in judge(model_of(manager, "fleet-manager"), today=DAY).findings
            if f.kind == "placeholder-value"]
    assert "aks-kueue:fleet.egressIpRanges[0]" in keys
