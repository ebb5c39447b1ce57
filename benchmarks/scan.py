"""Benchmark: discovery and grouping of a 50 000-URL sitemap (issue 39: under 5 s).

Serves a shop-like site on loopback: ``/robots.txt`` names a sitemap index that lists one
gzipped sitemap of 50 000 URLs (the protocol's maximum), a mix of templates: 30 000
products ``/product/<slug>-<n>``, 10 000 blog posts ``/blog/<yyyy>/<mm>/<slug>``, 8 000
listing pages ``/category/<name>/<page>``, 1 990 user pages ``/u/<id>/reviews`` and 10 fixed
pages. Times ``discover`` (robots.txt, the index, the gzipped sitemap streamed,
decompressed under the cap and parsed with defusedxml, scope and de-duplication), then
``group_templates`` and ``sample_templates`` over every URL, and prints each time (median
of N rounds) and the templates found.

Usage: ``python benchmarks/scan.py [-n 5]`` from the repository root.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent

_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
_WORDS = ("red", "blue", "wool", "linen", "trail", "city", "rain", "sun", "day", "night")
_FIXED = ("/", "/about", "/contact", "/help", "/cart", "/search", "/terms", "/privacy",
          "/careers", "/press")


def _paths(count: int) -> list[str]:
    paths = list(_FIXED)
    paths += [f"/product/{_WORDS[i % 10]}-{_WORDS[i // 10 % 10]}-{i}" for i in range(30_000)]
    paths += [f"/blog/{2015 + i % 10}/{1 + i % 12:02d}/{_WORDS[i % 7]}-post-{i}"
              for i in range(10_000)]
    paths += [f"/category/{_WORDS[i % 10]}/{i // 10 + 1}" for i in range(8_000)]
    paths += [f"/u/{100_000 + i}/reviews" for i in range(1_990)]
    assert len(paths) == count
    return paths


def _xml(root: str, child: str, urls: list[str]) -> bytes:
    element = ET.Element(root, xmlns=_NS)
    for url in urls:
        ET.SubElement(ET.SubElement(element, child), "loc").text = url
    data: bytes = ET.tostring(element, encoding="utf-8", xml_declaration=True)
    return data


def _serve(files: dict[str, tuple[bytes, str]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body, kind = files.get(self.path, (b"not found", "text/plain"))
            self.send_response(200 if self.path in files else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab._discovery import MAX_SITEMAP_URLS, discover, group_templates, sample_templates

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="rounds (default 5)")
    rounds = parser.parse_args().n
    files: dict[str, tuple[bytes, str]] = {"/": (b"<!doctype html><title>home</title>",
                                                 "text/html")}
    server = _serve(files)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    urls = [origin + path for path in _paths(MAX_SITEMAP_URLS)]
    sitemap = gzip.compress(_xml("urlset", "url", urls))
    files["/robots.txt"] = (f"Sitemap: {origin}/sitemap-index.xml\n".encode(), "text/plain")
    files["/sitemap-index.xml"] = (_xml("sitemapindex", "sitemap",
                                        [f"{origin}/sitemap-1.xml.gz"]), "application/xml")
    files["/sitemap-1.xml.gz"] = (sitemap, "application/gzip")
    print(f"sitemap: {len(urls)} URLs, {len(sitemap) / 1e6:.1f} MB gzipped")
    timings: dict[str, list[float]] = {"discover": [], "group": [], "sample": [], "total": []}
    for _ in range(rounds):
        start = time.perf_counter()
        found = discover(origin + "/", max_pages=MAX_SITEMAP_URLS)
        discovered = time.perf_counter()
        templates = group_templates(found.pages)
        grouped = time.perf_counter()
        sample = sample_templates(templates, 3)
        done = time.perf_counter()
        assert len(found.pages) == MAX_SITEMAP_URLS, len(found.pages)
        for name, seconds in (("discover", discovered - start), ("group", grouped - discovered),
                              ("sample", done - grouped), ("total", done - start)):
            timings[name].append(seconds)
    server.shutdown()
    for name, values in timings.items():
        print(f"{name:<9} median {statistics.median(values):.2f} s "
              f"(min {min(values):.2f}, max {max(values):.2f}, {rounds} rounds)")
    print(f"templates: {len(sample)}: " + ", ".join(sorted(sample)))


if __name__ == "__main__":
    main()
