"""An LLM method that reaches its provider only through the broker's Unix socket (standard library)."""

import http.client
import json
import os
import socket
import sys

with open("attacks.json", encoding="utf-8") as fh:
    ATTACKS = {int(k): v for k, v in json.load(fh).items()}
with open("prompt.txt", encoding="utf-8") as fh:
    PROMPT = fh.read().strip()


class UnixConnection(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.environ["MT_EVAL_LLM_SOCKET"])


def ask(model, text, path="/v1/chat/completions", headers=None, extra=None):
    conn = UnixConnection("broker")
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": f"{PROMPT} {text}"}], **(extra or {})})
    conn.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})
    reply = conn.getresponse()
    data = json.loads(reply.read())
    if reply.status != 200:
        return f"REFUSED:{reply.status}:{data['error'].get('code') or data['error'].get('type')}"
    return data["choices"][0]["message"]["content"]


for line in sys.stdin:
    request = json.loads(line)
    attack = ATTACKS.get(request["entry_id"])
    model, path, headers, extra = "test/translator", "/v1/chat/completions", None, None
    if attack == "other_model":
        model = "test/expensive-model"
    elif attack == "other_provider":
        model = "anthropic/claude-3-opus"
    elif attack == "other_route":
        path = "/v1/embeddings"
    elif attack == "own_key":
        headers = {"Authorization": "Bearer stolen-key"}
    elif attack == "extra_fields":  # fields some gateways obey: another provider, plugins, a route
        extra = {"provider": {"order": ["anthropic"]}, "plugins": [{"id": "web"}], "route": "fallback"}
    text = ask(model, request["source"], path, headers, extra)
    print(json.dumps({"entry_id": request["entry_id"], "predicted": text}), flush=True)
