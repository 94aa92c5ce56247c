"""A single updating progress line on stderr for long loops (quiet unless asked for)."""

from __future__ import annotations

import sys
import time


class Progress:
    """``with Progress(total, "forecast", enabled) as bar: bar.update(i)``.

    Writes ``label: i/total (elapsed s)`` with carriage returns, at most ten times a second,
    and a newline when closed. Does nothing when ``enabled`` is False.
    """

    def __init__(self, total: int, label: str, enabled: bool = True) -> None:
        self.total, self.label, self.enabled = total, label, enabled
        self._start = time.perf_counter()
        self._last = 0.0
        self._width = 0
        self._pending: tuple[int, str] | None = None

    def update(self, done: int, extra: str = "") -> None:
        """Report ``done`` of ``total`` steps."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and done < self.total:
            self._pending = (done, extra)  # shown at the next report or when closed
            return
        self._last, self._pending = now, None
        msg = f"{self.label}: {done}/{self.total} ({now - self._start:.1f} s){' ' + extra if extra else ''}"
        sys.stderr.write("\r" + msg.ljust(self._width))
        sys.stderr.flush()
        self._width = max(self._width, len(msg))

    def close(self) -> None:
        """End the line (after the last step reported, if it was held back)."""
        if self._pending is not None:
            self._last = -1.0
            self.update(*self._pending)
        if self.enabled and self._width:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
