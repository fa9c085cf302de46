"""Read other stacks' outputs while the program runs, before anything of this stack is registered.

A fleet member's model depends on the other stacks: a worker mirrors the manager's teams, so which
resources it registers depends on their values; a manager judges each worker's queues and pools.
The model is built, and judged, before anything is registered, so the values are needed as plain
values, not as Outputs. Each stack is read through a `pulumi.StackReference` (the engine's own
read, at preview as at update: `pkg/resource/deploy/builtins.go` `readStackReference`; a stack that
does not exist fails the update with `unknown stack`, one that was never deployed has no outputs),
and its outputs are awaited here.

Private API (through aks_kueue.compat): `pulumi.runtime.sync_await._sync_await`, the SDK's own way
to wait for a future inside a running program (its synchronous `invoke` uses it). The public
`StackReference.get_output_details` is a coroutine, and a Python program's top level cannot
await; it is read the way that method reads it (`outputs` and `secret_output_names`, known or
not). Checked with pulumi 3.272.0 (sdk/python/lib/pulumi/runtime/sync_await.py, stack_reference.py).
"""

from __future__ import annotations

import asyncio
from typing import Iterable

import pulumi

from aks_kueue.compat import sync_await
from aks_kueue.model.fleet_outputs import StackOutputs


def read_stacks(prefix: str, stacks: Iterable[str], names: Iterable[str],
                opts: pulumi.ResourceOptions | None = None) -> dict[str, tuple[pulumi.StackReference, StackOutputs]]:
    """Each stack's reference and the outputs `names` of it (an output it does not have is left out)."""
    wanted = list(dict.fromkeys(names))
    # Named by the stack, so that reordering the workers renames nothing.
    references = {stack: pulumi.StackReference(f"{prefix}-{stack.replace('/', '-')}", stack_name=stack, opts=opts)
                  for stack in dict.fromkeys(stacks)}

    async def read_one(reference: pulumi.StackReference):
        # The resolved outputs themselves: an apply on them (get_output_details) would lift every
        # nested value of a worker's summary into an Output of its own, for each name read.
        if not await reference.outputs.is_known():
            return {}, []
        return await reference.outputs.future() or {}, await reference.secret_output_names.future() or []

    async def read_all():
        return await asyncio.gather(*(read_one(reference) for reference in references.values()))

    read = {}
    for (stack, reference), (outputs, secret_names) in zip(references.items(), sync_await(read_all())
                                                          if references else []):
        values = {name: outputs[name] for name in wanted if outputs.get(name) is not None}
        read[stack] = (reference, StackOutputs(values, frozenset(n for n in secret_names if n in values)))
    return read
