"""Read other stacks' outputs while the program runs, before anything of this stack is registered.

A fleet member's model depends on the other stacks: a worker mirrors the manager's teams, so which
resources it registers depends on their values; a manager judges each worker's queues and pools.
The model is built, and judged, before anything is registered, so the values are needed as plain
values, not as Outputs. Each stack is read through a `pulumi.StackReference` (the engine's own
read, at preview as at update: `pkg/resource/deploy/builtins.go` `readStackReference`; a stack that
does not exist fails the update with `unknown stack`, one that was never deployed has no outputs),
and its outputs are awaited here.

Private API, in this module only: `pulumi.runtime.sync_await._sync_await`, the SDK's own way to
wait for a future inside a running program (its synchronous `invoke` uses it). The public
`StackReference.get_output_details` is a coroutine, and a Python program's top level cannot
await. Checked with pulumi 3.272.0 (sdk/python/lib/pulumi/runtime/sync_await.py).
"""

from __future__ import annotations

import asyncio
from typing import Iterable

import pulumi
from pulumi.runtime.sync_await import _sync_await

from aks_kueue.model.fleet_outputs import StackOutputs


def read_stacks(prefix: str, stacks: Iterable[str], names: Iterable[str],
                opts: pulumi.ResourceOptions | None = None) -> dict[str, tuple[pulumi.StackReference, StackOutputs]]:
    """Each stack's reference and the outputs `names` of it (an output it does not have is left out)."""
    wanted = list(dict.fromkeys(names))
    # Named by the stack, so that reordering the workers renames nothing.
    references = {stack: pulumi.StackReference(f"{prefix}-{stack.replace('/', '-')}", stack_name=stack, opts=opts)
                  for stack in dict.fromkeys(stacks)}

    async def details():
        return await asyncio.gather(*(reference.get_output_details(name)
                                      for reference in references.values() for name in wanted))

    found = iter(_sync_await(details()) if references and wanted else [])
    read = {}
    for stack, reference in references.items():
        values, secret = {}, set()
        for name in wanted:
            detail = next(found)
            if detail.secret_value is not None:
                values[name], _ = detail.secret_value, secret.add(name)
            elif detail.value is not None:
                values[name] = detail.value
        read[stack] = (reference, StackOutputs(values, frozenset(secret)))
    return read
