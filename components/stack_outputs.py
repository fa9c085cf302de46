"""Read stacks' outputs while the program runs, once, before what depends on them is registered.

Two readers need another deployment's outputs as plain values, not as Outputs: the day-2 guard
(this stack's last `day2` record decides whether the system pool is sent inline, which create-only
values stick, and whether the update may go on at all) and a fleet member (the other stacks of its
fleet are part of its model, judged before anything is registered). Each stack is read through a
`pulumi.StackReference` (the engine's own read, at preview as at update: `pkg/resource/deploy/
builtins.go` `readStackReference`; a stack that does not exist fails the update with `unknown
stack`, one never deployed has no outputs), and all of a reader's references are awaited here at
once, as `StackReference.get_output_details` reads them (`outputs` and `secret_output_names`).

Why a private name (aks_kueue.compat `sync_await`, the SDK's `_sync_await`): `get_output_details`
is a coroutine, and a Python program's top level cannot await. The alternative, deciding inside
`Output.apply`, registers resources inside `apply` (invisible to `pulumi preview` until the value is
known, and never under a policy's eye when it is not) and makes every decision an Output. Checked
with pulumi 3.272.0 (sdk/python/lib/pulumi/runtime/sync_await.py, stack_reference.py).
"""

from __future__ import annotations

import asyncio
from typing import Iterable, Mapping, Optional

import pulumi

from aks_kueue.compat import sync_await
from aks_kueue.model.fleet_outputs import StackOutputs


def stack_references(prefix: str, stacks: Iterable[str],
                     opts: Optional[pulumi.ResourceOptions] = None) -> dict[str, pulumi.StackReference]:
    """A reference to each stack, named by the stack (so that reordering a fleet's workers renames nothing)."""
    return {stack: pulumi.StackReference(f"{prefix}-{stack.replace('/', '-')}", stack_name=stack, opts=opts)
            for stack in dict.fromkeys(stacks)}


def read_stacks(references: Mapping[str, pulumi.StackReference],
                names: Optional[Iterable[str]] = None) -> dict[str, Optional[StackOutputs]]:
    """Each stack's outputs (only `names` of them when given; an output a stack lacks is left out),
    read at once; None for a stack whose outputs are unknown in this run."""
    wanted = list(dict.fromkeys(names)) if names is not None else None

    async def read_one(reference: pulumi.StackReference):
        # The resolved outputs themselves: an apply on them (get_output_details) would lift every
        # nested value of a worker's summary into an Output of its own, for each name read.
        if not await reference.outputs.is_known():
            return None
        return await reference.outputs.future() or {}, await reference.secret_output_names.future() or []

    async def read_all():
        return await asyncio.gather(*(read_one(reference) for reference in references.values()))

    read: dict[str, Optional[StackOutputs]] = {}
    for stack, found in zip(references, sync_await(read_all()) if references else []):
        if found is None:
            read[stack] = None
            continue
        outputs, secret_names = found
        values = {name: outputs[name] for name in (outputs if wanted is None else wanted)
                  if outputs.get(name) is not None}
        read[stack] = StackOutputs(values, frozenset(n for n in secret_names if n in values))
    return read
