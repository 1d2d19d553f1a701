"""Headless Chromium for the browser tests, with the network off (Debian chromium,
chromium-driver, python3-selenium). Run with /usr/bin/python3."""
import os
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def chromium(offline=True):
    """offline: also emulate no network at all (file:// reports); without it only loopback is
    reachable (the served pages)."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,1600"):
        opts.add_argument(flag)
    opts.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="ndt-chromium-"))
    # Every host but loopback resolves nowhere: a page that fetched anything would fail.
    opts.add_argument("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    if offline:
        try:
            driver.set_network_conditions(offline=True, latency=0, download_throughput=0,
                                          upload_throughput=0)
        except Exception:  # older drivers: the resolver and proxy rules above still hold
            pass
    return driver
