#!/usr/bin/python3
"""A Wi-Fi accessory's own HTTP setup API on its setup hotspot, as the vendors document it and
their firmware serves it, for Shelly Gen1 and Gen2+, Tasmota's Wi-Fi manager, WLED and
ESPHome's captive portal (the facts and their sources: profiles/shelly*.json, tasmota.json,
wled.json, esphome.json, and ../shared/notes/vendor-setup-apis*.md).

It checks the network it is given against the home network it is told about and behaves as
the device would: joins (and reports its address where the vendor's API does) for the right
SSID and passphrase, stays disconnected otherwise. With --on-join, a shell command runs once it
has joined (the lab uses it to move the simulated device onto the home network and announce it
there). Secrets are never logged. Prints "READY port=N" once it listens; "GOT ..." lines say
what it was sent (SSID as given, and whether the passphrase matched).

Needs only /usr/bin/python3.
"""
import argparse
import hmac
import http.server
import json
import subprocess
import sys
import threading
import time
import urllib.parse

MAX_BODY = 8192


def log(message):
    print(message, flush=True)


class Device:
    def __init__(self, args):
        self.args = args
        self.home_ssid = args.home_ssid
        with open(args.home_passphrase_file) as handle:
            self.home_passphrase = handle.read().rstrip("\n")
        self.mac = args.mac.replace(":", "").upper()
        self.lock = threading.Lock()
        self.state = "disconnected"  # connecting, got ip, failed
        self.ssid = None
        self.matched = False
        self.settles_at = 0

    def give(self, ssid, passphrase):
        """Takes a network as the firmware stores it, and starts joining it."""
        matched = ssid == self.home_ssid and hmac.compare_digest(passphrase, self.home_passphrase)
        log(f"GOT ssid={ssid!r} passphrase={'matches' if matched else 'differs'}")
        with self.lock:
            self.ssid = ssid
            self.state = "connecting"
            self.matched = matched
            self.settles_at = time.monotonic() + self.args.join_seconds
        if matched and self.args.on_join:
            # Made in a request's (daemon) thread, it would inherit daemon and die with a device
            # that stops serving its hotspot before it has joined.
            timer = threading.Timer(self.args.join_seconds, self.joined)
            timer.daemon = False
            timer.start()

    def joined(self):
        log("JOINED")
        subprocess.run(self.args.on_join, shell=True, check=False)

    def status(self):
        with self.lock:
            if self.state == "connecting" and time.monotonic() >= self.settles_at:
                self.state = "got ip" if self.matched else "failed"
            return self.state, self.ssid


def make_handler(device, vendor):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *arguments):
            pass  # requests carry passphrases

        def send(self, status, body, content_type="application/json", headers=(), chunked=False):
            data = body if isinstance(body, bytes) else (json.dumps(body) if content_type == "application/json" else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if chunked:
                # As Tasmota's web server sends its pages: in pieces, each with its size.
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
            else:
                self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if chunked:
                for start in range(0, len(data), 40):
                    piece = data[start:start + 40]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True
            else:
                self.wfile.write(data)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(min(length, MAX_BODY)) if length else b""

        def query(self):
            return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query, keep_blank_values=True)

        def route(self):
            return urllib.parse.urlsplit(self.path).path

        def do_GET(self):
            self.handle_request("GET")

        def do_POST(self):
            self.handle_request("POST")

        def handle_request(self, method):
            log(f"REQUEST {method} {self.route()}")
            getattr(self, "serve_" + vendor.replace("-", "_"))(method)

        # Shelly Gen1: /shelly, /settings/sta?enabled=1&ssid=…&key=…, /status.
        def serve_shelly_gen1(self, method):
            route = self.route()
            if route == "/shelly":
                self.send(200, {"type": "SHSW-1", "mac": device.mac, "auth": device.args.auth,
                                "fw": "20230913-112003/v1.14.0-gcb84623", "discoverable": True})
            elif device.args.auth:
                self.send(401, "401 Unauthorized", "text/plain")
            elif route == "/settings/sta":
                fields = self.query()
                if "ssid" not in fields or fields.get("enabled", ["0"])[0] not in ("1", "true"):
                    self.send(400, "Bad enabled or ssid", "text/plain")
                    return
                self.send(200, {"enabled": True, "ssid": fields["ssid"][0], "ipv4_method": "dhcp", "ip": None,
                                "gw": None, "mask": None, "dns": None})
                device.give(fields["ssid"][0], fields.get("key", [""])[0])
            elif route == "/status":
                state, ssid = device.status()
                self.send(200, {"wifi_sta": {"connected": state == "got ip", "ssid": ssid or "",
                                             "ip": device.args.home_ip if state == "got ip" else None}})
            else:
                self.send(404, "Not Found", "text/plain")

        # Shelly Gen2+: JSON-RPC over POST /rpc, or GET /rpc/Method?params.
        def serve_shelly_gen2(self, method):
            route = self.route()
            if route == "/rpc" and method == "POST":
                try:
                    frame = json.loads(self.body() or b"{}")
                except ValueError:
                    self.send(400, {"code": -32700, "message": "Parse error"})
                    return
                name, params, ident = frame.get("method"), frame.get("params") or {}, frame.get("id")
            elif route.startswith("/rpc/"):
                name, ident = route[len("/rpc/"):], None
                params = {key: values[0] for key, values in self.query().items()}
            else:
                self.send(404, "Not Found", "text/plain")
                return
            source = f"shellyplus1-{device.mac.lower()}"
            if name != "Shelly.GetDeviceInfo" and device.args.auth:
                self.send(401, {"id": ident, "src": source, "error": {"code": 401, "message": "unauthorized"}})
                return
            if name == "Shelly.GetDeviceInfo":
                result = {"name": None, "id": source, "mac": device.mac, "model": "SNSW-001X16EU", "gen": 2,
                          "fw_id": "20231107-164738/1.0.8-g8c7bb8d", "ver": "1.0.8", "app": "Plus1",
                          "auth_en": device.args.auth, "auth_domain": source if device.args.auth else None}
            elif name == "WiFi.SetConfig":
                station = (params.get("config") or {}).get("sta") or {}
                if not isinstance(station.get("ssid"), str) or not station.get("ssid"):
                    self.send(200, {"id": ident, "src": source,
                                    "error": {"code": -103, "message": "Invalid argument 'ssid'!"}})
                    return
                result = {"restart_required": False}
                device.give(station["ssid"], station.get("pass") or "")
            elif name == "WiFi.GetStatus":
                state, ssid = device.status()
                result = {"sta_ip": device.args.home_ip if state == "got ip" else None,
                          "status": "disconnected" if state == "failed" else state, "ssid": ssid, "rssi": -52 if state == "got ip" else 0,
                          "ap_client_count": 1}
            else:
                self.send(404, {"id": ident, "src": source,
                                "error": {"code": 404, "message": f"No handler for {name}"}})
                return
            self.send(200, {"id": ident, "src": source, "result": result})

        # Tasmota's Wi-Fi manager: GET /wi?s1=…&p1=…&save= tests the network for a while with
        # the hotspot up; the next page says whether it joined, and after a success it restarts.
        def serve_tasmota(self, method):
            route = self.route()
            fields = self.query()
            if route == "/wi" and "save" in fields:
                self.send(200, "<div>Trying to connect device to network</div>"
                               "<script>setTimeout(function(){location.href='.';},10000);</script>", "text/html",
                          chunked=True)
                device.give(fields.get("s1", [""])[0], fields.get("p1", [""])[0])
                return
            state, ssid = device.status()
            if state == "got ip":
                self.send(200, f"<div>Successful WiFi Connection</div><div><a href='http://{device.args.home_ip}'>"
                               f"http://{device.args.home_ip}</a></div>", "text/html", chunked=True)
                self.leave_hotspot()
            elif state == "failed":
                self.send(200, f"<div>Connect failed to {ssid}</div><div>Please, check your credentials</div>"
                               "<form action='wi'><input id='s1'><input id='p1'><button name='save'>Save</button></form>",
                          "text/html", chunked=True)
            elif state == "connecting":
                self.send(200, "<div>Trying to connect device to network</div>", "text/html", chunked=True)
            else:
                self.send(200, "<form method='get' action='wi'><input id='s1' placeholder='SSID1'>"
                               "<input id='p1' type='password'><button name='save'>Save</button></form>", "text/html",
                          chunked=True)

        # WLED: GET /json/info, POST /json/cfg {"nw": {"ins": [{"ssid", "psk"}]}}.
        def serve_wled(self, method):
            route = self.route()
            if route == "/json/info":
                self.send(200, {"ver": "0.14.4", "vid": 2405180, "mac": device.mac.lower(), "ip": "4.3.2.1",
                                "name": "WLED", "arch": "esp32"})
            elif route == "/json/cfg" and method == "POST":
                try:
                    config = json.loads(self.body() or b"{}")
                    network = config["nw"]["ins"][0]
                except (ValueError, KeyError, IndexError, TypeError):
                    self.send(400, {"error": 9})
                    return
                self.send(200, {"success": True})
                device.give(network.get("ssid", ""), network.get("psk", ""))
                if config.get("rb"):
                    self.leave_hotspot()
            else:
                self.send(404, "Not Found", "text/plain")

        # ESPHome's captive portal: GET /config.json, /wifisave?ssid=…&psk=… (302 to /?save).
        def serve_esphome(self, method):
            route = self.route()
            if route == "/config.json":
                self.send(200, {"name": "living-room-plug", "mac": ":".join(
                    device.mac[i:i + 2] for i in range(0, 12, 2)), "aps": [{}]})
            elif route == "/wifisave":
                fields = self.query()
                self.send(302, b"", "text/plain", headers=[("Location", "/?save")])
                device.give(fields.get("ssid", [""])[0], fields.get("psk", [""])[0])
                self.leave_hotspot()
            else:
                self.send(200, "<form action='/wifisave'><input name='ssid'><input name='psk'></form>",
                          "text/html")

        def leave_hotspot(self):
            """A device that restarts onto the home network: its hotspot's server stops."""
            if device.args.leaves_hotspot:
                timer = threading.Timer(0.5, lambda: (log("LEAVING"), self.server.shutdown()))
                timer.daemon = False
                timer.start()

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vendor", required=True, choices=["shelly-gen1", "shelly-gen2", "tasmota", "wled", "esphome"])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--home-ssid", required=True)
    parser.add_argument("--home-passphrase-file", required=True)
    parser.add_argument("--home-ip", default="192.168.1.43", help="its address once joined, where its API says")
    parser.add_argument("--mac", default="A8:03:2A:B1:23:45")
    parser.add_argument("--auth", action="store_true", help="its web interface is password-protected")
    parser.add_argument("--join-seconds", type=float, default=1.0)
    parser.add_argument("--leaves-hotspot", action="store_true",
                        help="stop serving once it has the network, as a device that restarts does")
    parser.add_argument("--on-join", help="a shell command run once, when it has joined")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer((args.address, args.port), make_handler(Device(args), args.vendor))
    log(f"READY port={server.server_address[1]} vendor={args.vendor}")
    server.serve_forever()
    log("STOPPED")


if __name__ == "__main__":
    sys.exit(main())
