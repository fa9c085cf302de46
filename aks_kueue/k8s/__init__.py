"""Kubernetes rules the rest of the package shares: quantities, merging, spelling hints. Pure: no Pulumi, no settings."""
