"""Read the stack config from the running Pulumi program.

Pulumi has no public call that lists every config key, and unknown keys must be
reported, so the whole map is read from the runtime the program was started with.
"""

from __future__ import annotations

from aks_kueue.secrets import Secrets
from aks_kueue.settings.errors import NAMESPACE
from aks_kueue.settings.root import Settings, parse_settings
from aks_kueue.settings.vocabulary import config_secrets


def load_settings() -> Settings:
    """The settings; no problem they report shows a value of a secret key."""
    return parse_settings(_config(), secrets=program_secrets())


def _config() -> dict[str, str]:
    from pulumi.runtime import config as runtime_config

    return {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}


def _secret_config_keys() -> set[str]:
    from pulumi.runtime import config as runtime_config

    secret = set(runtime_config.get_config_secret_keys_env())
    secret.update(key for key in _config() if runtime_config.is_config_secret(key))
    return secret


def program_secrets() -> Secrets:
    """The values of every secret key of the running program's config, any namespace
    (`azure-native:location` set with --secret too): what no message may show."""
    return config_secrets(_config(), _secret_config_keys())


def secret_keys() -> frozenset[str]:
    """The top-level `aks-kueue:` keys that hold a secret, without the namespace (e.g. `kueue`).

    Pulumi marks secrecy per top-level key: `pulumi config set --path --secret kueue.values.token`
    makes all of `aks-kueue:kueue` secret for the program, so everything derived from it must be.
    """
    secret = _secret_config_keys()
    prefix = f"{NAMESPACE}:"
    return frozenset(key[len(prefix):] for key in secret if key.startswith(prefix))
