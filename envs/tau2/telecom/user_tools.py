"""τ²-bench telecom tools, the user's side (upstream `tau2/domains/telecom/user_tools.py`,
`TelecomUserTools`): the simulated phone in the user's hand. In telecom the *user*
holds tools too; `TelecomAgent.sync_tools` copies the account's facts into its state.

The phone's behaviour (what is derived, what each change triggers) is `user_phone`'s
`TelecomPhone`, which this class extends with the tools and the task functions. The
fields, the derivation order and every message (status-bar emoji included) follow
upstream v0.2.0, because the user simulator reads these strings and the task assertions
read the derived values. Like upstream,
only some writes re-run the network search (toggling data saver, Wi-Fi or Wi-Fi
calling does not), and a line resumed by the agent shows service only after the next
search, e.g. a reboot.
"""

from __future__ import annotations

from typing import Any, Literal

from envs.base import tool
from envs.tau2 import data
from envs.tau2.telecom.user_data_model import (
    APNNames,
    APNSettings,
    AppPermissions,
    NetworkModePreference,
    NetworkStatus,
    PerformanceLevel,
    SignalStrength,
    SimStatus,
    TelecomUserDB,
)
from envs.tau2.telecom.user_phone import (
    SIM_MESSAGES,
    SPEED_BANDS,
    TelecomPhone,
    granted_permissions,
    on_off,
    yes_no,
)


class TelecomUser(TelecomPhone):
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
            f"Airplane Mode: {on_off(device.airplane_mode)}",
            f"SIM Card Status: {self._sim_status().value}",
            f"Cellular Connection: {device.network_connection_status.value}",
            f"Cellular Signal: {device.network_signal_strength.value}",
            f"Cellular Network Type: {device.network_technology_connected.value}",
            f"Mobile Data Enabled: {yes_no(device.data_enabled)}",
            f"Data Roaming Enabled: {yes_no(device.roaming_enabled)}",
            f"Wi-Fi Radio: {on_off(device.wifi_enabled)}",
            f"Wi-Fi Connected: {yes_no(device.wifi_connected)}",
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
        return self._with_status_bar(f"Airplane Mode is now {on_off(on)}.")

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
        return self._with_status_bar(f"Mobile Data is now {on_off(on)}.")

    @tool(write=True)
    def toggle_roaming(self) -> str:
        """Switch data roaming on or off: whether the phone may use mobile data on other
        carriers' networks, e.g. abroad."""
        on = self._toggle_roaming()
        return self._with_status_bar(f"Data Roaming is now {on_off(on)}.")

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
        return self._with_status_bar(f"Data Saver Mode is now {on_off(on)}.")

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
        return self._with_status_bar(f"Wi-Fi is now {on_off(device.wifi_enabled)}.")

    @tool
    def check_wifi_calling_status(self) -> str:
        """Check whether Wi-Fi calling (calls over Wi-Fi instead of cellular) is on."""
        return f"Wi-Fi Calling is currently turned {on_off(self.device.wifi_calling_enabled)}."

    @tool(write=True)
    def toggle_wifi_calling(self) -> str:
        """Switch Wi-Fi calling on or off: making and receiving calls over Wi-Fi, useful
        where the cellular signal is weak."""
        self.device.wifi_calling_enabled = not self.device.wifi_calling_enabled
        return self._with_status_bar(
            f"Wi-Fi Calling is now {on_off(self.device.wifi_calling_enabled)}.")

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
        granted = granted_permissions(app.permissions)
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
        granted = granted_permissions(app.permissions)
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
        message = f"Wi-Fi Calling is now {on_off(enabled)}."
        if mms_over_wifi is not None:
            self.device.wifi_calling_mms_over_wifi = mms_over_wifi
            message += f"\nMMS over Wi-Fi is now {on_off(mms_over_wifi)}."
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
