'''python-dbusmock template: NetworkManager for accessory-setup's tests.

It loads python-dbusmock's own networkmanager template and adds what NetworkManager 1.42 has
and that template lacks, with NetworkManager's behaviour:

- Settings.AddConnection2 and AddAndActivateConnection2 (persist "volatile" deletes the
  profile when its connection goes down), checkpoints (CheckpointCreate, CheckpointRollback
  with the rollback timeout and the flag that deletes profiles added since, CheckpointDestroy,
  CheckpointAdjustRollbackTimeout),
  the Wi-Fi device's LastScan, updated by RequestScan, which also brings hidden access points
  into range when their SSID is probed.

and, on org.freedesktop.DBus.Mock, ways to make an activation fail or stall the way a real
one does: the device goes to FAILED with a reason and the active connection to DEACTIVATED.
'''

import os
import time

import dbus
import dbusmock
from dbusmock import MOCK_IFACE
from dbusmock.templates import networkmanager as base
# The stock template's D-Bus methods (AddWiFiDevice, SettingsAddConnection, ...) become this
# template's, so python-dbusmock installs them on the mock as it does for the stock one.
from dbusmock.templates.networkmanager import *  # noqa: F401,F403 pylint: disable=wildcard-import,unused-wildcard-import
from gi.repository import GLib

BUS_NAME = base.BUS_NAME
MAIN_OBJ = base.MAIN_OBJ
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

CHECKPOINT_IFACE = 'org.freedesktop.NetworkManager.Checkpoint'
DEVICE_STATE_DISCONNECTED = 30
DEVICE_STATE_IP_CONFIG = 70
DEVICE_STATE_ACTIVATED = 100
DEVICE_STATE_FAILED = 120
AC_STATE_ACTIVATING = 1
AC_STATE_DEACTIVATED = 4


def boottime_ms():
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1000)


def load(mock, parameters):
    base.load(mock, parameters)
    mock.failures = {}        # SSID bytes -> (device reason, connection reason, AP that vanishes) or None to stall
    mock.failing_once = {}    # SSID bytes -> the same, for the next ActivateConnection only
    mock.checkpoint_destroy_race = False  # the next CheckpointDestroy finds it destroyed meanwhile
    mock.delete_races = set()  # SSID bytes whose profiles NetworkManager deletes itself as they are deleted
    mock.volatile = set()     # connection paths deleted when they go down
    mock.checkpoints = {}     # path -> {device path: connection path or None}
    mock.checkpoint_profiles = {}  # path -> the profiles that existed, when DELETE_NEW_CONNECTIONS was asked for
    mock.checkpoint_timers = {}    # path -> the GLib source of its rollback
    mock.hidden_aps = {}      # SSID bytes -> AddAccessPointWithFlags arguments
    mock.scan_requests = []   # the SSIDs each RequestScan probed for
    mock.heard_while_failing = set()  # SSIDs whose access points are heard during a failing activation
    mock.scans_refused = False
    mock.stopping_during = set()  # SSIDs whose activation NetworkManager's own shutdown ends
    mock.link_drops = {}      # SSID bytes -> (once, device reason, connection reason) of a link that comes up and fails
    mock.ipv4 = {}            # SSID bytes -> (address, prefix, gateway) its activations are given
    mock.ip4_configs = 0      # IP4Config objects made so far, for their paths

    manager = dbusmock.get_object(base.MANAGER_OBJ)
    manager.AddProperty(base.MANAGER_IFACE, 'Checkpoints', dbus.Array([], signature='o'))
    manager.AddMethods(base.MANAGER_IFACE, [
        ('AddAndActivateConnection2', 'a{sa{sv}}ooa{sv}', 'ooa{sv}',
         'ret = self.mock.add_and_activate2(args[0], args[1], args[2], args[3])'),
        ('ActivateConnection', 'ooo', 'o', 'ret = self.mock.activate(args[0], args[1], args[2])'),
        ('DeactivateConnection', 'o', '', 'self.mock.deactivate(args[0])'),
        ('CheckpointCreate', 'aouu', 'o', 'ret = self.mock.checkpoint_create(args[0], args[1], args[2])'),
        ('CheckpointDestroy', 'o', '', 'self.mock.checkpoint_destroy(args[0])'),
        ('CheckpointRollback', 'o', 'a{su}', 'ret = self.mock.checkpoint_rollback(args[0])'),
        ('CheckpointAdjustRollbackTimeout', 'ou', '', 'self.mock.checkpoint_adjust(args[0], args[1])'),
    ])
    manager.mock = mock
    settings = dbusmock.get_object(base.SETTINGS_OBJ)
    settings.AddMethods(base.SETTINGS_IFACE, [
        ('AddConnection2', 'a{sa{sv}}ua{sv}', 'oa{sv}', 'ret = (self.add_connection(args[0]), dbus.Dictionary({}, signature="sv"))'),
        ('AddConnection', 'a{sa{sv}}', 'o', 'ret = self.add_connection(args[0])'),
        ('AddConnectionUnsaved', 'a{sa{sv}}', 'o', 'ret = self.add_connection(args[0])'),
    ])
    settings.add_connection = add_connection

    mock.add_and_activate2 = lambda *args: add_and_activate2(mock, *args)
    mock.activate = lambda *args: activate(mock, *args)
    mock.deactivate = lambda path: deactivate(mock, path)
    mock.checkpoint_create = lambda *args: checkpoint_create(mock, *args)
    mock.checkpoint_remove = lambda path: checkpoint_remove(mock, path)
    mock.checkpoint_destroy = lambda path: checkpoint_destroy(mock, path)
    mock.checkpoint_rollback = lambda path: checkpoint_rollback(mock, path)
    mock.checkpoint_adjust = lambda path, seconds: checkpoint_adjust(mock, path, seconds)


def ssid_of(settings):
    return bytes(settings.get('802-11-wireless', {}).get('ssid', b''))


SECRET_KEYS = {'psk', 'wep-key0', 'wep-key1', 'wep-key2', 'wep-key3', 'password', 'private-key-password'}


def add_connection(settings):
    '''Adds a profile whose GetSettings leaves the secrets out and GetSecrets gives them, as NetworkManager does.'''
    settings_obj = dbusmock.get_object(base.SETTINGS_OBJ)
    path = settings_obj.SettingsAddConnection(settings)
    connection = dbusmock.get_object(path)
    connection.ConnectionGetSettings = lambda self: dbus.Dictionary({
        name: dbus.Dictionary({k: v for k, v in values.items() if k not in SECRET_KEYS}, signature='sv')
        for name, values in self.settings.items()}, signature='sa{sv}')
    connection.ConnectionGetSecrets = lambda self, setting: dbus.Dictionary({
        setting: dbus.Dictionary({k: v for k, v in self.settings.get(setting, {}).items() if k in SECRET_KEYS}, signature='sv')},
        signature='sa{sv}')
    delete = connection.ConnectionDelete
    connection.ConnectionDelete = lambda self: delete_racing(self, delete)
    return path


def delete_racing(connection, delete):
    '''Delete, or for an SSID of SetDeleteRace, what NetworkManager answers when it removed the
    in-memory profile by itself while checking the caller's authorization for deleting it.'''
    delete(connection)
    if ssid_of(connection.settings) in dbusmock.get_object(base.MANAGER_OBJ).mock.delete_races:
        raise dbus.exceptions.DBusException('Error checking authorization: connection was deleted',
                                            name='org.freedesktop.NetworkManager.PermissionDenied')


def add_and_activate2(mock, settings, device, specific_object, options):
    connection = add_connection(settings)
    if str(options.get('persist', 'disk')) == 'volatile':
        mock.volatile.add(str(connection))
    ssid = ssid_of(settings)
    if ssid in mock.link_drops:
        active = start_link_drop(mock, connection, device, specific_object, ssid)
    elif ssid in mock.failures:
        active = start_failing_activation(mock, connection, device, specific_object, mock.failures[ssid])
    else:
        active = base.activate_connection(dbusmock.get_object(base.MANAGER_OBJ), connection, device, specific_object)
        configure_ipv4(mock, device, active, ssid)
    return (connection, active, dbus.Dictionary({}, signature='sv'))


def activate(mock, connection, device, specific_object):
    '''ActivateConnection, failing as SetActivationFailure asked for the profile's SSID.'''
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    if str(device) == '/':
        device = manager.GetDevices()[0]
    ssid = ssid_of(dbusmock.get_object(connection).settings)
    if ssid in mock.failing_once:
        return start_failing_activation(mock, connection, device, specific_object, mock.failing_once.pop(ssid))
    if ssid in mock.link_drops:
        return start_link_drop(mock, connection, device, specific_object, ssid)
    if ssid in mock.failures:
        return start_failing_activation(mock, connection, device, specific_object, mock.failures[ssid])
    active = base.activate_connection(manager, connection, device, specific_object)
    configure_ipv4(mock, device, active, ssid)
    return active


IP4_CONFIG_IFACE = 'org.freedesktop.NetworkManager.IP4Config'


def configure_ipv4(mock, device, active, ssid):
    '''Gives the device and the active connection the IPv4 configuration SetActivationIPv4 set
    for the SSID, as DHCP would; none for others.'''
    if ssid not in mock.ipv4:
        return
    address, prefix, gateway = mock.ipv4[ssid]
    mock.ip4_configs += 1
    path = '/org/freedesktop/NetworkManager/IP4Config/%d' % mock.ip4_configs
    mock.AddObject(path, IP4_CONFIG_IFACE, {
        'AddressData': dbus.Array([dbus.Dictionary({'address': address, 'prefix': dbus.UInt32(prefix)}, signature='sv')],
                                  signature='a{sv}'),
        'Gateway': gateway,
    }, [])
    mock.object_manager_emit_added(path)
    for obj, iface in ((dbusmock.get_object(active), base.ACTIVE_CONNECTION_IFACE), (dbusmock.get_object(device), base.DEVICE_IFACE)):
        set_ip4_config(obj, iface, path)


def set_ip4_config(obj, iface, path):
    # The stock template's objects lack the property; adding one signals nothing, setting does.
    if 'Ip4Config' not in obj.props.get(iface, {}):
        obj.AddProperty(iface, 'Ip4Config', dbus.ObjectPath('/'))
    obj.Set(iface, 'Ip4Config', dbus.ObjectPath(path))


def unconfigure_ipv4(mock, devices):
    '''The devices lose their IPv4 configuration as their connection goes down.'''
    for device in devices:
        device_obj = dbusmock.get_object(device)
        path = str(device_obj.props.get(base.DEVICE_IFACE, {}).get('Ip4Config', '/'))
        if path == '/':
            continue
        device_obj.Set(base.DEVICE_IFACE, 'Ip4Config', dbus.ObjectPath('/'))
        mock.object_manager_emit_removed(path)
        mock.RemoveObject(path)


def start_link_drop(mock, connection, device, specific_object, ssid):
    '''An activation whose link comes up (ip-config), then fails with the reasons
    SetActivationLinkDrop gave, as when the access point's handshake is lost after the key was
    accepted.'''
    once, device_reason, connection_reason = mock.link_drops[ssid]
    if once:
        del mock.link_drops[ssid]
    return start_failing_activation(mock, connection, device, specific_object,
                                    (device_reason, connection_reason, None), link_up=True)


def start_failing_activation(mock, connection, device, specific_object, reasons, link_up=False):
    '''An active connection that stays ACTIVATING, then fails as NetworkManager reports it.'''
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    name = 'failing%d' % len(manager.Get(base.MANAGER_IFACE, 'ActiveConnections'))
    active = base.AddActiveConnection(mock, [device], connection, specific_object, name, dbus.UInt32(AC_STATE_ACTIVATING))
    device_obj = dbusmock.get_object(device)
    device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(50))
    if reasons is None:
        return active  # stalls until the client gives up

    device_reason, connection_reason, vanishing_ap = reasons
    heard = ssid_of(dbusmock.get_object(connection).settings) in mock.heard_while_failing

    def fail():
        if vanishing_ap:
            mock.RemoveAccessPoint(device, vanishing_ap)
        if ssid_of(dbusmock.get_object(connection).settings) in mock.stopping_during:
            return stop(mock, device_obj, active)
        device_obj.Set(base.DEVICE_IFACE, 'StateReason', (dbus.UInt32(DEVICE_STATE_FAILED), dbus.UInt32(device_reason)))
        device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(DEVICE_STATE_FAILED))
        device_obj.EmitSignal(base.DEVICE_IFACE, 'StateChanged', 'uuu',
                              [dbus.UInt32(DEVICE_STATE_FAILED), dbus.UInt32(50), dbus.UInt32(device_reason)])
        # As NetworkManager does, the failed device moves on to disconnected at once, and its
        # reason is reset, before the active connection reports that it went down.
        device_obj.Set(base.DEVICE_IFACE, 'StateReason', (dbus.UInt32(DEVICE_STATE_DISCONNECTED), dbus.UInt32(0)))
        device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(DEVICE_STATE_DISCONNECTED))
        device_obj.EmitSignal(base.DEVICE_IFACE, 'StateChanged', 'uuu',
                              [dbus.UInt32(DEVICE_STATE_DISCONNECTED), dbus.UInt32(DEVICE_STATE_FAILED), dbus.UInt32(0)])
        active_obj = dbusmock.get_object(active)
        active_obj.EmitSignal(base.ACTIVE_CONNECTION_IFACE, 'StateChanged', 'uu',
                              [dbus.UInt32(AC_STATE_DEACTIVATED), dbus.UInt32(connection_reason)])
        active_obj.Set(base.ACTIVE_CONNECTION_IFACE, 'State', dbus.UInt32(AC_STATE_DEACTIVATED))
        GLib.timeout_add(200, lambda: (remove_failed(mock, device_obj, active), False)[1])
        return False

    def heard_during_the_attempts():
        # wpa_supplicant's own scans heard the access point a second after the activation began
        # and a second before it failed; NetworkManager, busy with what comes next, refuses scans.
        ssid = ssid_of(dbusmock.get_object(connection).settings)
        for ap in device_obj.access_points:
            ap_obj = dbusmock.get_object(ap)
            if bytes(ap_obj.Get(base.ACCESS_POINT_IFACE, 'Ssid')) == ssid:
                ap_obj.Set(base.ACCESS_POINT_IFACE, 'LastSeen', dbus.Int32(boottime_ms() // 1000))
        mock.scans_refused = True
        return False

    def come_up():
        device_obj.Set(base.DEVICE_IFACE, 'StateReason', (dbus.UInt32(DEVICE_STATE_IP_CONFIG), dbus.UInt32(0)))
        device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(DEVICE_STATE_IP_CONFIG))
        device_obj.EmitSignal(base.DEVICE_IFACE, 'StateChanged', 'uuu',
                              [dbus.UInt32(DEVICE_STATE_IP_CONFIG), dbus.UInt32(50), dbus.UInt32(0)])
        GLib.timeout_add(100, fail)
        return False

    if heard:
        GLib.timeout_add(1100, heard_during_the_attempts)
    GLib.timeout_add(2300 if heard else 100, come_up if link_up else fail)
    return active


def remove_failed(mock, device_obj, active):
    '''Removes a failed active connection as NetworkManager does, a moment after it failed:
    without touching the device when a newer activation has taken it over by then.'''
    if str(device_obj.Get(base.DEVICE_IFACE, 'ActiveConnection')) in (str(active), '/'):
        return deactivate(mock, active)
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    actives = manager.Get(base.MANAGER_IFACE, 'ActiveConnections')
    if active in actives:
        actives.remove(active)
        manager.SetProperty(base.MANAGER_OBJ, base.MANAGER_IFACE, 'ActiveConnections', actives)
        mock.object_manager_emit_removed(active)
        mock.RemoveObject(active)


def stop(mock, device_obj, active):
    '''As NetworkManager 1.42 stops (SIGTERM): it takes the device down to unmanaged with reason
    "removed" (36), the activation ends, and a moment later it leaves the bus.'''
    device_obj.Set(base.DEVICE_IFACE, 'StateReason', (dbus.UInt32(10), dbus.UInt32(36)))
    device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(10))
    device_obj.EmitSignal(base.DEVICE_IFACE, 'StateChanged', 'uuu', [dbus.UInt32(10), dbus.UInt32(70), dbus.UInt32(36)])
    active_obj = dbusmock.get_object(active)
    active_obj.EmitSignal(base.ACTIVE_CONNECTION_IFACE, 'StateChanged', 'uu',
                          [dbus.UInt32(AC_STATE_DEACTIVATED), dbus.UInt32(0)])
    active_obj.Set(base.ACTIVE_CONNECTION_IFACE, 'State', dbus.UInt32(AC_STATE_DEACTIVATED))
    GLib.timeout_add(800, lambda: os._exit(0))
    return False


def deactivate(mock, active):
    '''Takes an active connection down; a volatile profile goes with it.'''
    if active not in dbusmock.get_object(base.MANAGER_OBJ).Get(base.MANAGER_IFACE, 'ActiveConnections'):
        return
    active_obj = dbusmock.get_object(active)
    connection = str(active_obj.Get(base.ACTIVE_CONNECTION_IFACE, 'Connection'))
    # Only the connection's own devices go down, as in NetworkManager: dbusmock's
    # deactivate_connection disconnects every device, which a second Wi-Fi device shows.
    devices = [str(d) for d in active_obj.Get(base.ACTIVE_CONNECTION_IFACE, 'Devices')]
    devices = devices or [str(d) for d in dbusmock.get_object(base.MANAGER_OBJ).GetDevices()]
    unconfigure_ipv4(mock, devices)
    for device in devices:
        base.RemoveActiveConnection(mock, device, active)
    if connection in mock.volatile:
        mock.volatile.discard(connection)
        dbusmock.get_object(connection).ConnectionDelete(dbusmock.get_object(connection))


CHECKPOINT_DELETE_NEW_CONNECTIONS = 0x2


def checkpoint_create(mock, devices, rollback_timeout, flags):
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    devices = [str(d) for d in devices] or [str(d) for d in manager.GetDevices()]
    for taken in mock.checkpoints.values():
        if set(taken) & set(devices):
            raise dbus.exceptions.DBusException('a checkpoint already covers the device',
                                                name='org.freedesktop.NetworkManager.InvalidArguments')
    path = '/org/freedesktop/NetworkManager/Checkpoint/%d' % (len(mock.checkpoints) + 1)
    while path in mock.checkpoints:
        path += '0'
    saved = {}
    for device in devices:
        active = str(dbusmock.get_object(device).Get(base.DEVICE_IFACE, 'ActiveConnection'))
        saved[device] = None if active == '/' else str(dbusmock.get_object(active).Get(base.ACTIVE_CONNECTION_IFACE, 'Connection'))
    mock.checkpoints[path] = saved
    if flags & CHECKPOINT_DELETE_NEW_CONNECTIONS:
        mock.checkpoint_profiles[path] = set(str(c) for c in dbusmock.get_object(base.SETTINGS_OBJ).ListConnections())
    mock.AddObject(path, CHECKPOINT_IFACE, {
        'Devices': dbus.Array([dbus.ObjectPath(d) for d in devices], signature='o'),
        'Created': dbus.Int64(boottime_ms()),
        'RollbackTimeout': dbus.UInt32(rollback_timeout),
    }, [])
    mock.object_manager_emit_added(path)
    manager.Set(base.MANAGER_IFACE, 'Checkpoints', dbus.Array([dbus.ObjectPath(p) for p in mock.checkpoints], signature='o'))
    schedule_rollback(mock, path, rollback_timeout)
    return path


def schedule_rollback(mock, path, seconds):
    timer = mock.checkpoint_timers.pop(path, None)
    if timer is not None:
        GLib.source_remove(timer)
    if seconds > 0:
        def expire():
            del mock.checkpoint_timers[path]
            checkpoint_rollback(mock, path)
            return False
        mock.checkpoint_timers[path] = GLib.timeout_add_seconds(seconds, expire)


def checkpoint_adjust(mock, path, seconds):
    '''CheckpointAdjustRollbackTimeout as in NetworkManager's nm-checkpoint.c: the rollback
    `seconds` from now (0: never), RollbackTimeout counted from the creation again.'''
    if path not in mock.checkpoints:
        raise dbus.exceptions.DBusException('no checkpoint ' + path, name='org.freedesktop.NetworkManager.InvalidArguments')
    checkpoint = dbusmock.get_object(path)
    elapsed_ms = boottime_ms() - int(checkpoint.Get(CHECKPOINT_IFACE, 'Created'))
    total = 0 if seconds == 0 else (elapsed_ms + seconds * 1000 + 500) // 1000
    checkpoint.Set(CHECKPOINT_IFACE, 'RollbackTimeout', dbus.UInt32(total))
    schedule_rollback(mock, path, seconds)


def checkpoint_remove(mock, path):
    if path not in mock.checkpoints:
        raise dbus.exceptions.DBusException('no checkpoint ' + path, name='org.freedesktop.NetworkManager.InvalidArguments')
    saved = mock.checkpoints.pop(path)
    mock.checkpoint_profiles.pop(path, None)
    schedule_rollback(mock, path, 0)
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    manager.Set(base.MANAGER_IFACE, 'Checkpoints', dbus.Array([dbus.ObjectPath(p) for p in mock.checkpoints], signature='o'))
    mock.object_manager_emit_removed(path)
    mock.RemoveObject(path)
    return saved


def checkpoint_destroy(mock, path):
    '''CheckpointDestroy, or after SetCheckpointDestroyRace what NetworkManager answers a second
    destroy of a checkpoint another call destroyed first.'''
    if mock.checkpoint_destroy_race:
        mock.checkpoint_destroy_race = False
        checkpoint_remove(mock, path)
        raise dbus.exceptions.DBusException('checkpoint %s does not exist' % path,
                                            name='org.freedesktop.NetworkManager.InvalidArguments')
    checkpoint_remove(mock, path)


def checkpoint_rollback(mock, path):
    '''Puts each device back on the connection it had when the checkpoint was made, and deletes
    the profiles added since when the checkpoint asked for that.'''
    profiles = mock.checkpoint_profiles.get(path)
    saved = checkpoint_remove(mock, path)
    manager = dbusmock.get_object(base.MANAGER_OBJ)
    for device, connection in saved.items():
        active = str(dbusmock.get_object(device).Get(base.DEVICE_IFACE, 'ActiveConnection'))
        if active != '/':
            deactivate(mock, active)
        if connection and connection in dbusmock.get_object(base.SETTINGS_OBJ).ListConnections():
            base.activate_connection(manager, connection, device, '/')
    if profiles is not None:
        for added in dbusmock.get_object(base.SETTINGS_OBJ).ListConnections():
            if str(added) not in profiles:
                mock.volatile.discard(str(added))
                dbusmock.get_object(added).ConnectionDelete(dbusmock.get_object(added))
    return dbus.Dictionary({dbus.String(d): dbus.UInt32(0) for d in saved}, signature='su')


@dbus.service.method(MOCK_IFACE, in_signature='sss', out_signature='s')
def AddAccessoryWiFiDevice(self, device_name, iface_name, state):
    '''A Wi-Fi device with LastScan, whose RequestScan completes a scan as NetworkManager does.'''
    path = self.AddWiFiDevice(device_name, iface_name, dbus.UInt32(int(state)))
    device = dbusmock.get_object(path)
    device.AddProperty(base.WIRELESS_DEVICE_IFACE, 'LastScan', dbus.Int64(-1))
    device.AddMethod(base.WIRELESS_DEVICE_IFACE, 'RequestScan', 'a{sv}', '', 'self.mock.request_scan(self, args[0])')
    device.mock = self
    self.request_scan = lambda dev, options: request_scan(self, dev, options)
    return path


def request_scan(mock, device, options):
    probed = [bytes(s) for s in options.get('ssids', [])]
    mock.scan_requests.append(probed)
    if mock.scans_refused:
        raise dbus.exceptions.DBusException('Scanning not allowed while already scanning',
                                            name='org.freedesktop.NetworkManager.Device.NotAllowed')
    path = device.path if hasattr(device, 'path') else device.__dbus_object_path__
    for ssid in probed:
        if ssid in mock.hidden_aps:
            mock.AddAccessPointWithFlags(path, *mock.hidden_aps.pop(ssid))

    def done():
        # The access points in range were seen by this scan.
        for ap in device.access_points:
            dbusmock.get_object(ap).Set(base.ACCESS_POINT_IFACE, 'LastSeen', dbus.Int32(boottime_ms() // 1000))
        device.Set(base.WIRELESS_DEVICE_IFACE, 'LastScan', dbus.Int64(boottime_ms()))
        return False
    GLib.timeout_add(50, done)


@dbus.service.method(MOCK_IFACE, in_signature='ssaysuyuuu', out_signature='s')
def AddAccessPointWithFlags(self, device, ap_name, ssid, bssid, frequency, strength, flags, wpa_flags, rsn_flags):
    '''An access point with any SSID bytes and separate WPA and RSN flags, announced complete.'''
    device_obj = dbusmock.get_object(device)
    path = '/org/freedesktop/NetworkManager/AccessPoint/' + ap_name
    self.AddObject(path, base.ACCESS_POINT_IFACE, {
        'Ssid': dbus.ByteArray(bytes(ssid)),
        'HwAddress': dbus.String(bssid),
        'Flags': dbus.UInt32(flags),
        'WpaFlags': dbus.UInt32(wpa_flags),
        'RsnFlags': dbus.UInt32(rsn_flags),
        'LastSeen': dbus.Int32(boottime_ms() // 1000),
        'Frequency': dbus.UInt32(frequency),
        'MaxBitrate': dbus.UInt32(54000),
        'Mode': dbus.UInt32(2),
        'Strength': dbus.Byte(strength),
    }, [])
    self.object_manager_emit_added(path)
    device_obj.access_points.append(path)
    device_obj.Set(base.WIRELESS_DEVICE_IFACE, 'AccessPoints',
                   dbus.Array([dbus.ObjectPath(p) for p in device_obj.access_points], signature='o'))
    device_obj.EmitSignal(base.WIRELESS_DEVICE_IFACE, 'AccessPointAdded', 'o', [path])
    return path


@dbus.service.method(MOCK_IFACE, in_signature='ssaysuyuuu', out_signature='')
def AddHiddenAccessPoint(self, device, ap_name, ssid, bssid, frequency, strength, flags, wpa_flags, rsn_flags):
    '''An access point that is found only by a scan probing for its SSID.'''
    self.hidden_aps[bytes(ssid)] = (ap_name, ssid, bssid, frequency, strength, flags, wpa_flags, rsn_flags)


@dbus.service.method(MOCK_IFACE, in_signature='ayuu', out_signature='')
def SetActivationFailure(self, ssid, device_reason, connection_reason):
    '''Activations of this SSID fail with these NMDeviceStateReason and NMActiveConnectionStateReason.'''
    self.failures[bytes(ssid)] = (int(device_reason), int(connection_reason), None)


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='')
def SetCheckpointDestroyRace(self):
    '''The next CheckpointDestroy fails because the checkpoint was destroyed meanwhile.'''
    self.checkpoint_destroy_race = True


@dbus.service.method(MOCK_IFACE, in_signature='ay', out_signature='')
def SetDeleteRace(self, ssid):
    '''Deleting a profile of this SSID fails because NetworkManager removed it meanwhile.'''
    self.delete_races.add(bytes(ssid))


@dbus.service.method(MOCK_IFACE, in_signature='ayuu', out_signature='')
def SetNextActivationFailure(self, ssid, device_reason, connection_reason):
    '''The next ActivateConnection of a stored profile of this SSID fails with these reasons; the
    one after succeeds, as after a handshake lost once on a busy channel.'''
    self.failing_once[bytes(ssid)] = (int(device_reason), int(connection_reason), None)


@dbus.service.method(MOCK_IFACE, in_signature='ayo', out_signature='')
def SetActivationVanish(self, ssid, access_point):
    '''Activations of this SSID fail as the access point goes out of range: it vanishes and
    the device fails with SSID_NOT_FOUND.'''
    self.failures[bytes(ssid)] = (53, 0, str(access_point))


@dbus.service.method(MOCK_IFACE, in_signature='ay', out_signature='')
def SetActivationRejectedInRange(self, ssid):
    '''Activations of this SSID fail as NetworkManager 1.42 fails a refused WPA3-SAE password
    (SSID_NOT_FOUND after "association took too long"), with the access point heard during the
    attempts and every scan refused after the failure.'''
    self.failures[bytes(ssid)] = (53, 0, None)
    self.heard_while_failing.add(bytes(ssid))


@dbus.service.method(MOCK_IFACE, in_signature='ay', out_signature='')
def SetActivationEndedByStop(self, ssid):
    '''An activation of this SSID is ended by NetworkManager stopping: the device goes unmanaged
    (reason "removed"), then the mock leaves the bus, for good.'''
    self.failures[bytes(ssid)] = (36, 0, None)
    self.stopping_during.add(bytes(ssid))


@dbus.service.method(MOCK_IFACE, in_signature='aybuu', out_signature='')
def SetActivationLinkDrop(self, ssid, once, device_reason, connection_reason):
    '''Activations of this SSID come up to ip-config, then fail with these reasons (no-secrets is
    device reason 7, connection reason 9); with `once`, only the next one.'''
    self.link_drops[bytes(ssid)] = (bool(once), int(device_reason), int(connection_reason))


@dbus.service.method(MOCK_IFACE, in_signature='aysus', out_signature='')
def SetActivationIPv4(self, ssid, address, prefix, gateway):
    '''Activations of this SSID that come up give their device this IPv4 address and gateway, as
    the access point's DHCP server would; activations of other SSIDs give none.'''
    self.ipv4[bytes(ssid)] = (str(address), int(prefix), str(gateway))


@dbus.service.method(MOCK_IFACE, in_signature='ay', out_signature='')
def SetActivationStall(self, ssid):
    '''Activations of this SSID never finish.'''
    self.failures[bytes(ssid)] = None


@dbus.service.method(MOCK_IFACE, in_signature='', out_signature='aas')
def GetScanRequests(self):
    '''The SSIDs each scan request probed for, oldest first, in hex.'''
    return dbus.Array([dbus.Array([ssid.hex() for ssid in probed], signature='s') for probed in self.scan_requests],
                      signature='as')


@dbus.service.method(MOCK_IFACE, in_signature='ou', out_signature='')
def DropActiveConnection(self, active, device_reason):
    '''The connection goes down by itself, as when its access point goes out of range: with a
    device_reason, its device fails with that NMDeviceStateReason first, as NetworkManager's does
    when the link is lost; then it is disconnected (reason none).'''
    if device_reason:
        for device in dbusmock.get_object(active).Get(base.ACTIVE_CONNECTION_IFACE, 'Devices'):
            device_obj = dbusmock.get_object(device)
            old = device_obj.Get(base.DEVICE_IFACE, 'State')
            device_obj.Set(base.DEVICE_IFACE, 'StateReason',
                           (dbus.UInt32(DEVICE_STATE_FAILED), dbus.UInt32(device_reason)))
            device_obj.Set(base.DEVICE_IFACE, 'State', dbus.UInt32(DEVICE_STATE_FAILED))
            device_obj.EmitSignal(base.DEVICE_IFACE, 'StateChanged', 'uuu',
                                  [dbus.UInt32(DEVICE_STATE_FAILED), old, dbus.UInt32(device_reason)])
    deactivate(self, active)
