"""τ²-bench telecom tools, the user's side (upstream `tau2/domains/telecom/user_tools.py`,
`TelecomUserTools`): the simulated phone in the user's hand. In telecom the *user*
holds tools too; `TelecomAgent.sync_tools` copies the account's facts into its state.

Connectivity is not stored as truth but recomputed: `simulate_network_search` derives
connection status, technology and signal from the SIM, the network mode preference,
the surroundings, airplane mode, the APN and the line; mobile data, the speed test and
MMS are derived from that on each question. The fields, the derivation order and every
message (status-bar emoji included) follow upstream v0.2.0, because the user simulator
reads these strings and the task assertions read the derived values. Like upstream,
only some writes re-run the network search (toggling data saver, Wi-Fi or Wi-Fi
calling does not), and a line resumed by the agent shows service only after the next
search, e.g. a reboot.
"""

from __future__ import annotations

from typing import Any, Literal

from envs.base import tool
from envs.tau2 import data
from envs.tau2.base import Tau2Environment
from envs.tau2.telecom.user_data_model import (
    APNNames,
    APNSettings,
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


def _on_off(flag: bool) -> str:
    return "ON" if flag else "OFF"


def _yes_no(flag: bool) -> str:
    return "Yes" if flag else "No"


def _granted(permissions: AppPermissions) -> list[str]:
    return [name for name, allowed in permissions.model_dump().items() if allowed]


class TelecomUser(Tau2Environment):
    """The phone in the user's hand: what the user simulator can check and change."""

    toolkit = "telecom_user"
    toolkit_class = "TelecomUserTools"
    name = "tau2/telecom_user"
    description = ("A customer's simulated mobile phone: status bar, network, SIM, mobile "
                   "data, roaming, APN, Wi-Fi, VPN, apps and MMS, and bill payment.")
    requestor = "user"
    State = TelecomUserDB
    state: TelecomUserDB

    @classmethod
    def default_state(cls) -> TelecomUserDB:
        return TelecomUserDB.model_validate(data.load_db("telecom", "user_db"))

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

    # -- status bar and network --------------------------------------------------------

    @tool
    def check_status_bar(self) -> str:
        """Look at the icons at the top of your phone's screen: signal bars and network
        type, whether mobile data is on (and data saver), airplane mode, Wi-Fi, VPN and
        battery level."""
        return f"Status Bar: {self._status_bar()}"

    @tool
    def check_network_status(self) -> str:
        """Open your phone's network settings summary: airplane mode, SIM status, cellular
        connection, signal and network type, mobile data and data roaming switches, and
        Wi-Fi."""
        device = self.device
        lines = [
            f"Airplane Mode: {_on_off(device.airplane_mode)}",
            f"SIM Card Status: {self._sim_status().value}",
            f"Cellular Connection: {device.network_connection_status.value}",
            f"Cellular Signal: {device.network_signal_strength.value}",
            f"Cellular Network Type: {device.network_technology_connected.value}",
            f"Mobile Data Enabled: {_yes_no(device.data_enabled)}",
            f"Data Roaming Enabled: {_yes_no(device.roaming_enabled)}",
            f"Wi-Fi Radio: {_on_off(device.wifi_enabled)}",
            f"Wi-Fi Connected: {_yes_no(device.wifi_connected)}",
        ]
        if device.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {device.wifi_ssid}")
        return "\n".join(lines)

    @tool
    def check_network_mode_preference(self) -> str:
        """See which kind of cellular network your phone is set to prefer."""
        return f"Network Mode Preference: {self.device.network_mode_preference.value}"

    @tool(write=True)
    def set_network_mode_preference(self, mode: NetworkModePreference | str) -> str:
        """Choose which kind of cellular network your phone prefers; the phone then
        searches for a network again. Newer networks are faster.

        Args:
            mode: One of '4g_5g_preferred', '4g_only', '3g_only' or '2g_only'.
        """
        options = ", ".join(m.value for m in NetworkModePreference)
        failed = f"Failed to set network mode: '{mode}' is not a valid option. " \
                 f"Please use one of: {options}"
        try:
            # as upstream: only a string is converted; anything else is stored as given
            # (and searched with), then fails where its `.value` is read
            preference = NetworkModePreference(mode) if isinstance(mode, str) else mode
        except ValueError:
            return self._with_status_bar(failed)
        self.device.network_mode_preference = preference
        self.simulate_network_search()
        if preference is None:  # upstream reads a None result as failure, after the search
            return self._with_status_bar(failed)
        return self._with_status_bar(f"Preferred Network Mode set to: {preference.value}")

    @tool
    def run_speed_test(self) -> str:
        """Measure your phone's current mobile internet download speed and what it is good
        enough for."""
        speed, label = self._speed()
        if speed is None:
            return f"Speed test failed: {label}."
        advice = next(advice for _, band, advice in SPEED_BANDS if band == label)
        return f"Speed Test Result: {speed:.2f} Mbps ({label}). {advice}"

    # -- airplane mode and SIM ---------------------------------------------------------

    @tool(write=True)
    def toggle_airplane_mode(self) -> str:
        """Switch airplane mode on or off. On cuts every radio (cellular, Wi-Fi) and drops
        any VPN; off makes the phone search for a network again."""
        on = self._toggle_airplane_mode()
        return self._with_status_bar(f"Airplane Mode is now {_on_off(on)}.")

    @tool
    def check_sim_status(self) -> str:
        """Check whether your SIM card is working, missing, or locked by a PIN or PUK."""
        return SIM_MESSAGES[self._sim_status()]

    @tool(write=True)
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in, then let the phone search for a
        network. Helps when the phone does not detect the SIM."""
        self.device.sim_card_missing = False
        self.simulate_network_search()
        return self._with_status_bar("SIM card re-seated successfully.")

    # -- mobile data, roaming, data saver ----------------------------------------------

    @tool(write=True)
    def toggle_data(self) -> str:
        """Switch mobile (cellular) data on or off: whether the phone may use the cellular
        network for internet when not on Wi-Fi."""
        on = self._toggle_data()
        return self._with_status_bar(f"Mobile Data is now {_on_off(on)}.")

    @tool(write=True)
    def toggle_roaming(self) -> str:
        """Switch data roaming on or off: whether the phone may use mobile data on other
        carriers' networks, e.g. abroad."""
        on = self._toggle_roaming()
        return self._with_status_bar(f"Data Roaming is now {_on_off(on)}.")

    @tool
    def check_data_restriction_status(self) -> str:
        """Check whether data saver mode is limiting your data use."""
        if self.device.data_saver_mode:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @tool(write=True)
    def toggle_data_saver_mode(self) -> str:
        """Switch data saver mode on or off. On reduces data use and slows the
        connection."""
        on = self._toggle_data_saver_mode()
        return self._with_status_bar(f"Data Saver Mode is now {_on_off(on)}.")

    # -- APN ---------------------------------------------------------------------------

    @tool
    def check_apn_settings(self) -> str:
        """Show the access point (APN) settings your phone uses for mobile data, and the
        MMS server address used for picture messages."""
        settings = self.device.active_apn_settings
        return (f"Current APN Name: {settings.apn_name.value or 'Not Set'}\n"
                f"MMSC URL (for picture messages): {settings.mmsc_url or 'Not Set'}\n"
                "(These are technical settings, usually best left unchanged.)")

    @tool(write=True)
    def set_apn_settings(self, apn_settings: APNSettings | dict[str, Any]) -> str:
        """Replace your phone's access point (APN) settings; the phone then searches for
        a network again.

        Args:
            apn_settings: The complete new settings; fields left out take their defaults.
        """
        if isinstance(apn_settings, dict):  # upstream converts a dict, nothing else
            apn_settings = APNSettings(**apn_settings)
        self.device.active_apn_settings = apn_settings
        update = f"APN settings set to: {apn_settings.apn_name.value}"
        self.simulate_network_search()
        return self._with_status_bar(update)

    @tool(write=True)
    def reset_apn_settings(self) -> str:
        """Restore the default access point (APN) settings. The reset takes effect when
        the phone is next restarted."""
        self.device.active_apn_settings.reset_at_reboot = True
        self.simulate_network_search()
        return self._with_status_bar("APN settings will reset at reboot.")

    # -- Wi-Fi and Wi-Fi calling -------------------------------------------------------

    @tool
    def check_wifi_status(self) -> str:
        """Check whether Wi-Fi is on, which network it is connected to and how strong the
        signal is."""
        device = self.device
        if not device.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if device.wifi_connected:
            return (f"Wi-Fi is ON and connected to '{device.wifi_ssid}'. "
                    f"Signal strength: {device.wifi_signal_strength.value}.")
        return "Wi-Fi is ON but not connected to any network."

    @tool(write=True)
    def toggle_wifi(self) -> str:
        """Switch the Wi-Fi radio on or off (not possible while airplane mode is on)."""
        device = self.device
        if device.airplane_mode:
            return self._with_status_bar(
                "Cannot change Wi-Fi settings while Airplane Mode is ON.")
        device.wifi_enabled = not device.wifi_enabled
        if not device.wifi_enabled:
            device.wifi_connected = False
            device.wifi_ssid = None
            device.wifi_signal_strength = SignalStrength.NONE
        return self._with_status_bar(f"Wi-Fi is now {_on_off(device.wifi_enabled)}.")

    @tool
    def check_wifi_calling_status(self) -> str:
        """Check whether Wi-Fi calling (calls over Wi-Fi instead of cellular) is on."""
        return f"Wi-Fi Calling is currently turned {_on_off(self.device.wifi_calling_enabled)}."

    @tool(write=True)
    def toggle_wifi_calling(self) -> str:
        """Switch Wi-Fi calling on or off: making and receiving calls over Wi-Fi, useful
        where the cellular signal is weak."""
        self.device.wifi_calling_enabled = not self.device.wifi_calling_enabled
        return self._with_status_bar(
            f"Wi-Fi Calling is now {_on_off(self.device.wifi_calling_enabled)}.")

    # -- VPN ---------------------------------------------------------------------------

    @tool
    def check_vpn_status(self) -> str:
        """Check whether a VPN is connected, and the connection's details if so."""
        device = self.device
        if device.vpn_connected:
            if device.vpn_details:
                # a Python dict repr, enum members included, as upstream prints it
                return f"VPN is ON and connected. Details: {device.vpn_details.model_dump()}"
            return "VPN is ON and connected (no specific details available)."
        if device.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(write=True)
    def connect_vpn(self) -> str:
        """Connect your phone's VPN."""
        if not self._connect_vpn():
            return "VPN already connected."
        return self._with_status_bar("VPN connected successfully.")

    @tool(write=True)
    def disconnect_vpn(self) -> str:
        """Disconnect the active VPN, so traffic no longer goes through the VPN server."""
        message = ("VPN disconnected successfully." if self._disconnect_vpn()
                   else "No active VPN connection to disconnect.")
        return self._with_status_bar(message)

    # -- apps and MMS ------------------------------------------------------------------

    @tool
    def check_installed_apps(self) -> str:
        """List the apps installed on your phone."""
        names = ", ".join(self.device.app_statuses)
        return f"The following apps are installed on the phone: {names}"

    @tool
    def check_app_status(self, app_name: str) -> str:
        """Show an app's details, including the permissions it has been granted.

        Args:
            app_name: The app's name as listed by check_installed_apps, e.g. 'messaging'.
        """
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app.permissions)
        lines = [f"Status for App: {app_name}"]
        if granted:
            lines.append(" - Permissions Granted:")
            lines += [f"   - {name}" for name in granted]
        else:
            lines.append(" - Permissions: None granted.")
        return "\n".join(lines)

    @tool
    def check_app_permissions(self, app_name: str) -> str:
        """Show which permissions an app has (SMS, storage, phone, network).

        Args:
            app_name: The app's name as listed by check_installed_apps, e.g. 'messaging'.
        """
        app = self.device.app_statuses.get(app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = _granted(app.permissions)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool(write=True)
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Allow an app one permission it needs to work.

        Args:
            app_name: The app's name, e.g. 'messaging'.
            permission: The permission in lowercase: 'sms', 'storage', 'phone' or
                'network'.
        """
        app = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if app is None:
            outcome = f"Error. App '{app_name}' not found. Cannot grant permission."
        elif permission not in AppPermissions.model_fields:
            outcome = (f"Error. Permission '{permission}' not tracked for app '{app_name}', "
                       f"available permissions: {list(AppPermissions.model_fields)}")
        else:
            setattr(app.permissions, permission, True)
            outcome = f"Success. Permission '{permission}' granted to app '{app_name}'."
        return self._with_status_bar(outcome)

    @tool
    def can_send_mms(self) -> str:
        """Check whether your messaging app can send MMS (picture) messages right now."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    # -- device and payments -----------------------------------------------------------

    @tool(write=True)
    def reboot_device(self) -> str:
        """Restart your phone: applies a pending APN reset and restarts the network
        services, which search for a network again."""
        device = self.device
        lines = []
        if device.active_apn_settings.reset_at_reboot:
            lines.append("Resetting APN settings...")
            device.active_apn_settings = APNSettings()
        lines.append("Restarting network services...")
        device.network_connection_status = NetworkStatus.SEARCHING
        self.simulate_network_search()
        return self._with_status_bar("\n".join(lines))

    @tool
    def check_payment_request(self) -> str:
        """Check whether the agent has sent you a request to pay a bill."""
        request = self.surroundings.payment_request
        if request is None:
            return "No payment request has been made."
        return (f"You have a payment request for bill {request.bill_id} "
                f"of {request.amount_due} USD.")

    @tool(write=True)
    def make_payment(self) -> str:
        """Pay the bill the agent sent you a payment request for."""
        request = self.surroundings.payment_request
        if request is None:
            return "You do not have a payment request."
        request.paid = True
        return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."

    # -- task functions: initialisation (upstream names and return values) -------------

    def set_user_info(self, name: str, phone_number: str) -> None:
        self.surroundings.name = name
        self.surroundings.phone_number = phone_number

    def set_user_location(self, abroad: bool) -> None:
        self.surroundings.is_abroad = abroad

    def turn_airplane_mode_on(self) -> str:
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    def turn_data_on(self) -> str:
        """Unlike the toggle, no network search (as upstream)."""
        self.device.data_enabled = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        if self._toggle_data():
            self._toggle_data()
        return "Data connection broken."

    def turn_roaming_on(self) -> str:
        if not self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        if self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now OFF."

    def turn_data_saver_mode_on(self) -> str:
        self.device.data_saver_mode = True
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        self.device.data_saver_mode = False
        return "Data Saver Mode is now OFF."

    def unseat_sim_card(self) -> str:
        """Fixed by the user tool reseat_sim_card."""
        self.device.sim_card_missing = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        """No tool unlocks it: such tasks end in a transfer to a human agent."""
        if mode == "pin":
            self.device.sim_card_status = SimStatus.LOCKED_PIN
        elif mode == "puk":
            self.device.sim_card_status = SimStatus.LOCKED_PUK
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    def break_apn_settings(self) -> str:
        """No service until reset_apn_settings and a reboot."""
        self.device.active_apn_settings.apn_name = APNNames.BROKEN
        self.simulate_network_search()
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        """No MMS until reset_apn_settings and a reboot (no network search here)."""
        self.device.active_apn_settings.mmsc_url = None
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    def break_vpn(self) -> str:
        """Connect a VPN (if none is) and make its server slow: speed drops to a tenth."""
        self._connect_vpn()
        if self.device.vpn_details is None:
            raise ValueError("VPN is connected without details")
        self.device.vpn_details.server_performance = PerformanceLevel.POOR
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        app = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if app is None:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in AppPermissions.model_fields:
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        setattr(app.permissions, permission, False)
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        self.device.wifi_calling_enabled = enabled
        message = f"Wi-Fi Calling is now {_on_off(enabled)}."
        if mms_over_wifi is not None:
            self.device.wifi_calling_mms_over_wifi = mms_over_wifi
            message += f"\nMMS over Wi-Fi is now {_on_off(mms_over_wifi)}."
        return message

    # -- task functions: assertions ----------------------------------------------------

    def assert_service_status(self, expected_status: str) -> bool:
        return self.device.network_connection_status == NetworkStatus(expected_status)

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        return self._mobile_data_working() == expected_status

    def assert_internet_speed(self, expected_speed: float,
                              expected_desc: str | None = None) -> bool:
        """At least `expected_speed` Mbps (no connection counts as 0), and in the band
        `expected_desc` when given (case-insensitive)."""
        speed, label = self._speed()
        fast_enough = (speed or 0.0) >= expected_speed
        if expected_desc is None:
            return fast_enough
        return fast_enough and label.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        return self._speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        return self._can_send_mms() == expected_status

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        return self.device.airplane_mode == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        return self.device.roaming_enabled == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        return self.device.data_saver_mode == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        return self.surroundings.mobile_data_usage_exceeded == expected_status
