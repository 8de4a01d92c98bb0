#!/usr/bin/env python3
"""A client of `schedmate serve`, in Python's standard library only.

Use it as a module from a scheduler:

    from serve_client import SchedMate, SchedMateError
    sm = SchedMate("unix:/run/schedmate/serve.sock")     # or http://HOST:PORT
    advice = sm.register("k8s:ns/train-17", repo="/home/ada/proj",
                         command=["torchrun", "--nproc_per_node=8", "train.py"],
                         log="/home/ada/proj/out.log", gpus=8, nodes=["n1"])
    if advice["advice"]["fallback"]:
        ...                      # use the scheduler's own estimate
    else:
        estimate = advice["advice"]["estimate"]["duration_s"]
    ...
    sm.progress("k8s:ns/train-17")                     # while it runs
    sm.end("k8s:ns/train-17", "completed", duration_s=3600, sm_util=71)

or from a shell:

    serve_client.py unix:/run/schedmate/serve.sock advise --repo DIR -- CMD...
    serve_client.py http://127.0.0.1:8080 --token-file T health

A TCP server needs the bearer token (--token-file, or SCHEDMATE_TOKEN_FILE
in the environment).  Answers 429 and 503 carry Retry-After; `retries`
makes the client wait and send again that many times (a write-back may be
sent again safely: the record's id is the job's).  docs/serve.md has the
whole API.
"""
import argparse
import http.client
import json
import os
import socket
import sys
import time


class SchedMateError(Exception):
    """An answer that is not 2xx (or no answer at all)."""

    def __init__(self, status, code, message, retry_after=None):
        super().__init__("%s %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class _UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a UNIX stream socket."""

    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


class _TcpConnection(http.client.HTTPConnection):
    """HTTP/1.1 over TCP without Nagle's delay: http.client writes the
    head and the body separately, and the second write would otherwise
    wait for the server's delayed acknowledgement."""

    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class SchedMate:
    """One keep-alive connection to a server; not for several threads."""

    def __init__(self, server, token=None, timeout=30.0, retries=0):
        if server.startswith("unix:"):
            self._new = lambda: _UnixConnection(server[5:], timeout)
        else:
            hostport = server[7:] if server.startswith("http://") else server
            hostport = hostport.split("/", 1)[0]
            self._new = lambda: _TcpConnection(hostport, timeout=timeout)
        self._conn = None
        self._token = token
        self.retries = retries

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method, path, body=None):
        """Sends one request; returns the decoded JSON answer (or text)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        for attempt in range(self.retries + 1):
            for fresh in (False, True):
                if self._conn is None or fresh:
                    self.close()
                    self._conn = self._new()
                try:
                    self._conn.request(method, path, body=data,
                                       headers=headers)
                    resp = self._conn.getresponse()
                    raw = resp.read()
                    break
                except (http.client.RemoteDisconnected, BrokenPipeError,
                        ConnectionResetError):
                    # A kept connection the server had closed: once more.
                    if fresh:
                        raise
            if resp.getheader("Connection", "").lower() == "close":
                self.close()
            ctype = resp.getheader("Content-Type", "")
            answer = (json.loads(raw) if ctype.startswith("application/json")
                      and raw else raw.decode("utf-8", "replace"))
            if 200 <= resp.status < 300:
                return answer
            ra = resp.getheader("Retry-After")
            ra = float(ra) if ra else None
            if resp.status in (429, 503) and attempt < self.retries:
                time.sleep(ra if ra is not None else 1.0)
                continue
            code = answer.get("error") if isinstance(answer, dict) else None
            msg = answer.get("message") if isinstance(answer, dict) else answer
            raise SchedMateError(resp.status, code, msg, ra)
        raise SchedMateError(0, "no_answer", "no answer")

    # ---- the API (docs/serve.md) ----

    def health(self):
        return self.request("GET", "/healthz")

    def metrics(self):
        return self.request("GET", "/metrics")

    def advise(self, repo=None, command=None, metadata=None, **extra):
        body = dict(extra)
        if metadata is not None:
            body["metadata"] = metadata
        if repo is not None:
            body["repo"] = os.path.abspath(repo)
            body["command"] = list(command or [])
        return self.request("POST", "/v1/advise", body)

    def register(self, job_id, repo=None, command=None, metadata=None,
                 **extra):
        body = dict(extra, id=job_id)
        if metadata is not None:
            body["metadata"] = metadata
        if repo is not None:
            body["repo"] = os.path.abspath(repo)
            body["command"] = list(command or [])
        return self.request("POST", "/v1/jobs", body)

    def job(self, job_id):
        return self.request("GET", "/v1/jobs/%s" % job_id)

    def progress(self, job_id):
        return self.request("GET", "/v1/jobs/%s/progress" % job_id)

    def end(self, job_id, end_state, duration_s, **extra):
        body = dict(extra, end_state=end_state, duration_s=duration_s)
        return self.request("POST", "/v1/jobs/%s/end" % job_id, body)

    def track(self, log):
        return self.request("POST", "/v1/track",
                            {"log": os.path.abspath(log)})

    def diagnose(self, log=None, job=None):
        body = {"job": job} if job else {"log": os.path.abspath(log)}
        return self.request("POST", "/v1/diagnose", body)


def _main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("server", help="unix:PATH or http://HOST:PORT")
    p.add_argument("--token-file",
                   default=os.environ.get("SCHEDMATE_TOKEN_FILE"))
    p.add_argument("--retries", type=int, default=0)
    sub = p.add_subparsers(dest="op", required=True)
    sub.add_parser("health")
    sub.add_parser("metrics")
    a = sub.add_parser("advise")
    a.add_argument("--repo")
    a.add_argument("--meta", help="metadata JSON file (extract --json)")
    a.add_argument("command", nargs="*")
    r = sub.add_parser("register")
    r.add_argument("id")
    r.add_argument("--repo")
    r.add_argument("--log")
    r.add_argument("--gpus", type=int)
    r.add_argument("--nodes", help="comma-separated node names")
    r.add_argument("command", nargs="*")
    g = sub.add_parser("progress")
    g.add_argument("id")
    e = sub.add_parser("end")
    e.add_argument("id")
    e.add_argument("end_state")
    e.add_argument("duration_s", type=float)
    e.add_argument("--sm-util", type=float)
    d = sub.add_parser("diagnose")
    d.add_argument("log")
    t = sub.add_parser("track")
    t.add_argument("log")
    o = p.parse_args(argv)
    token = None
    if o.token_file:
        with open(o.token_file) as f:
            token = f.read().strip()
    sm = SchedMate(o.server, token=token, retries=o.retries)
    try:
        if o.op == "health":
            out = sm.health()
        elif o.op == "metrics":
            sys.stdout.write(sm.metrics())
            return 0
        elif o.op == "advise":
            meta = None
            if o.meta:
                with open(o.meta) as f:
                    meta = json.load(f)
            out = sm.advise(o.repo, o.command, meta)
        elif o.op == "register":
            extra = {}
            if o.log:
                extra["log"] = os.path.abspath(o.log)
            if o.gpus:
                extra["gpus"] = o.gpus
            if o.nodes:
                extra["nodes"] = o.nodes.split(",")
            out = sm.register(o.id, o.repo, o.command, **extra)
        elif o.op == "progress":
            out = sm.progress(o.id)
        elif o.op == "end":
            extra = {} if o.sm_util is None else {"sm_util": o.sm_util}
            out = sm.end(o.id, o.end_state, o.duration_s, **extra)
        elif o.op == "diagnose":
            out = sm.diagnose(o.log)
        else:
            out = sm.track(o.log)
    except SchedMateError as err:
        print("serve_client: %s" % err, file=sys.stderr)
        return 2
    except OSError as err:
        print("serve_client: %s: %s" % (o.server, err), file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
