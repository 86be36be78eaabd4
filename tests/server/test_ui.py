"""The web UI's bundle is served at `/` with no token, with a strict Content-Security-Policy;
hashed assets are cached for good; the API's routes still win over files."""

from __future__ import annotations

import re

import httpx

from nodeloom.server.ui import BUNDLE

from .conftest import Server


def test_the_page_is_served_without_a_token_and_loads_only_its_own_files(server: Server):
    with server.client(token=None) as anonymous:
        page = anonymous.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert page.text == (BUNDLE / "index.html").read_text()
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["cache-control"] == "no-cache"

        scripts = re.findall(r'src="(/assets/[^"]+\.js)"', page.text)
        assert scripts, page.text
        for path in scripts:
            asset = anonymous.get(path)
            assert asset.status_code == 200
            assert "javascript" in asset.headers["content-type"]
            assert "immutable" in asset.headers["cache-control"]


def test_api_paths_stay_the_api_s_and_need_a_token(server: Server, api: httpx.Client):
    with server.client(token=None) as anonymous:
        assert anonymous.get("/api/flows").status_code == 401
        missing = anonymous.get("/assets/nope.js")
        assert missing.status_code == 404
    unknown = api.get("/api/nope")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "not_found"
    assert api.get("/health").json()["status"] == "ok"
