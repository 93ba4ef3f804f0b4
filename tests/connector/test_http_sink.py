"""The HTTP sink against a real HTTP server on 127.0.0.1 (the standard library's), run by
rw_cli.connect() sessions: what arrives, with which headers, and what happens when the
server fails."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import rw_cli
from rw_cli.errors import RwError


class _Recorder(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the standard library's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.server.received.append((self.path, body, self.headers))
        status = self.server.status
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    srv.received, srv.status = [], 200
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _url(srv, path="/hook") -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def test_rows_are_posted_after_their_epoch_commits(tmp_path, server):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table ev (payload varchar)")
        s.execute(f"create sink hook from ev with (connector = 'http', url = '{_url(server)}', "
                  "type = 'append-only', force_append_only = 'true', header.x_test = 'rw-http-sink')")
        s.execute("insert into ev values ('hello world'), ('{\"key\":\"value\"}'), (null)")
        assert server.received == []  # not before the epoch commits
        s.execute("flush")
        assert [(p, b) for p, b, _ in server.received] == [("/hook", "hello world"), ("/hook", '{"key":"value"}')]
        headers = server.received[0][2]
        assert headers["x_test"] == "rw-http-sink"
        assert headers["Content-Type"].startswith("text/plain")


def test_jsonb_payloads_and_a_url_per_row(tmp_path, server):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table j (payload jsonb)")
        s.execute(f"create sink js from j with (connector = 'http', url = '{_url(server, '/json')}')")
        s.execute("""insert into j values ('{"event": "test", "v": 42}')""")
        s.execute("create table routed (body varchar, target varchar)")
        s.execute("create sink rs as select body as payload, target as url from routed "
                  "with (connector = 'http', type = 'append-only', force_append_only = 'true')")
        s.execute(f"insert into routed values ('a', '{_url(server, '/a')}'), ('b', '{_url(server, '/b')}'), "
                  "('skipped', 'not a url')")
        s.execute("flush")
        got = sorted((p, b) for p, b, _ in server.received)
        assert got == [("/a", "a"), ("/b", "b"), ("/json", '{"event": "test", "v": 42}')]  # as SELECT prints it
        assert [h["Content-Type"] for p, _, h in server.received if p == "/json"] == ["application/json"]


def test_ignore_delete_posts_inserts_and_the_new_rows_of_updates(tmp_path, server):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table t (payload varchar)")
        s.execute(f"create sink h from t with (connector = 'http', url = '{_url(server)}', "
                  "type = 'append-only', ignore_delete = 'true')")
        s.execute("insert into t values ('before update')")
        s.execute("flush")
        s.execute("update t set payload = 'after update' where payload = 'before update'")
        s.execute("delete from t where payload = 'after update'")
        s.execute("flush")
        assert [b for _, b, _ in server.received] == ["before update", "after update"]


def test_a_failing_server_does_not_stop_the_pipeline(tmp_path, server, capfd):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table t (payload varchar)")
        s.execute(f"create sink h from t with (connector = 'http', url = '{_url(server)}')")
        server.status = 500
        s.execute("insert into t values ('lost')")
        s.execute("flush")
        assert "http sink: 1 row(s) not delivered" in capfd.readouterr().err
        assert len(server.received) == 3  # tried three times
        server.status = 200
        s.execute("insert into t values ('next')")
        s.execute("flush")
        assert [b for _, b, _ in server.received][-1] == "next"
        assert s.execute("select count(*) from t").text_rows() == [["2"]]


@pytest.mark.parametrize("columns, options, message", [
    ("a varchar, b varchar", "url = 'http://h'", "only supports payload and url columns, got a"),
    ("payload varchar", "", "requires url option when schema has exactly 1 column"),
    ("payload varchar, url varchar", "url = 'http://h'", "url option cannot coexist with url column"),
    ("payload varchar, url int", "", "url column must be varchar"),
    ("payload int", "url = 'http://h'", "payload column must be varchar or jsonb"),
    ("payload varchar", "url = 'not a valid url !!'", "invalid URL"),
    ("payload varchar", "url = 'http://h', auto.schema.change = 'true'", "does not support schema change"),
])
def test_create_sink_checks_columns_and_options(tmp_path, columns, options, message):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute(f"create table t ({columns})")
        with pytest.raises(RwError, match=message):
            s.execute(f"create sink h from t with (connector = 'http', type = 'append-only', force_append_only = 'true'"
                      f"{', ' + options if options else ''})")
        assert s.execute("show sinks").text_rows() == []
