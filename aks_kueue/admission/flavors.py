"""Does a ResourceFlavor suit a podset? (`checkFlavorForPodSets`, v0.19.2)

Checks run in Kueue's order and the first failure rejects the flavor:
1. the flavor exists;
2. no NoSchedule/NoExecute taint of the flavor is left untolerated by the pod's
   tolerations plus the flavor's own;
3. the pod's nodeSelector and required node affinity, cut down to the keys this
   flavor declares in nodeLabels, match a node labelled with those nodeLabels.
Kueue never checks that a real node carries the labels; the capacity model does.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from aks_kueue.admission.workloads import PodSetInfo
from aks_kueue.k8s.scheduling import requirement_matches, untolerated_taint
from aks_kueue.kueue.views import ResourceFlavor


def taint_text(taint: Mapping[str, Any]) -> str:
    """How Go prints a corev1.Taint value with %s: `{key value effect <nil>}`."""
    added = taint.get("timeAdded") or "<nil>"
    return f"{{{taint.get('key', '')} {taint.get('value', '')} {taint.get('effect', '')} {added}}}"


def selector_matches(pod_spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """The pod's node constraints, limited to the flavor's label keys, against its labels."""
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if key in labels and labels[key] != value:
            return False
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e.get("key") in labels]
        if not kept:
            # Terms are ORed: one that says nothing about this flavor matches it.
            return True
        terms.append(kept)
    if not terms:
        return True
    return any(all(requirement_matches(e, labels) for e in term) for term in terms)


def flavor_mismatch(flavor_name: str, flavor: Optional[ResourceFlavor], pod_specs: list[Mapping[str, Any]]
                    ) -> Optional[str]:
    """Kueue's reason the flavor does not suit these pods, or None when it does."""
    if flavor is None:
        return f"flavor {flavor_name} not found"
    labels = flavor.node_labels
    for pod_spec in pod_specs:
        taint = untolerated_taint(list(flavor.node_taints), [*(pod_spec.get("tolerations") or []), *flavor.tolerations])
        if taint is not None:
            return f"untolerated taint {taint_text(taint)} in flavor {flavor_name}"
        if not selector_matches(pod_spec, labels):
            return f"flavor {flavor_name} doesn't match node affinity"
    return None


class FlavorMatches:
    """The flavor assigner's FlavorMatcher over the snapshot's ResourceFlavors. Pods with
    the same tolerations, selectors and affinity (`PodSetInfo.placement`) suit the same
    flavors, so each answer is remembered per flavor and placement."""

    def __init__(self, flavors: Mapping[str, ResourceFlavor]):
        self.flavors = flavors
        self._answers: dict[tuple[str, str], Optional[str]] = {}

    def mismatch(self, flavor: str, podsets: Sequence[PodSetInfo]) -> Optional[str]:
        """Why the flavor does not suit these podsets (the first one that fails), or None."""
        answers = self._answers
        for podset in podsets:
            key = (flavor, podset.placement)
            try:
                answer = answers[key]
            except KeyError:
                # SelectorError propagates unremembered: the assigner reports it as an error.
                answer = answers[key] = flavor_mismatch(flavor, self.flavors.get(flavor), [podset.spec])
            if answer is not None:
                return answer
        return None
