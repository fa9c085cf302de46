"""AKS facts: VM sizes, what a node can allocate, the labels and defaults AKS gives pools. Pure: no Pulumi, no settings."""
