"""pytest entry point: `pytest --mcp-shutdown "uv run my-server"` adds one test per server
command; the `mcp_shutdown` fixture checks a server from a test of your own. Both fail with
the report's text (every missed rule, what held the server, the fix) and pass when the server
conforms. Configure in pytest.ini / pyproject.toml:

    [tool.pytest.ini_options]
    mcp_shutdown_commands = ["uv run my-server"]
    mcp_shutdown_args = "--scenario close --scenario exit"
"""

from __future__ import annotations

import shlex
from typing import Any, List, Optional, Sequence, Union

import pytest

from . import CannotCheck, NonConformance, Result, check


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("mcp-shutdown", "MCP stdio shutdown conformance")
    group.addoption(
        "--mcp-shutdown",
        action="append",
        default=[],
        metavar="COMMAND",
        help="check this MCP stdio server command (shell words) as a test; repeatable",
    )
    group.addoption(
        "--mcp-shutdown-args",
        default=None,
        metavar="ARGS",
        help="further `mcp-shutdown check` flags for every check, e.g. '--scenario close --hosts'",
    )
    group.addoption(
        "--mcp-shutdown-bin",
        default=None,
        metavar="PATH",
        help="the mcp-shutdown binary (default: $MCP_SHUTDOWN_BIN, else the installed one)",
    )
    parser.addini("mcp_shutdown_commands", "server commands to check, one per line", type="linelist", default=[])
    parser.addini("mcp_shutdown_args", "further `mcp-shutdown check` flags", default="")
    parser.addini("mcp_shutdown_bin", "the mcp-shutdown binary", default="")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "mcp_shutdown: a check of an MCP stdio server's shutdown")


def _args(config: Any) -> List[str]:
    given = config.getoption("mcp_shutdown_args")
    return shlex.split(given if given is not None else config.getini("mcp_shutdown_args"))


def _binary(config: Any) -> Optional[str]:
    return config.getoption("mcp_shutdown_bin") or config.getini("mcp_shutdown_bin") or None


class ShutdownItem(pytest.Item):
    """One server command, checked."""

    def __init__(self, *, command: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.add_marker("mcp_shutdown")

    def runtest(self) -> None:
        config = self.config
        result = check(
            self.command,
            args=_args(config),
            cwd=str(config.invocation_params.dir),
            binary=_binary(config),
        )
        result.assert_conforms()

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, (NonConformance, CannotCheck)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        return self.path, None, f"mcp-shutdown check -- {self.command}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    commands = list(config.getoption("mcp_shutdown")) + list(config.getini("mcp_shutdown_commands"))
    for command in commands:
        items.append(ShutdownItem.from_parent(session, name=f"mcp-shutdown[{command}]", command=command))


class Checker:
    """The `mcp_shutdown` fixture: call it with a server command to check it."""

    def __init__(self, config: Any) -> None:
        self._config = config

    def __call__(
        self,
        command: Union[str, Sequence[str]],
        *,
        scenarios: Sequence[str] = (),
        args: Sequence[str] = (),
        cwd: Optional[str] = None,
        env: Optional[Any] = None,
    ) -> Result:
        """Checks `command`; `.assert_conforms()` on the result fails the test with the report."""
        return check(
            command,
            scenarios=scenarios,
            args=[*_args(self._config), *args],
            cwd=cwd or str(self._config.invocation_params.dir),
            env=env,
            binary=_binary(self._config),
        )


@pytest.fixture
def mcp_shutdown(request: Any) -> Checker:
    """Checks an MCP stdio server: `mcp_shutdown("uv run my-server").assert_conforms()`."""
    return Checker(request.config)
