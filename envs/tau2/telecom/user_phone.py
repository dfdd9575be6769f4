"""The simulated phone's behaviour under the user's tools (upstream `TelecomUserTools`'
internals): the fixed tables, the state derived on each question (status bar, network
search, speed, MMS) and the state changes tools and task functions share.

Connectivity is not stored as truth but recomputed: `simulate_network_search` derives
connection status, technology and signal from the SIM, the network mode preference,
the surroundings, airplane mode, the APN and the line; mobile data, the speed test and
MMS are derived from that on each question.
"""

from __future__ import annotations

from envs.tau2.base import Tau2Environment
from envs.tau2.telecom.user_data_model import (
    APNNames,
    AppPermissions,
    NetworkModePreference,
    NetworkStatus,
    NetworkTechnology,
    PerformanceLevel,
    PhoneDevice,
    SignalStrength,
    SimStatus,
    TelecomUserDB,
    UserSurroundings,
    VpnDetails,
)

# -- fixed tables ----------------------------------------------------------------------

#: what a freshly connected VPN reports (a copy per connection: break_vpn degrades it)
DEFAULT_VPN = VpnDetails(server_address="192.168.1.1", protocol="OpenVPN",
                         server_performance=PerformanceLevel.EXCELLENT)
SIGNAL_ICONS = {
    SignalStrength.NONE: "📵 No Signal",
    SignalStrength.POOR: "📶¹ Poor",
    SignalStrength.FAIR: "📶² Fair",
    SignalStrength.GOOD: "📶³ Good",
    SignalStrength.EXCELLENT: "📶⁴ Excellent",
}
#: the technology each preference connects to (4G/5G-preferred falls back to 4G)
PREFERRED_TECHNOLOGY = {
    NetworkModePreference.FOUR_G_ONLY: NetworkTechnology.FOUR_G,
    NetworkModePreference.THREE_G_ONLY: NetworkTechnology.THREE_G,
    NetworkModePreference.TWO_G_ONLY: NetworkTechnology.TWO_G,
}
#: download range (Mbps) per technology; the test reports the midpoint
SPEED_RANGE = {
    NetworkTechnology.TWO_G: (0.1, 0.4),
    NetworkTechnology.THREE_G: (1.0, 5.0),
    NetworkTechnology.FOUR_G: (10.0, 100.0),
    NetworkTechnology.FIVE_G: (50.0, 500.0),
    NetworkTechnology.NONE: (0.0, 0.0),
}
SIGNAL_FACTOR = {
    SignalStrength.NONE: 0.0,
    SignalStrength.POOR: 0.2,
    SignalStrength.FAIR: 0.5,
    SignalStrength.GOOD: 0.8,
    SignalStrength.EXCELLENT: 1.0,
}
#: (upper bound, label, advice), checked in order
SPEED_BANDS = (
    (1, "Very Poor", "Connection is very slow. Basic web browsing might be difficult."),
    (5, "Poor", "Connection is slow. Web browsing may be sluggish, streaming difficult."),
    (25, "Fair",
     "Connection is okay for web browsing and some standard definition streaming."),
    (100, "Good", "Connection is good for most activities, including HD streaming."),
    (float("inf"), "Excellent", "Connection is very fast."),
)
SIM_MESSAGES = {
    SimStatus.ACTIVE: "Your SIM card is active and working.",
    SimStatus.MISSING: "No SIM card detected in the phone.",
    SimStatus.LOCKED_PIN: "The SIM card is locked with a PIN code.",
    SimStatus.LOCKED_PUK: "The SIM card is locked with a PUK code.",
}


def on_off(flag: bool) -> str:
    return "ON" if flag else "OFF"


def yes_no(flag: bool) -> str:
    return "Yes" if flag else "No"


def granted_permissions(permissions: AppPermissions) -> list[str]:
    return [name for name, allowed in permissions.model_dump().items() if allowed]


class TelecomPhone(Tau2Environment):
    """The phone itself: what `TelecomUser`'s tools and the task functions read and
    change."""

    state: TelecomUserDB

    @property
    def device(self) -> PhoneDevice:
        return self.state.device

    @property
    def surroundings(self) -> UserSurroundings:
        return self.state.surroundings

    # -- derived state -----------------------------------------------------------------

    def _status_bar(self) -> str:
        device = self.device
        icons = []
        if device.airplane_mode:
            icons.append("✈\ufe0f Airplane Mode")
        else:
            icons.append(SIGNAL_ICONS[device.network_signal_strength])
            has_network = device.network_technology_connected != NetworkTechnology.NONE
            if has_network:
                icons.append(device.network_technology_connected.value)
            if device.data_enabled and has_network:
                icons.append("📱 Data Enabled")
                if device.data_saver_mode:
                    icons.append("🔽 Data Saver")
            else:
                icons.append("📵 Data Disabled")
        if device.wifi_enabled and device.wifi_connected:
            icons.append(f"📡 Connected to {device.wifi_ssid}" if device.wifi_ssid
                         else "📡 Enabled")
        if device.vpn_connected:
            icons.append("🔒 VPN Connected")
        icons.append(f"🔋 {device.battery_level}%")
        return " | ".join(icons)

    def _with_status_bar(self, message: str) -> str:
        """Most writes answer with what changed, then the status bar as it now reads."""
        return f"{message}\nStatus Bar: {self._status_bar()}"

    def _sim_status(self) -> SimStatus:
        return SimStatus.MISSING if self.device.sim_card_missing else self.device.sim_card_status

    def _mobile_data_working(self) -> bool:
        """Data flows unless: airplane mode, no signal or service, abroad without both
        the phone's roaming switch and the line's roaming, data off, or limit used up."""
        device, where = self.device, self.surroundings
        if device.airplane_mode or device.network_signal_strength == SignalStrength.NONE:
            return False
        if device.network_connection_status == NetworkStatus.NO_SERVICE:
            return False
        if where.is_abroad and not (device.roaming_enabled and where.roaming_allowed):
            return False
        return device.data_enabled and not where.mobile_data_usage_exceeded

    def _speed(self) -> tuple[float | None, str]:
        """(Mbps, band) of a mobile-data speed test: the technology's midpoint scaled
        by signal, by 0.1 behind a poorly performing VPN and by 0.2 with data saver."""
        device = self.device
        if not self._mobile_data_working():
            return None, "No Connection"
        factor = 1.0
        vpn = device.vpn_details
        if device.vpn_connected and vpn and vpn.server_performance == PerformanceLevel.POOR:
            factor = 0.1
        if device.data_saver_mode:
            factor *= 0.2
        low, high = SPEED_RANGE[device.network_technology_connected]
        speed = round((low + high) / 2.0 * SIGNAL_FACTOR[device.network_signal_strength]
                      * factor, 2)
        label = next(label for bound, label, _ in SPEED_BANDS if speed < bound)
        return speed, label

    def _can_send_mms(self) -> bool:
        """MMS needs working mobile data on 3G or better, no MMS-over-Wi-Fi calling (the
        carrier lacks it), an MMSC URL, and a messaging app allowed SMS and storage."""
        device = self.device
        if not self._mobile_data_working():
            return False
        if device.network_technology_connected == NetworkTechnology.TWO_G:
            return False
        if device.wifi_calling_enabled and device.wifi_calling_mms_over_wifi:
            return False
        if device.active_apn_settings.mmsc_url is None:
            return False
        app = device.app_statuses.get("messaging")
        return app is not None and app.permissions.storage and app.permissions.sms

    def simulate_network_search(self) -> None:
        """Re-derive connection status, technology and signal (init function too)."""
        device, where = self.device, self.surroundings
        connected = (self._sim_status() == SimStatus.ACTIVE and not device.airplane_mode
                     and device.active_apn_settings.apn_name != APNNames.BROKEN
                     and where.line_active)
        if not connected:
            device.network_connection_status = NetworkStatus.NO_SERVICE
            device.network_technology_connected = NetworkTechnology.NONE
            device.network_signal_strength = SignalStrength.NONE
            return
        preference = device.network_mode_preference
        if preference == NetworkModePreference.FOUR_G_5G_PREFERRED:
            five_g = where.signal_strength.get(NetworkTechnology.FIVE_G, SignalStrength.NONE)
            technology = (NetworkTechnology.FOUR_G if five_g == SignalStrength.NONE
                          else NetworkTechnology.FIVE_G)
        else:
            # compared with ==, as upstream: anything else (a value stored unconverted)
            # falls back to 4G
            technology = next((tech for pref, tech in PREFERRED_TECHNOLOGY.items()
                               if preference == pref), NetworkTechnology.FOUR_G)
        device.network_connection_status = NetworkStatus.CONNECTED
        device.network_technology_connected = technology
        device.network_signal_strength = where.signal_strength.get(technology,
                                                                   SignalStrength.NONE)

    # -- state changes shared by tools and task functions -------------------------------

    def _toggle_airplane_mode(self) -> bool:
        device = self.device
        turning_on = not device.airplane_mode
        device.airplane_mode = turning_on
        if not turning_on:
            device.network_connection_status = NetworkStatus.SEARCHING
        if turning_on or device.wifi_enabled:
            device.wifi_connected = False
            device.wifi_ssid = None
            device.wifi_signal_strength = SignalStrength.NONE
        if turning_on:
            self._disconnect_vpn()
        self.simulate_network_search()
        return device.airplane_mode

    def _toggle_data(self) -> bool:
        self.device.data_enabled = not self.device.data_enabled
        self.simulate_network_search()
        return self.device.data_enabled

    def _toggle_roaming(self) -> bool:
        self.device.roaming_enabled = not self.device.roaming_enabled
        self.simulate_network_search()
        return self.device.roaming_enabled

    def _toggle_data_saver_mode(self) -> bool:
        self.device.data_saver_mode = not self.device.data_saver_mode
        return self.device.data_saver_mode

    def _connect_vpn(self) -> bool:
        """Connect with fresh default details; False if a VPN was already connected."""
        if self.device.vpn_connected:
            return False
        self.device.vpn_connected = True
        self.device.vpn_details = DEFAULT_VPN.model_copy(deep=True)
        return True

    def _disconnect_vpn(self) -> bool:
        if not self.device.vpn_connected:
            return False
        self.device.vpn_connected = False
        self.device.vpn_details = None
        return True
