"""The pack's policies, generated from the rule registry (`aks_kueue/judge/rules.py`).

Each policy of the registry becomes one stack policy: it reads the model from the resources it is
handed (`model.from_resources`), runs the judge on it, and reports the findings whose rule reports
under it (`rules.policy_for`), less those its config waives, as violations. CrossGuard carries a
message and a URN, so the message is the finding's own line, `<key>: <message>; <fix>`, then where its
rule is documented (`Finding.violation`), and the URN is that of the resource the finding is about.

No policy of today's registry is a resource policy: every one has a rule that needs more than one
resource (the stack's environment is in the model ConfigMap, the install is judged with the cluster,
a pool with its flavors), and CrossGuard hands a resource policy one resource.

The one memo: the servicer hands every stack policy its own copy of the same resources, so the
reading and the judgement of the last resources are remembered, by identity of what the policy is
handed (the offline preview decodes each value once, `preview/pack.decoded_once`) or else by content,
fingerprinted only when other resources come (the Pulumi engine's servicer decodes afresh for each
policy).
"""

from __future__ import annotations

import os
import pickle
import threading
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema, StackValidationPolicy
from pulumi_policy.proxy import UnknownValueError

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.compat import DictProxy as _DictProxy, ListProxy as _ListProxy, NotApplicableError as _NotApplicableError
from aks_kueue.judge import Judgement, judge, rules
from aks_kueue.judge.finding import Finding
from aks_kueue.model.from_resources import Reading, from_resources

# Marks a violation that reports a failure of the pack itself; the tests require there are none.
INTERNAL_FAILURE = "the policy pack could not judge these resources"
_LEVELS = {rules.MANDATORY: EnforcementLevel.MANDATORY, rules.ADVISORY: EnforcementLevel.ADVISORY}


def build() -> list[Policy]:
    """One stack policy per policy of the registry, in its order."""
    return [_stack_policy(each) for each in rules.policies()]


def settings(schema: Optional[PolicyConfigSchema], given: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The policy's config: the engine fills schema defaults before calling the pack; a unit test
    that builds StackValidationArgs itself does not, so they are merged here too."""
    defaults = {k: v["default"] for k, v in (schema.properties if schema else {}).items() if "default" in v}
    return {**defaults, **dict(given or {})}


def overhead(config: Mapping[str, Any]) -> Fraction:
    return Fraction(str(config.get("vmOverheadPercent", DEFAULT_VM_OVERHEAD * 100))) / 100


def _stack_policy(policy: rules.Policy) -> StackValidationPolicy:
    properties = rules.policy_config(policy.name)
    schema = PolicyConfigSchema(properties=properties) if properties else None
    name = policy.name

    def validate(args, report_violation) -> None:
        config = settings(schema, args.get_config())
        try:
            reading, judgement, by_policy = _judged(list(args.resources), overhead(config))
            # No message shows a value of a secret config key (the values arrive decrypted).
            found = [(reading.hidden.text(f.violation()), reading.urns.get(f.object)) for f in by_policy.get(name, ())
                     if not rules.waived(f, config)]
        except (UnknownValueError, _NotApplicableError):
            raise  # the runtime's to handle: "can't run policy during preview"
        except Exception as error:  # noqa: BLE001 - reported, with its type, as a violation
            if os.environ.get("AKS_KUEUE_DEBUG"):
                raise
            found = [(f"{INTERNAL_FAILURE} ({type(error).__name__}: {error}); please report it", None)]
        for message, urn in found:
            report_violation(message, urn)

    return StackValidationPolicy(name=name, description=policy.description, validate=validate,
                                 enforcement_level=_LEVELS[policy.level], config_schema=schema)


_lock = threading.Lock()
# `resources`: the last resources read, held so that identity cannot be an address reused and so that
# their fingerprint can be taken when other resources come (`key`, taken only then).
_last: dict[str, Any] = {"resources": None, "key": None, "reading": None, "judgements": {}}


def read_and_judge(resources: Sequence[Any], vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> tuple[Reading, Judgement]:
    """The model of these resources and the judge's verdict on it, computed once per content."""
    reading, judgement, _ = _judged(resources, vm_overhead)
    return reading, judgement


def _judged(resources: Sequence[Any], vm_overhead: Fraction) -> tuple[Reading, Judgement, dict[str, list[Finding]]]:
    with _lock:
        if not _remembered(resources):
            try:
                reading: Any = from_resources(resources)
            except Exception as error:  # e.g. an unknown value: every policy must see it, not only the first
                reading = error
            _last.update(reading=reading, judgements={})
        reading = _last["reading"]
        if isinstance(reading, Exception):
            raise reading
        judgements = _last["judgements"]
        if vm_overhead not in judgements:
            judgement = judge(reading.model, vm_overhead)
            by_policy: dict[str, list[Finding]] = {}
            for finding in judgement.findings:
                by_policy.setdefault(rules.policy_for(finding), []).append(finding)
            judgements[vm_overhead] = (judgement, by_policy)
        judgement, by_policy = judgements[vm_overhead]
        return reading, judgement, by_policy


def _remembered(resources: Sequence[Any]) -> bool:
    """Whether the last reading is of these resources, which become the last ones.

    The very values handed again are found by identity (the offline preview hands every policy the
    same decoded values); other values by content, the fingerprints taken only then (the Pulumi
    engine's servicer decodes afresh for each policy), the last resources' once."""
    last = _last["resources"] if _last["reading"] is not None else None
    if last is None:
        same, key = False, None
    elif len(last) == len(resources) and all(a.urn == b.urn and a.props is b.props for a, b in zip(last, resources)):
        same, key = True, _last["key"]
    else:
        if _last["key"] is None:
            _last["key"] = fingerprint(last)
        key = fingerprint(resources)
        same = key == _last["key"]
    _last.update(resources=list(resources), key=key)
    return same


def fingerprint(resources: Sequence[Any]) -> bytes:
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
