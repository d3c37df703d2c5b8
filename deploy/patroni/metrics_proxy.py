#!/usr/bin/env python3
"""Patroni's /metrics on the metrics network, and nothing else of its REST API.

docker-compose.yml: Patroni's REST API listens on the control network only
(etcd and the two members; it takes changes from there). Prometheus is not
on that network: it scrapes this proxy, which listens on the member's
metrics-network address (PATRONI_METRICS_LISTEN, host:port), answers
GET /metrics with what the member's own REST API answers, and 404 to any
other path (405 to any other method); it sends no credentials.
"""
import http.server
import os
import urllib.request

REST = "http://" + os.environ["PATRONI_RESTAPI_LISTEN"] + "/metrics"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.split("?", 1)[0] != "/metrics":
            self.send_error(404)
            return
        try:
            with urllib.request.urlopen(REST, timeout=4) as r:
                body, ctype = r.read(), r.headers.get("Content-Type", "text/plain")
        except Exception as e:  # Patroni down: the scrape fails (up 0)
            self.send_error(502, str(e)[:200])
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self):
        self.send_error(405)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _refuse

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    host, port = os.environ["PATRONI_METRICS_LISTEN"].rsplit(":", 1)
    http.server.ThreadingHTTPServer((host, int(port)), Handler).serve_forever()
