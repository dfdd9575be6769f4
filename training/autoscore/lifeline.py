"""`python -m training.autoscore.lifeline -- COMMAND...`: run COMMAND until it exits or
until standard input reaches end of file, whichever comes first, and then stop COMMAND's
process group (SIGTERM; SIGKILL after 10 s). Exits with COMMAND's status.

Where the kernel cannot signal a child when its parent dies (not Linux),
`training.autoscore.processes.spawn` starts each eval-set this way, with a pipe on
standard input whose write end only the scoring holds: when the scoring dies, however it
dies (`kill -9` too), the pipe reads end of file. A SIGTERM to the lifeline (the scoring
stopping its child) is passed on to COMMAND's group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from types import FrameType

from training.autoscore.processes import stop_process_group


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--":
        print("usage: python -m training.autoscore.lifeline -- COMMAND...", file=sys.stderr)
        return 2
    proc = subprocess.Popen(argv[1:], stdin=subprocess.DEVNULL, start_new_session=True)

    def pass_on(signum: int, frame: FrameType | None) -> None:
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, pass_on)

    def until_end_of_input() -> None:
        # the raw descriptor: a daemon thread blocked in sys.stdin's buffered reader holds
        # its lock, and the interpreter aborts at exit when it cannot take it
        while os.read(0, 65536):
            pass
        stop_process_group(proc, grace=10.0)

    threading.Thread(target=until_end_of_input, daemon=True).start()
    code = proc.wait()
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
