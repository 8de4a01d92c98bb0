#!/usr/bin/env python3
"""A small OpenAI-compatible server that replays recorded answers.

It stands in for vLLM, llama.cpp's server or Ollama in the tests (no model
weights are needed): POST /v1/chat/completions and /v1/embeddings are
answered from a script of rules, and every request is logged.

    replay.py --script RULES.json --port-file FILE [--log REQUESTS.jsonl]

It listens on 127.0.0.1 on a port the system picks, writes the port into
FILE once it accepts connections, and serves until SIGTERM or SIGINT.

RULES.json is a list of rules, tried in order; the first whose conditions
hold answers the request:

    {"endpoint": "chat" | "embeddings",   (default "chat")
     "last": "text" | ["a", "b"],         substrings of the last message
     "body": "text" | [...],              substrings of the whole request
     "not_last": "text" | [...],          substrings the last message lacks
     "times": N,                          use the rule N times only
     one answer:
     "content": "...",                    assistant message content
     "tool": {"name": N, "arguments": {...} | "..."},   a native tool call
     "status": 500 | 429 | 400 ...,       an HTTP error (with "retry_after")
     "raw": "...",                        a raw 200 body (not OpenAI-shaped)
     "embedding": [...] | "dims": N,      an embedding (dims: derived from
                                          the input's hash)
     "hang": true,                        never answer (until the client
                                          gives up)
     "delay": S,                          wait S seconds before answering
     "drip": S,                           send the body a byte every S s
     "truncate": N,                       promise the whole body, send N
                                          bytes, close
     "finish_reason": "length",           finish reason of a content answer
     "usage": [P, C]}                     prompt / completion tokens

A request that no rule answers gets 404 (and is logged as such).
Standard library only.
"""
import argparse
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def as_list(v):
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


class Rules:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.rules = json.load(f)
        self.used = [0] * len(self.rules)
        self.lock = threading.Lock()

    def pick(self, endpoint, body_text, last):
        with self.lock:
            for i, r in enumerate(self.rules):
                if r.get("endpoint", "chat") != endpoint:
                    continue
                if "times" in r and self.used[i] >= r["times"]:
                    continue
                if not all(s in last for s in as_list(r.get("last"))):
                    continue
                if not all(s in body_text for s in as_list(r.get("body"))):
                    continue
                if any(s in last for s in as_list(r.get("not_last"))):
                    continue
                self.used[i] += 1
                return i, r
        return -1, None


def embedding_of(text, dims):
    out = []
    i = 0
    while len(out) < dims:
        h = hashlib.sha256((text + "#" + str(i)).encode()).digest()
        for k in range(0, len(h), 2):
            out.append((h[k] * 256 + h[k + 1]) / 32768.0 - 1.0)
        i += 1
    return out[:dims]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out as two writes: without this, Nagle's
        # algorithm and the client's delayed ACK add 40 ms to each answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def send_body(self, status, body, rule, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if rule and "retry_after" in rule:
            self.send_header("Retry-After", str(rule["retry_after"]))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if rule and "truncate" in rule:
            self.wfile.write(data[: rule["truncate"]])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if rule and "drip" in rule:
            for b in data:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(rule["drip"])
            return
        self.wfile.write(data)

    def do_POST(self):
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        text = raw.decode("utf-8", "replace")
        try:
            req = json.loads(text)
        except ValueError:
            req = None
        path = self.path.rstrip("/")
        if path.endswith("/chat/completions"):
            endpoint = "chat"
        elif path.endswith("/embeddings"):
            endpoint = "embeddings"
        else:
            endpoint = "other"
        last = ""
        if isinstance(req, dict):
            if endpoint == "chat" and isinstance(req.get("messages"), list) \
                    and req["messages"]:
                last = str(req["messages"][-1].get("content", ""))
            elif endpoint == "embeddings":
                last = str(req.get("input", ""))
        idx, rule = srv.rules.pick(endpoint, text, last)
        with srv.log_lock:
            srv.log.write(json.dumps({
                "t": time.time(), "path": self.path, "rule": idx,
                "auth": self.headers.get("Authorization"),
                "request": req if req is not None else text}) + "\n")
            srv.log.flush()
        if rule is None:
            self.send_body(404, json.dumps({"error": "no rule"}), None)
            return
        if rule.get("hang"):
            time.sleep(3600)
            return
        if "delay" in rule:
            time.sleep(rule["delay"])
        if "status" in rule:
            self.send_body(rule["status"],
                           json.dumps({"error": {"message": "replayed",
                                                 "code": rule["status"]}}),
                           rule)
            return
        if "raw" in rule:
            self.send_body(200, rule["raw"], rule)
            return
        usage = rule.get("usage", [100, 20])
        if endpoint == "embeddings":
            emb = rule.get("embedding")
            if emb is None:
                emb = embedding_of(last, int(rule.get("dims", 64)))
            body = {"object": "list", "model": req.get("model"),
                    "data": [{"object": "embedding", "index": 0,
                              "embedding": emb}],
                    "usage": {"prompt_tokens": usage[0],
                              "total_tokens": usage[0]}}
            self.send_body(200, json.dumps(body), rule)
            return
        msg = {"role": "assistant", "content": rule.get("content")}
        if "tool" in rule:
            args = rule["tool"].get("arguments", {})
            msg["content"] = None
            msg["tool_calls"] = [{
                "id": "call_1", "type": "function",
                "function": {"name": rule["tool"]["name"],
                             "arguments": args if isinstance(args, str)
                             else json.dumps(args)}}]
        body = {"id": "replay-%d" % idx, "object": "chat.completion",
                "created": int(time.time()),
                "model": req.get("model") if isinstance(req, dict) else None,
                "choices": [{"index": 0, "message": msg,
                             "finish_reason": rule.get("finish_reason",
                                                       "stop")}],
                "usage": {"prompt_tokens": usage[0],
                          "completion_tokens": usage[1],
                          "total_tokens": usage[0] + usage[1]}}
        self.send_body(200, json.dumps(body), rule)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", default=os.devnull)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.rules = Rules(a.script)
    srv.log = open(a.log, "a", encoding="utf-8")
    srv.log_lock = threading.Lock()

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()
    srv.log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
