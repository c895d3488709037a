"""A server author's own tests of shutdown, through the `mcp_shutdown` fixture of
pytest-mcp-shutdown. `server_fixed.py` exits when its session ends; `server_thread.py` (a
non-daemon thread, the classic Python bug) does not. Run by tests/conformance/plugins.rs,
which expects exactly `test_fixed_server_conforms` to pass and `test_thread_server_conforms`
to fail with the report.
"""

import sys

ENDINGS = ["close", "exit"]


def test_fixed_server_conforms(mcp_shutdown):
    result = mcp_shutdown([sys.executable, "server_fixed.py"], scenarios=ENDINGS)
    result.assert_conforms()
    assert result.rule_held("stdio-exit-on-eof")
    assert result.missed == []


def test_thread_server_is_told_what_it_missed(mcp_shutdown):
    result = mcp_shutdown([sys.executable, "server_thread.py"], scenarios=ENDINGS)
    assert not result.conforms
    assert {m.rule for m in result.missed} >= {"stdio-exit-on-eof"}
    assert result.hints, "what held it, and the fix"
    assert any("os._exit" in f["text"] for f in result.fixes), result.fixes


def test_thread_server_conforms(mcp_shutdown):
    mcp_shutdown([sys.executable, "server_thread.py"], scenarios=ENDINGS).assert_conforms()
