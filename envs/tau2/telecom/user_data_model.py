"""τ²-bench telecom data model, the user's side (upstream
`tau2/domains/telecom/user_data_model.py`): `TelecomUserDB`, the phone's settings
(`device`) and the user's situation (`surroundings`).

The state is the
phone's settings (`device`) plus facts about the user's situation (`surroundings`):
whether they are abroad, the signal per network technology where they stand, and the
three facts the agent's database decides — line active, roaming allowed, data limit
exceeded — which `TelecomAgent.sync_tools` copies in after every step, together with
a pending payment request.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    """Upstream's models reject unknown keys; so do ours (task data included)."""

    model_config = ConfigDict(extra="forbid")


# Enum class and member names are upstream's: `check_vpn_status` prints a dict whose
# repr shows them (e.g. <PerformanceLevel.EXCELLENT: 'excellent'>).


class SimStatus(StrEnum):
    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(StrEnum):
    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(StrEnum):
    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(StrEnum):
    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(StrEnum):
    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(StrEnum):
    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(StrEnum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(_Record):
    """The active access point configuration (the MMSC URL is what MMS needs)."""

    apn_name: APNNames = Field(default=APNNames.INTERNET,
                               description="APN name: 'internet' works.")
    reset_at_reboot: bool = Field(default=False,
                                  description="Restore the defaults at the next reboot.")
    mms_apn: str | None = Field(default="mms", description="APN used for MMS traffic.")
    mmsc_url: str | None = Field(default="http://mms.carrier.com/mms/wapenc",
                                 description="MMS service centre URL; MMS fails without it.")
    mms_proxy: str | None = Field(default=None,
                                  description="MMS proxy address, if the carrier uses one.")
    mms_port: int | None = Field(default=None,
                                 description="MMS proxy port, if the carrier uses one.")


class VpnDetails(_Record):
    server_address: str | None = None
    protocol: str | None = None
    server_performance: PerformanceLevel = PerformanceLevel.UNKNOWN


class AppPermissions(_Record):
    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


class AppStatus(_Record):
    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(app_name="messaging",
                               permissions=AppPermissions(sms=True, storage=True, phone=True)),
        "browser": AppStatus(app_name="browser",
                             permissions=AppPermissions(network=True, storage=True)),
    }


class PhoneDevice(_Record):
    """The phone's settings and its last network-search outcome (upstream
    `MockPhoneAttributes`)."""

    sim_card_status: SimStatus = SimStatus.ACTIVE
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = SignalStrength.GOOD
    network_technology_connected: NetworkTechnology = NetworkTechnology.FIVE_G
    network_connection_status: NetworkStatus = NetworkStatus.CONNECTED
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = NetworkModePreference.FOUR_G_5G_PREFERRED
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = SignalStrength.NONE
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps)


class PaymentRequest(_Record):
    """A bill the agent asked the user to pay; `paid` is set by `make_payment`."""

    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {
        NetworkTechnology.TWO_G: SignalStrength.POOR,
        NetworkTechnology.THREE_G: SignalStrength.FAIR,
        NetworkTechnology.FOUR_G: SignalStrength.GOOD,
        NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT,
    }


class UserSurroundings(_Record):
    """Who the user is and where: set by the task, then kept in step with the agent DB."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(
        default_factory=_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


class TelecomUserDB(_Record):
    device: PhoneDevice = Field(default_factory=PhoneDevice)
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings)
