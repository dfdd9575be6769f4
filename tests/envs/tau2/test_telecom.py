"""τ² telecom: the oracle fixes every release task, hand-checked phone/account behaviour
and messages (upstream v0.2.0), and snapshot round trips of both environments.

The release data come from `TAU2_DATA_DIR` (set by this folder's conftest); the task ids
for parametrisation are read at collection from the same place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envs.base import ToolResult
from envs.tau2.base import tau2_text
from envs.tau2.tasks import EnvAssertion, Task
from envs.tau2.telecom import TelecomAgent, TelecomUser, telecom_pair
from envs.tau2.world import Tau2World
from tests.shared_data import TAU2_DATA

TASKS_FILE = TAU2_DATA / "domains" / "telecom" / "tasks.json"
TASKS = ([Task.model_validate(t) for t in json.loads(TASKS_FILE.read_text())]
         if TASKS_FILE.exists() else [])

#: upstream's toolkits (notes §4), with their READ / WRITE split
AGENT_READ = {"get_customer_by_phone", "get_customer_by_id", "get_customer_by_name",
              "get_details_by_id", "get_bills_for_customer", "get_data_usage",
              "transfer_to_human_agents"}
AGENT_WRITE = {"suspend_line", "resume_line", "send_payment_request", "enable_roaming",
               "disable_roaming", "refuel_data"}
USER_READ = {"check_status_bar", "check_network_status", "check_network_mode_preference",
             "run_speed_test", "check_sim_status", "check_data_restriction_status",
             "check_apn_settings", "check_wifi_status", "check_wifi_calling_status",
             "check_vpn_status", "check_installed_apps", "check_app_status",
             "check_app_permissions", "can_send_mms", "check_payment_request"}
USER_WRITE = {"set_network_mode_preference", "toggle_airplane_mode", "reseat_sim_card",
              "toggle_data", "toggle_roaming", "toggle_data_saver_mode", "set_apn_settings",
              "reset_apn_settings", "toggle_wifi", "toggle_wifi_calling", "connect_vpn",
              "disconnect_vpn", "grant_app_permission", "reboot_device", "make_payment"}

JOHN = {"name": "John Smith", "phone_number": "555-123-2002"}
LINE = {"customer_id": "C1001", "line_id": "L1002"}
BAR_5G = "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
FAST = "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast."
NO_CONNECTION = "Speed test failed: No Connection."


def assertions_met(world: Tau2World, assertions: list[EnvAssertion]) -> list[bool]:
    met = []
    for assertion in assertions:
        env = world.env(assertion.env_type)
        assert env is not None
        met.append(env.run_function(assertion.func_name, assertion.arguments)
                   == assertion.assert_value)
    return met


def is_transfer_task(task: Task) -> bool:
    criteria = task.evaluation_criteria
    return any(a.name == "transfer_to_human_agents" for a in (criteria and criteria.actions)
               or [])


# -- (a) every release task: broken after init, fixed by the gold actions ---------------


def test_release_has_the_base_split() -> None:
    assert len(TASKS) == 114
    assert sum(is_transfer_task(t) for t in TASKS) == 20


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_oracle_fixes_the_task(task: Task) -> None:
    criteria = task.evaluation_criteria
    assert criteria is not None and criteria.actions and criteria.env_assertions
    world = Tau2World("telecom")
    world.initialize(task.initial_state)

    initially = assertions_met(world, criteria.env_assertions)
    if is_transfer_task(task):
        # Unfixable by design (SIM locked with a PIN, or a line suspended after its
        # contract ended): the expected end state is "no_service" plus a transfer to a
        # human agent (graded as an ACTION), so the assertions hold from the start.
        assert all(initially)
    else:
        assert not all(initially), "the initial state should show the problem"

    for action in criteria.actions:
        result = world.execute(action.requestor, action.name, action.arguments)
        assert result.ok, f"{action.name}: {result.error}"
    assert all(assertions_met(world, criteria.env_assertions))


# -- (b) hand-checked behaviour ---------------------------------------------------------


def john_world(**location: bool) -> Tau2World:
    """John Smith (C1001) holding his line L1002 (Premium Plan, roaming allowed)."""
    world = Tau2World("telecom")
    assert world.user is not None
    world.user.run_function("set_user_info", JOHN)
    world.user.run_function("set_user_location", {"abroad": location.get("abroad", False)})
    world.sync()
    return world


def text(result: ToolResult) -> str:
    return tau2_text(result)


def user(world: Tau2World) -> TelecomUser:
    assert isinstance(world.user, TelecomUser)
    return world.user


def agent(world: Tau2World) -> TelecomAgent:
    assert isinstance(world.agent, TelecomAgent)
    return world.agent


def test_toolkits_match_upstream() -> None:
    agent_specs = {s.name: s.write for s in TelecomAgent.tool_specs()}
    user_specs = {s.name: s.write for s in TelecomUser.tool_specs()}
    assert agent_specs == {n: n in AGENT_WRITE for n in AGENT_READ | AGENT_WRITE}
    assert user_specs == {n: n in USER_WRITE for n in USER_READ | USER_WRITE}
    assert (len(agent_specs), len(user_specs)) == (13, 30)
    assert TelecomUser.requestor == "user" and TelecomAgent.requestor == "assistant"


def test_roaming_toggle_abroad() -> None:
    world = john_world(abroad=True)
    phone = user(world)
    assert phone.state.surroundings.roaming_allowed  # L1002 has roaming on the account
    assert text(world.execute("user", "run_speed_test", {})) == NO_CONNECTION

    toggled = world.execute("user", "toggle_roaming", {})
    assert text(toggled) == f"Data Roaming is now ON.\n{BAR_5G}"
    assert phone.state.device.roaming_enabled
    assert phone.run_function("assert_mobile_data_status", {"expected_status": True})
    assert text(world.execute("user", "run_speed_test", {})) == FAST

    # the account side can still block it: sync carries the line's roaming flag over
    assert text(world.execute("assistant", "disable_roaming", LINE)) == (
        "Roaming disabled successfully")
    assert not phone.state.surroundings.roaming_allowed
    assert text(world.execute("user", "run_speed_test", {})) == NO_CONNECTION
    assert text(world.execute("assistant", "disable_roaming", LINE)) == (
        "Roaming was already disabled")
    assert "Data Roaming Enabled: Yes" in text(world.execute("user", "check_network_status",
                                                             {}))


def test_refuel_data_lifts_the_limit_and_bills_it() -> None:
    world = john_world()
    agent(world).run_function("set_data_usage", {**LINE, "data_used_gb": 15.1})
    world.sync()
    assert user(world).state.surroundings.mobile_data_usage_exceeded  # 15.1 >= 15 + 0
    assert text(world.execute("user", "run_speed_test", {})) == NO_CONNECTION

    usage = world.execute("assistant", "get_data_usage", LINE)
    assert usage.content == {"line_id": "L1002", "data_used_gb": "15.1",
                             "data_limit_gb": "15.0", "data_refueling_gb": "0.0",
                             "cycle_end_date": "2025-02-28"}

    refuel = world.execute("assistant", "refuel_data", {**LINE, "gb_amount": 2.0})
    assert refuel.content == {
        "message": "Successfully added 2.0 GB of data for line L1002 for $4.00",
        "new_data_refueling_gb": "2.0", "charge": "4.0"}
    assert not user(world).state.surroundings.mobile_data_usage_exceeded
    # no network search yet: the phone still has user_db.toml's "good" 5G signal
    assert text(world.execute("user", "run_speed_test", {})) == (
        "Speed Test Result: 220.00 Mbps (Excellent). Connection is very fast.")
    assert agent(world).run_function("assert_data_refueling_amount",
                                     {**LINE, "expected_amount": 2.0})

    draft = world.execute("assistant", "get_details_by_id", {"id": "B1003"}).content
    assert draft["total_due"] == 4.0
    assert draft["line_items"] == [{"description": "Data refueling: 2.0 GB at $2.0/GB",
                                    "amount": 4.0, "date": "2025-02-25",
                                    "item_type": "Charge"}]
    # an int stays an int in the messages, as upstream passed arguments through
    again = world.execute("assistant", "refuel_data", {**LINE, "gb_amount": 1})
    assert again.content["message"] == (
        "Successfully added 1 GB of data for line L1002 for $2.00")


def test_refuel_without_draft_bill_opens_next_months_bill() -> None:
    world = Tau2World("telecom")
    result = world.execute("assistant", "refuel_data",
                           {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 3})
    assert result.ok
    customer = agent(world).run_function("get_customer_by_id", {"customer_id": "C1002"})
    new_id = customer["bill_ids"][-1]
    assert len(new_id) == 9 and new_id.startswith("B")
    bill = world.execute("assistant", "get_details_by_id", {"id": new_id}).content
    assert (bill["period_start"], bill["period_end"], bill["due_date"], bill["status"]) == (
        "2025-03-01", "2025-03-31", "2025-03-15", "Draft")
    # deterministic: a second world names it the same
    twin = Tau2World("telecom")
    twin.execute("assistant", "refuel_data",
                 {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 3})
    assert twin.db_hashes() == world.db_hashes()


def test_airplane_mode_means_no_service() -> None:
    world = john_world()
    on = world.execute("user", "toggle_airplane_mode", {})
    assert text(on) == "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    phone = user(world)
    assert phone.run_function("assert_service_status", {"expected_status": "no_service"})
    assert not phone.run_function("assert_mobile_data_status", {"expected_status": True})
    assert text(world.execute("user", "toggle_wifi", {})) == (
        "Cannot change Wi-Fi settings while Airplane Mode is ON.\n"
        "Status Bar: ✈️ Airplane Mode | 🔋 80%")
    assert text(world.execute("user", "check_network_status", {})).startswith(
        "Airplane Mode: ON\nSIM Card Status: active\nCellular Connection: no_service\n"
        "Cellular Signal: none\nCellular Network Type: none")
    off = world.execute("user", "toggle_airplane_mode", {})
    assert text(off) == f"Airplane Mode is now OFF.\n{BAR_5G}"
    assert phone.run_function("assert_service_status", {"expected_status": "connected"})


def test_suspend_and_resume_line() -> None:
    world = john_world()
    suspended = world.execute("assistant", "suspend_line", {**LINE, "reason": "travel"})
    assert suspended.content["message"] == (
        "Line suspended successfully. $5/month holding fee will apply.")
    assert suspended.content["line"]["status"] == "Suspended"
    assert suspended.content["line"]["suspension_start_date"] == "2025-02-25"
    phone = user(world)
    assert not phone.state.surroundings.line_active
    # the phone notices at its next network search
    assert phone.state.device.network_connection_status == "connected"
    rebooted = world.execute("user", "reboot_device", {})
    assert text(rebooted) == ("Restarting network services...\n"
                              "Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%")
    assert agent(world).run_function("assert_line_status",
                                     {**LINE, "expected_status": "Suspended"})

    again = world.execute("assistant", "suspend_line", {**LINE, "reason": "x"})
    assert text(again) == "Error: Line must be active to suspend"
    resumed = world.execute("assistant", "resume_line", LINE)
    assert resumed.content["message"] == "Line resumed successfully"
    assert resumed.content["line"]["suspension_start_date"] is None
    assert text(world.execute("assistant", "resume_line", LINE)) == (
        "Error: Line must be suspended to resume")
    world.execute("user", "reboot_device", {})
    assert phone.run_function("assert_service_status", {"expected_status": "connected"})


def test_payment_request_then_payment_marks_bill_paid() -> None:
    world = john_world()
    assert text(world.execute("user", "check_payment_request", {})) == (
        "No payment request has been made.")
    sent = world.execute("assistant", "send_payment_request",
                         {"customer_id": "C1001", "bill_id": "B1002"})
    assert text(sent) == "Payment request sent to the customer for bill B1002"
    assert text(world.execute("user", "check_payment_request", {})) == (
        "You have a payment request for bill B1002 of 150.0 USD.")
    assert text(world.execute("assistant", "send_payment_request",
                              {"customer_id": "C1001", "bill_id": "B1001"})) == (
        "Error: A bill is already awaiting payment for this customer")

    paid = world.execute("user", "make_payment", {})
    assert text(paid) == "Payment of 150.0 USD has been made for bill B1002."
    bill = world.execute("assistant", "get_details_by_id", {"id": "B1002"}).content
    assert bill["status"] == "Paid"
    assert user(world).state.surroundings.payment_request is None
    assert text(world.execute("user", "make_payment", {})) == (
        "You do not have a payment request.")


def test_overdue_bill_suspension_and_its_assertions() -> None:
    world = john_world()
    functions = agent(world)
    message = functions.run_function("suspend_line_for_overdue_bill", {
        **LINE, "new_bill_id": "B1234321", "contract_ended": True})
    world.sync()
    assert message == "Line L1002 suspended for unpaid bill B1234321. Contract ended: True"
    bill = world.execute("assistant", "get_details_by_id", {"id": "B1234321"}).content
    assert (bill["period_start"], bill["period_end"], bill["due_date"], bill["total_due"],
            bill["status"]) == ("2025-01-01", "2025-01-31", "2025-01-15", 65.0, "Overdue")
    line = world.execute("assistant", "get_details_by_id", {"id": "L1002"}).content
    assert line["contract_end_date"] == "2025-01-31"
    assert functions.run_function("assert_overdue_bill_exists",
                                  {"customer_id": "C1001", "overdue_bill_id": "B1234321"})
    assert not functions.run_function("assert_no_overdue_bill",
                                      {"overdue_bill_id": "B1234321"})
    assert functions.run_function("assert_no_overdue_bill", {"overdue_bill_id": "B404"})
    with pytest.raises(ValueError, match="Customer already has an overdue bill"):
        functions.suspend_line_for_overdue_bill("C1001", "L1001", "B7", False)


def test_error_messages() -> None:
    world = john_world()
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("get_customer_by_id", {"customer_id": "C9"}, "Customer with ID C9 not found"),
        # v0.2.0 matched phone numbers exactly as written
        ("get_customer_by_phone", {"phone_number": "5551232002"},
         "Customer with phone number 5551232002 not found"),
        ("get_details_by_id", {"id": "X1"}, "Unknown ID format or type: X1"),
        ("get_details_by_id", {"id": "B9"}, "Bill with ID B9 not found"),
        ("get_data_usage", {"customer_id": "C1001", "line_id": "L1004"},
         "Line L1004 not found for customer C1001"),
        ("refuel_data", {**LINE, "gb_amount": 0}, "Refuel amount must be positive"),
        ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1004"},
         "Bill B1004 not found for customer C1001"),
    ]
    for name, arguments, message in cases:
        assert text(world.execute("assistant", name, arguments)) == f"Error: {message}", name
    assert world.execute("assistant", "get_customer_by_name",
                         {"full_name": "john SMITH", "dob": "1985-06-15"}).content[0][
        "created_at"] == "2025-01-15 10:30:00"


def test_phone_messages() -> None:
    world = john_world()
    user(world).run_function("break_vpn")
    assert text(world.execute("user", "check_vpn_status", {})) == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': "
        "'OpenVPN', 'server_performance': <PerformanceLevel.POOR: 'poor'>}")
    assert text(world.execute("user", "run_speed_test", {})) == (
        "Speed Test Result: 22.00 Mbps (Fair). Connection is okay for web browsing and some "
        "standard definition streaming.")  # 5G "good" (no search yet) x 0.8, slow VPN x 0.1
    assert text(world.execute("user", "set_network_mode_preference", {"mode": "5g"})) == (
        "Failed to set network mode: '5g' is not a valid option. Please use one of: "
        "4g_5g_preferred, 4g_only, 3g_only, 2g_only\n"
        "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%")
    assert text(world.execute("user", "set_network_mode_preference", {"mode": "2g_only"})) == (
        "Preferred Network Mode set to: 2g_only\n"
        "Status Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%")
    assert text(world.execute("user", "can_send_mms", {})) == (
        "Your messaging app cannot send MMS messages.")
    assert text(world.execute("user", "grant_app_permission",
                              {"app_name": "messaging", "permission": "Camera"})).startswith(
        "Error. Permission 'camera' not tracked for app 'messaging', available permissions: "
        "['sms', 'storage', 'phone', 'network']\n")
    assert text(world.execute("user", "check_app_permissions", {"app_name": "browser"})) == (
        "App 'browser' has permission for: storage, network.")


def test_sync_waits_for_the_user_and_rejects_unknown_numbers() -> None:
    agent_env, user_env = telecom_pair()
    assert user_env.state.surroundings.phone_number is None
    assert user_env.state.surroundings.roaming_allowed is False  # untouched by the sync
    user_env.set_user_info("Nobody", "555-000-0000")
    with pytest.raises(Exception, match="Line with phone number 555-000-0000 not found"):
        agent_env.sync_tools(user_env)


# -- (c) snapshots ----------------------------------------------------------------------


def test_snapshot_round_trips() -> None:
    world = john_world(abroad=True)
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("assistant", "refuel_data", {"customer_id": "C1002", "line_id": "L1004",
                                      "gb_amount": 1.5}),
        ("assistant", "suspend_line", {**LINE, "reason": "test"}),
        ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"}),
        ("user", "connect_vpn", {}),
        ("user", "set_network_mode_preference", {"mode": "3g_only"}),
    ]
    for requestor, name, arguments in steps:
        assert world.execute(requestor, name, arguments).ok, name
    for env, fresh in ((world.agent, TelecomAgent()), (world.user, TelecomUser())):
        assert env is not None
        snapshot, digest = env.snapshot(), env.db_hash()
        env.restore(json.loads(json.dumps(snapshot)))
        assert env.snapshot() == snapshot and env.db_hash() == digest
        fresh.restore(snapshot)
        assert fresh.db_hash() == digest
