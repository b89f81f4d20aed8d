"""Progress of a run on stderr: tqdm bars on a terminal (one for the claims, one for the claim
being audited), one line per finished claim otherwise, nothing when quiet."""

from __future__ import annotations

from typing import Callable, TextIO

from dpaudit.runner.task import Outcome

__all__ = ["Progress", "isatty"]


class Progress:
    """Progress on stderr: tqdm bars on a terminal, one line per claim otherwise, nothing if quiet."""

    def __init__(self, total: int, quiet: bool, stream: TextIO) -> None:
        self.stream = stream
        self.quiet = quiet
        self.total = total
        self.done = 0
        interactive = not quiet and isatty(stream)
        self.bar = None
        if interactive and total > 1:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="claims", unit="claim", file=stream,
                            dynamic_ncols=True, leave=False)
        self.interactive = interactive
        self.inner = None

    def claim_progress(self, claim_id: str) -> Callable[[int, int, str], None] | None:
        """A callback for ``AuditContext.progress`` showing a per-claim bar (terminal only)."""
        if not self.interactive:
            return None
        from tqdm import tqdm

        self.inner = tqdm(total=None, desc=claim_id, file=self.stream, dynamic_ncols=True,
                          leave=False, position=1 if self.bar is not None else 0)
        inner = self.inner

        def update(done: int, total: int, label: str) -> None:
            if total and inner.total != total:
                inner.total = total
            inner.set_description_str(f"{claim_id}: {label}" if label else claim_id,
                                      refresh=False)
            if done >= inner.n:
                inner.update(done - inner.n)

        return update

    def message(self, text: str) -> None:
        if self.quiet:
            return
        if self.bar is not None or self.inner is not None:
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def finished(self, outcome: Outcome) -> None:
        if self.inner is not None:
            self.inner.close()
            self.inner = None
        self.done += 1
        # The error itself is printed once, with the summary (not here as well).
        what = (outcome.record["verdict"] if outcome.record is not None
                else "input rejected (the error follows)" if outcome.input_error
                else "FAILED (the error follows)")
        self.message(f"[{self.done}/{self.total}] {outcome.claim_id}: {what} "
                     f"({outcome.seconds:.1f} s)")
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        for bar in (self.inner, self.bar):
            if bar is not None:
                bar.close()
        self.inner = self.bar = None


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (``False`` for a closed or file-less stream)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
