"""Read the stack config from the running Pulumi program.

Pulumi has no public call that lists every config key, and unknown keys must be
reported, so the whole map is read from the runtime the program was started with.
"""

from __future__ import annotations

from aks_kueue.settings.errors import NAMESPACE
from aks_kueue.settings.root import Settings, parse_settings


def load_settings() -> Settings:
    from pulumi.runtime import config as runtime_config

    config = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return parse_settings(config)


def secret_keys() -> frozenset[str]:
    """The top-level `aks-kueue:` keys that hold a secret, without the namespace (e.g. `kueue`).

    Pulumi marks secrecy per top-level key: `pulumi config set --path --secret kueue.values.token`
    makes all of `aks-kueue:kueue` secret for the program, so everything derived from it must be.
    """
    from pulumi.runtime import config as runtime_config

    config = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secret = set(runtime_config.get_config_secret_keys_env())
    secret.update(key for key in config if runtime_config.is_config_secret(key))
    prefix = f"{NAMESPACE}:"
    return frozenset(key[len(prefix):] for key in secret if key.startswith(prefix))
