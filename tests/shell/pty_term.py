"""Drive a program in a pseudo-terminal and look at the screen it draws (pexpect + pyte)."""
from __future__ import annotations

import re
import time

import pexpect
import pyte


class _Screen(pyte.Screen):
    def __init__(self, cols, rows, reply):
        super().__init__(cols, rows)
        self._reply = reply

    def write_process_input(self, data: str) -> None:  # answers to cursor-position requests
        self._reply(data)


class Term:
    def __init__(self, argv: list[str], env: dict, rows: int = 40, cols: int = 100, cwd: str | None = None):
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(rows, cols), encoding="utf-8",
                                   codec_errors="replace", cwd=cwd)
        self.screen = _Screen(cols, rows, self.child.send)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""

    def pump(self, wait: float = 0.05) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=max(0.0, deadline - time.monotonic()))
            except pexpect.TIMEOUT:
                return
            except pexpect.EOF:
                return
            self.raw += data
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    def wait_for(self, pattern: str, timeout: float = 10.0, regex: bool = False) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            screen = self.text()
            if (re.search(pattern, screen, re.M) if regex else pattern in screen):
                return screen
            if not self.child.isalive():
                self.pump()
                screen = self.text()
                if (re.search(pattern, screen, re.M) if regex else pattern in screen):
                    return screen
                break
        raise AssertionError(f"{pattern!r} not on the screen:\n{self.text()}")

    def wait_prompt(self, prompt: str = "rw=>", timeout: float = 10.0) -> str:
        """Wait until the program waits for input: the last line on the screen is the bare
        prompt. (Keys sent earlier meet the terminal in cooked mode, where the line discipline
        eats some control keys such as Ctrl-R.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            screen = self.text()
            if screen.splitlines()[-1:] == [prompt]:
                return screen
        raise AssertionError(f"no bare {prompt!r} prompt at the bottom:\n{self.text()}")

    def send(self, text: str) -> None:
        self.child.send(text)

    def type(self, text: str) -> None:
        """Send keys in one write, as a fast typist (or a paste) would."""
        self.child.send(text)
        self.pump()

    def clear(self) -> None:
        """Clear the screen model (Ctrl-L in the shell redraws the prompt at the top)."""
        self.send("\x0c")
        time.sleep(0.2)
        self.pump()

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
