#!/usr/bin/env python3
"""Provisions a device over HTTP with esp-protocomm (PyPI), an independent security 1 client,
to cross-check lab/accessories/esp_prov_device.py against code that is not ours.

Runs in the venv scripts/setup.sh makes (.build/python-peers). Prints one JSON line:
{"outcome": "connected" | "failed" | "wrong-pop" | "error", "detail": ...}; exits 1 only on
"error" (the exchange itself broke), 0 when the device gave a verdict or refused the PoP.
"""
import argparse
import asyncio
import http.client
import json
import sys

from esp_protocomm import Security1, SecurityError, establish_session, provision_wifi
from esp_protocomm.wifi import WifiState


class HttpTransport:
    """esp-protocomm's Transport over HTTP: POST /<endpoint>, the session cookie echoed."""

    def __init__(self, host, port):
        self.connection = http.client.HTTPConnection(host, port, timeout=10)
        self.cookie = None

    async def send(self, endpoint, data):
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/plain"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        self.connection.request("POST", "/" + endpoint, body=data, headers=headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status} on {endpoint}")
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";")[0]
        return body


async def run(args):
    with open(args.pop_file) as f:
        pop = f.read().rstrip("\n")
    with open(args.passphrase_file) as f:
        passphrase = f.read().rstrip("\n")
    transport = HttpTransport(args.host, args.port)
    try:
        security = await establish_session(transport, Security1(pop))
    except SecurityError as error:
        return {"outcome": "wrong-pop", "detail": str(error)}
    status = await provision_wifi(transport, security, args.ssid, passphrase, timeout=20, poll_interval=0.1)
    if status.state is WifiState.CONNECTED:
        return {"outcome": "connected", "detail": status.describe()}
    return {"outcome": "failed", "detail": status.describe()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pop-file", required=True)
    parser.add_argument("--ssid", required=True)
    parser.add_argument("--passphrase-file", required=True)
    args = parser.parse_args()
    try:
        result = asyncio.run(run(args))
    except Exception as error:
        result = {"outcome": "error", "detail": f"{type(error).__name__}: {error}"}
    print(json.dumps(result))
    sys.exit(1 if result["outcome"] == "error" else 0)


if __name__ == "__main__":
    main()
