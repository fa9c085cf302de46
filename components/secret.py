"""Inputs derived from a secret stack key, sent as secrets without losing what is known of them."""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

import pulumi
from pulumi.runtime.rpc import is_rpc_secret

from aks_kueue.secrets import Secrets

# The provider SDKs' typed inputs (`ManagedClusterAddonProfileArgs`) are classes the SDK marks with
# this attribute (pulumi/_types.py `input_type`, checked in pulumi 3.272); their values live in the
# instance's `__dict__` under the Python names `pulumi.set` gives them. Read only here.
_INPUT_TYPE_MARK = "_pulumi_input_type"


@dataclass(frozen=True)
class SecretKeys:
    """Which of what the program registers derives from a secret: the stack's top-level `aks-kueue:`
    keys set with `--secret` (`settings.source.secret_keys`, without the namespace), and whether
    another fleet member's `fleet` output this stack read is secret (`FleetReading.secret`). Every
    component is handed this one set and asks it about the keys its inputs come from."""

    keys: frozenset[str] = frozenset()
    fleet_outputs: bool = False

    def any(self, *keys: str) -> bool:
        """Whether one of these top-level keys (`nodePools`, `queues`) is secret."""
        return not self.keys.isdisjoint(keys)


NO_SECRET_KEYS = SecretKeys()


def secret_inputs(inputs: Mapping[str, Any], secret: bool) -> dict[str, Any]:
    """A stack key set with `pulumi config set --secret` is secret as a whole (Pulumi marks
    secrecy per top-level key), so every input derived from it is sent as a secret."""
    if not secret:
        return dict(inputs)
    return {k: secret_value(v) for k, v in inputs.items()}


def secret_value(value: Any) -> Any:
    """`value` as a secret. A map or list that holds outputs is made secret leaf by leaf:
    `Output.secret` of a whole map waits for every output inside it, so in a preview one unknown
    inside (a workspace id Azure has yet to assign) would make the whole input unknown, and every
    policy that reads it could not run. Leaf by leaf, what is known stays known, and secret."""
    if value is None:
        return None
    made = _each(value, secret_value) if _holds_output(value) else value
    return pulumi.Output.secret(value) if made is value else made


def _each(value: Any, change: Callable[[Any], Any]) -> Any:
    """`value` with `change` applied to each part of it (a map's values, a list's items, a typed
    input's fields); the same object when no part changes, or when it has none."""
    if isinstance(value, Mapping) and not isinstance(value, pulumi.Resource):
        items = {k: change(v) for k, v in value.items()}
        return items if any(items[k] is not value[k] for k in value) else value
    if isinstance(value, (list, tuple)):
        parts = [change(v) for v in value]
        return parts if any(a is not b for a, b in zip(parts, value)) else value
    if _is_input_type(value):
        fields = {k: change(v) for k, v in vars(value).items()}
        if all(fields[k] is v for k, v in vars(value).items()):
            return value
        made = copy.copy(value)
        vars(made).update(fields)
        return made
    return value


def _is_input_type(value: Any) -> bool:
    return hasattr(type(value), _INPUT_TYPE_MARK) and not isinstance(value, dict) and hasattr(value, "__dict__")


def _holds_output(value: Any) -> bool:
    return _any_leaf(value, lambda item: isinstance(item, (pulumi.Output, pulumi.Resource))
                     or inspect.isawaitable(item), into_input_types=True)


def _any_leaf(value: Any, test: Callable[[Any], bool], into_input_types: bool = False) -> bool:
    """Whether `test` holds for `value` or anything inside its maps, lists (and typed inputs)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if test(item):
            return True
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif into_input_types and _is_input_type(item):
            stack.extend(vars(item).values())
    return False


def secret_where_it_flows(secrets: Secrets) -> Callable[[pulumi.ResourceTransformArgs],
                                                         Optional[pulumi.ResourceTransformResult]]:
    """A stack transform (`pulumi.runtime.register_resource_transform`): every input of every resource
    that holds text of a secret config value is sent as a secret, whichever component built it.
    Components make what they derive from a secret key secret themselves (`secret_inputs`); this
    catches what they pass on as it is (the region, a resource group's name, a group id in a role
    assignment), so a component written later cannot forget it. Text is compared as `Secrets.holds`
    does, inside longer words too (a number written in text counts; a number input does not).

    The engine runs it on each resource's inputs as they went over the wire (the provider's names,
    a secret as the SDK's secret marker, which is left as it is), and sends the resource on with what
    it returns; the offline preview's monitor plays that part (`preview/recorder.py`)."""

    def transform(args: pulumi.ResourceTransformArgs) -> Optional[pulumi.ResourceTransformResult]:
        props = args.props
        if not isinstance(props, dict) or not props:
            return None
        changed = secret_if_shown(props, secrets)
        return None if changed is props else pulumi.ResourceTransformResult(changed, args.opts)

    return transform


def secret_if_shown(value: Any, secrets: Secrets) -> Any:
    """`value` with each part that holds text of a secret value made secret (the same object when
    none does). An output is looked at once it resolves; it stays unknown while it is."""
    if not secrets or is_rpc_secret(value):
        return value
    if isinstance(value, str):
        return pulumi.Output.secret(value) if secrets.holds(value) else value
    if isinstance(value, pulumi.Output):
        return value.apply(lambda resolved: pulumi.Output.secret(resolved) if _shows(resolved, secrets) else resolved)
    return _each(value, lambda part: secret_if_shown(part, secrets))


def _shows(value: Any, secrets: Secrets) -> bool:
    return _any_leaf(value, lambda item: isinstance(item, str) and secrets.holds(item))
