"""Day-2 safety, as pure logic: what forces a replacement, the guard's comparison with the last
deployment, allowReplacement, check-plan's classification, names that must not move.

Nothing here imports Pulumi, settings or components: the components and the CLI hand it plain
values, so the same rules serve the program, the offline preview and `aks-kueue check-plan`.
"""
