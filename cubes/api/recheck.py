"""The api cube's timer: every right's proof looked for again (docs/architecture.md section 6, "Sites have owners").

Every ``api.proof_sweep_s`` the timer takes the rights whose last check is older than
``api.proof_recheck_s`` (``TenantStore.due_checks``: taken under a guard, so api replicas that
sweep at once check each right once) and checks each as ``POST /api/v1/hosts/{host}/verify``
would (``shared.webmaster.rights.Rights.verify``): a proof found keeps the right (or restores a lapsing one),
a proof missing starts the right's grace and tells its holder, and a proof still missing after the
grace ends the right, told to every tenant that holds or held one on the origin. The timer has no
outputs: what it changes is in the stores.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from shared.runtime.cube import Output, TimerContext
from shared.webmaster.rights import Rights

__all__ = ["SWEEP_BATCH", "ProofRechecks"]

log = logging.getLogger(__name__)

#: rights checked per sweep at most: each is up to three guarded fetches; the rest wait for the next sweep
SWEEP_BATCH = 50


class ProofRechecks:
    def __init__(self, rights: Rights) -> None:
        self.rights = rights

    async def sweep(self, ctx: TimerContext) -> Sequence[Output]:
        checked = await self.rights.sweep(limit=SWEEP_BATCH)
        if checked:
            log.info("re-checked the proofs of %d right(s)", checked)
        return []
