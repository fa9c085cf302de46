"""Read the stack config from the running Pulumi program.

Pulumi has no public call that lists every config key, and unknown keys must be
reported, so the whole map is read from the runtime the program was started with.
"""

from __future__ import annotations

from aks_kueue.settings.root import Settings, parse_settings


def load_settings() -> Settings:
    from pulumi.runtime import config as runtime_config

    config = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return parse_settings(config)
