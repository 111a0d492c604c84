"""Device classes from User-Agents and regions from a header or address ranges (cubes/frontend/audience.py)."""

from __future__ import annotations

import pytest

from cubes.frontend.audience import RegionTable, device_class
from shared.errors import ConfigError
from shared.messages import Device

IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
ANDROID_PHONE = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"
ANDROID_TABLET = "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
IPAD = "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
HEADLESS = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/124.0 Safari/537.36"


@pytest.mark.parametrize(
    ("ua", "device"),
    [
        (IPHONE, Device.mobile),
        (ANDROID_PHONE, Device.mobile),
        (ANDROID_TABLET, Device.tablet),
        (IPAD, Device.tablet),
        (DESKTOP, Device.desktop),
        (HEADLESS, Device.desktop),
        ("", Device.desktop),
        ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", None),
        ("Googlebot/2.1 (+http://www.google.com/bot.html)", None),
        ("TurbocubesBot/0.1", None),
        ("Mozilla/5.0 (compatible; bingbot/2.0)", None),
    ],
)
def test_device_class(ua: str, device: Device | None) -> None:
    assert device_class(ua) == device


def test_region_from_header_then_most_specific_range_then_unknown() -> None:
    table = RegionTable(["10.0.0.0/8 russia", "10.1.0.0/16 moscow", "2001:db8::/32 spb"])
    assert table.region("Kazan", "10.1.2.3") == "kazan"
    assert table.region(None, "10.1.2.3") == "moscow"
    assert table.region(None, "10.2.0.1") == "russia"
    assert table.region(None, "::ffff:10.1.0.9") == "moscow"
    assert table.region(None, "2001:db8:1::5") == "spb"
    assert table.region(None, "192.0.2.1") == "unknown"
    assert table.region("not a region!", None) == "unknown"
    assert table.region(None, "not an address") == "unknown"


@pytest.mark.parametrize("line", ["10.0.0.0/8", "nonsense moscow", "10.0.0.0/8 Moscow City", "10.0.0.0/8 бад"])
def test_bad_range_line_names_the_key(line: str) -> None:
    with pytest.raises(ConfigError, match=r"search\.region_ranges"):
        RegionTable([line])
