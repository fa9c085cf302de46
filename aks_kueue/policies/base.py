"""How the pack's policies are built: each is a thin wrapper over the judge.

Every stack policy reads the model from the resources it is handed (`model.from_resources`),
runs the judge on it, and reports the findings routed to it (`routing.py`) as violations:
CrossGuard carries a message and a URN, so the message is the finding's own line,
`<key>: <message>; <fix>`, and the URN is that of the resource the finding is about.

The model and the judge run once per set of resources: the servicer hands every stack
policy a fresh copy of the same resources, so both are remembered by content.
"""

from __future__ import annotations

import os
import pickle
import threading
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationPolicy
from pulumi_policy.proxy import UnknownValueError

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.compat import DictProxy as _DictProxy, ListProxy as _ListProxy, NotApplicableError as _NotApplicableError
from aks_kueue.judge import Judgement, judge
from aks_kueue.judge.finding import Finding
from aks_kueue.model.from_resources import Reading, from_resources
from aks_kueue.policies.routing import policy_for

# Marks a violation that reports a failure of the pack itself; the tests require there are none.
INTERNAL_FAILURE = "the policy pack could not judge these resources"

VM_OVERHEAD = {"vmOverheadPercent": {
    "type": "number", "minimum": 0, "maximum": 50, "default": float(DEFAULT_VM_OVERHEAD * 100),
    "description": "share of a VM's memory kubelet does not report, in percent (AKS node auto-provisioning "
                   "assumes 7.5)"}}


def settings(schema: Optional[PolicyConfigSchema], given: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The policy's config: the engine fills schema defaults before calling the pack; a unit test
    that builds StackValidationArgs itself does not, so they are merged here too."""
    defaults = {k: v["default"] for k, v in (schema.properties if schema else {}).items() if "default" in v}
    return {**defaults, **dict(given or {})}


def overhead(config: Mapping[str, Any]) -> Fraction:
    return Fraction(str(config.get("vmOverheadPercent", DEFAULT_VM_OVERHEAD * 100))) / 100


def judged_policy(name: str, description: str, level: EnforcementLevel = EnforcementLevel.MANDATORY,
                  properties: Optional[dict[str, Any]] = None,
                  keep: Optional[Callable[[Finding, Reading, dict], bool]] = None) -> StackValidationPolicy:
    """A stack policy reporting the findings the routing table gives it; `keep` lets its config
    relax single findings (a region listed in additionalRegions, an opted-in release train)."""
    schema = PolicyConfigSchema(properties=properties) if properties else None

    def validate(args, report_violation) -> None:
        config = settings(schema, args.get_config())
        try:
            reading, judgement = read_and_judge(list(args.resources), overhead(config))
            # No message shows a value of a secret config key (the values arrive decrypted).
            found = [(reading.hidden.text(str(f)), reading.urns.get(f.object)) for f in judgement.findings
                     if policy_for(f) == name and (keep is None or keep(f, reading, config))]
        except (UnknownValueError, _NotApplicableError):
            raise  # the runtime's to handle: "can't run policy during preview"
        except Exception as error:  # noqa: BLE001 - reported, with its type, as a violation
            if os.environ.get("AKS_KUEUE_DEBUG"):
                raise
            found = [(f"{INTERNAL_FAILURE} ({type(error).__name__}: {error}); please report it", None)]
        for message, urn in found:
            report_violation(message, urn)

    return StackValidationPolicy(name=name, description=description, validate=validate, enforcement_level=level,
                                 config_schema=schema)


_lock = threading.Lock()
_last: dict[str, Any] = {"key": None, "reading": None, "judgements": {}}
# While `same_resources` is open: whether it is, and the fingerprint of what the first policy was handed.
_analysis: dict[str, Any] = {"open": False, "key": None}


@contextmanager
def same_resources() -> Iterator[None]:
    """Around one AnalyzeStack call: the servicer decodes the one request it was sent for every stack
    policy, so their resources are fingerprinted once, for the first policy, not once each. The
    offline preview opens it around the call it makes (`preview/pack.run_pack`); a pack the Pulumi
    engine runs never does, and fingerprints every policy's resources."""
    with _lock:
        _analysis.update(open=True, key=None)
    try:
        yield
    finally:
        with _lock:
            _analysis.update(open=False, key=None)


def read_and_judge(resources: Sequence[Any], vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> tuple[Reading, Judgement]:
    """The model of these resources and the judge's verdict on it, computed once per content."""
    with _lock:
        key = _analysis["key"] if _analysis["open"] else None
    if key is None:
        key = fingerprint(resources)
    with _lock:
        if _analysis["open"]:
            _analysis["key"] = key
        if _last["key"] != key:
            try:
                reading: Any = from_resources(resources)
            except Exception as error:  # e.g. an unknown value: every policy must see it, not only the first
                reading = error
            _last.update(key=key, reading=reading, judgements={})
        reading = _last["reading"]
        if isinstance(reading, Exception):
            raise reading
        judgements = _last["judgements"]
        if vm_overhead not in judgements:
            judgements[vm_overhead] = judge(reading.model, vm_overhead)
        return reading, judgements[vm_overhead]


def fingerprint(resources: Iterable[Any]) -> bytes:
    """Content, not identity: the servicer builds new resource objects for every policy.

    Pickled, which walks the proxied values in C: equal bytes mean equal content (a
    different sharing of equal strings can only make equal content miss, never the
    reverse). Where something will not pickle, the content's text stands in."""
    rows = [(r.urn, r.resource_type, r.props, [getattr(d, "urn", d) for d in r.dependencies or []],
             list(getattr(getattr(r, "opts", None), "additional_secret_outputs", None) or [])) for r in resources]
    try:
        return b"p" + pickle.dumps(rows, pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - any value pickle refuses
        return b"r" + repr([(urn, kind, _raw(props), deps, secrets)
                            for urn, kind, props, deps, secrets in rows]).encode()


def _raw(value: Any) -> Any:
    """A proxied value's content, without reading through the proxy (unknowns stay sentinels)."""
    kind = type(value)
    if kind is _DictProxy or kind is _ListProxy:
        value = value["__target"]
        kind = type(value)
    if kind is dict:
        return {k: _raw(v) for k, v in value.items()}
    if kind is list:
        return [_raw(v) for v in value]
    return value


def baseline_policy(check: str) -> StackValidationPolicy:
    """One check of the AKS security baseline (`judge/security.py`)."""
    from aks_kueue.judge.security import CHECKS

    return judged_policy(check, CHECKS[check][0] + " Mandatory in production stacks; in development stacks "
                         "it is a warning of aks-kueue-warnings.")
