"""One model of the desired cluster, with two readers: `from_settings` for the program and
`from_resources` for the policy pack. The judge (`aks_kueue.judge`) reads only this."""

from aks_kueue.model.desired import (DEVELOPMENT, PRODUCTION, Cluster, ExpectedWorkload, Install, KueueItem, Model,
                                     Namespace, Network, Security, SubmitterGroup, Unreadable)

__all__ = ["DEVELOPMENT", "PRODUCTION", "Cluster", "ExpectedWorkload", "Install", "KueueItem", "Model", "Namespace",
           "Network", "Security", "SubmitterGroup", "Unreadable"]
