"""Register an azure-native resource from its type token and the provider's own input names.

The typed classes send the engine exactly this (the token, camelCase inputs) plus an alias
for every API-version token the resource ever had, about a hundred. Those aliases only
matter to a stack that once used a versioned token; a resource this program creates new has
none to match, and resolving them is most of what registering one costs.
"""

from __future__ import annotations

from typing import Any

import pulumi

from aks_kueue.aks.access import role_definition_id
from aks_kueue.compat import azure_native_utilities


class AzureObject(pulumi.CustomResource):
    def __init__(self, type_token: str, name: str, inputs: dict[str, Any], opts: pulumi.ResourceOptions):
        # As the SDK's classes do: bind the resource to this pulumi-azure-native plugin version.
        opts = pulumi.ResourceOptions.merge(azure_native_utilities.get_resource_opts_defaults(), opts)
        super().__init__(type_token, name, inputs, opts)


def role_definition(subscription: pulumi.Output[str], role: str) -> pulumi.Output[str]:
    """A built-in or custom role's ARM id in `subscription` (the client config's), as assignments name it."""
    return subscription.apply(lambda sub: role_definition_id(sub, role))
