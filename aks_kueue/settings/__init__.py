"""Stack settings: pydantic models for every `aks-kueue:` key, and the one loader."""

from aks_kueue.settings.errors import SettingsError
from aks_kueue.settings.root import SYSTEM_POOL_NAME, Settings, parse_settings

__all__ = ["SettingsError", "Settings", "SYSTEM_POOL_NAME", "parse_settings"]
