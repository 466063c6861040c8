'''python-dbusmock template: BlueZ for accessory-setup's tests.

It loads python-dbusmock's bluez5 template and adds, on org.bluez.Mock:

- adapters whose discovery calls and filters are recorded, and that refuse discovery when off;
- devices that advertise (RSSI, service UUIDs, manufacturer and service data);
- devices that are heard only some time after a discovery starts, and only while it still runs;
- an Improv Wi-Fi device (improv-wifi.com/ble) with its GATT service, which connects, resolves
  services, answers the RPCs with framed results, requires authorization when asked to, and can
  be made to answer with a wrong checksum, an unknown-RPC error, nothing at all, or a failed join;
- a device with one GATT service described in JSON (a hotspot handoff, say), whose encrypted
  characteristics refuse an unpaired client, and which answers chosen writes by changing (and
  notifying) another characteristic a moment later;
- devices that pair (Device1.Pair sets Paired);
- an error name that GATT reads and writes of a characteristic fail with.
'''

import json

import dbus
import dbus.lowlevel
from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from dbusmock.templates import bluez5 as base
from dbusmock.templates.bluez5 import *  # noqa: F401,F403 pylint: disable=wildcard-import,unused-wildcard-import
from gi.repository import GLib

BUS_NAME = base.BUS_NAME
MAIN_OBJ = base.MAIN_OBJ
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MOCK_IFACE = base.BLUEZ_MOCK_IFACE
ADAPTER_IFACE = base.ADAPTER_IFACE
DEVICE_IFACE = base.DEVICE_IFACE
SERVICE_IFACE = 'org.bluez.GattService1'
CHRC_IFACE = 'org.bluez.GattCharacteristic1'
DESC_IFACE = 'org.bluez.GattDescriptor1'

IMPROV_SERVICE = '00467768-6228-2272-4663-277478268000'
IMPROV_SERVICE_DATA = '00004677-0000-1000-8000-00805f9b34fb'
STATE, ERROR, RPC, RESULT, CAPABILITIES = 'state', 'error', 'rpc', 'result', 'capabilities'
IMPROV_CHARACTERISTICS = [  # (role, uuid suffix, flags)
    (STATE, '1', ['read', 'notify']),
    (ERROR, '2', ['read', 'notify']),
    (RPC, '3', ['write']),
    (RESULT, '4', ['read', 'notify']),
    (CAPABILITIES, '5', ['read']),
]


def load(mock, parameters):
    base.load(mock, parameters)
    # bluez5's RegisterAgent does not see who calls it; BlueZ asks the agent on the bus name
    # that registered it, so that name is kept here, off the incoming messages.
    manager = mockobject.objects['/org/bluez']
    manager.agent_senders = {}

    def remember_agent_sender(_connection, message):
        if (message.get_type() == dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL
                and message.get_interface() == base.AGENT_MANAGER_IFACE and message.get_member() == 'RegisterAgent'):
            manager.agent_senders[str(message.get_args_list()[0])] = message.get_sender()
        return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
    manager.connection.add_message_filter(remember_agent_sender)


def byte_array(values):
    return dbus.Array([dbus.Byte(v) for v in values], signature='y')


def emit_changed(obj, iface, changes):
    obj.EmitSignal(dbus.PROPERTIES_IFACE, 'PropertiesChanged', 'sa{sv}as', [iface, changes, []])


def set_props(obj, iface, changes):
    for name, value in changes.items():
        obj.props[iface][name] = value
    emit_changed(obj, iface, changes)


# Adapters


def adapter_start_discovery(adapter):
    adapter.calls.append('StartDiscovery')
    if not adapter.props[ADAPTER_IFACE]['Powered']:
        raise dbus.exceptions.DBusException('Resource Not Ready', name='org.bluez.Error.NotReady')
    base.StartDiscovery(adapter)
    pending, adapter.pending = adapter.pending, []
    for delay_ms, announce in pending:
        GLib.timeout_add(delay_ms, lambda announce=announce: heard_if_discovering(adapter, announce) and False)


def heard_if_discovering(adapter, announce):
    '''A device advertising now is heard only by a discovering adapter; otherwise it waits for
    the next StartDiscovery.'''
    if adapter.props[ADAPTER_IFACE]['Discovering']:
        announce()
    else:
        adapter.pending.append((0, announce))


def adapter_stop_discovery(adapter):
    adapter.calls.append('StopDiscovery')
    base.StopDiscovery(adapter)


def adapter_set_discovery_filter(adapter, discovery_filter):
    adapter.calls.append('SetDiscoveryFilter')
    adapter.filters.append({str(k): (str(v) if isinstance(v, dbus.String) else
                                      [str(u) for u in v] if isinstance(v, dbus.Array) else int(v))
                            for k, v in discovery_filter.items()})
    base.SetDiscoveryFilter(adapter, discovery_filter)


@dbus.service.method(MOCK_IFACE, in_signature='ss', out_signature='s')
def AddAccessoryAdapter(self, device_name, system_name):
    '''An adapter (powered, PowerState "on") whose discovery calls are recorded.'''
    path = base.AddAdapter(self, device_name, system_name)
    adapter = mockobject.objects[path]
    adapter.calls = []
    adapter.filters = []
    adapter.pending = []  # (delay in ms after StartDiscovery, announce)
    adapter.props[ADAPTER_IFACE]['PowerState'] = dbus.String('on', variant_level=1)
    adapter.AddMethods(ADAPTER_IFACE, [
        ('StartDiscovery', '', '', adapter_start_discovery),
        ('StopDiscovery', '', '', adapter_stop_discovery),
        ('SetDiscoveryFilter', 'a{sv}', '', adapter_set_discovery_filter),
    ])
    return path


@dbus.service.method(MOCK_IFACE, in_signature='sbs', out_signature='')
def SetAdapterPower(_self, device_name, powered, power_state):
    '''Powered and PowerState ("off-blocked" is rfkill's block).'''
    adapter = mockobject.objects['/org/bluez/' + device_name]
    set_props(adapter, ADAPTER_IFACE, {
        'Powered': dbus.Boolean(powered, variant_level=1),
        'PowerState': dbus.String(power_state, variant_level=1),
    })


@dbus.service.method(MOCK_IFACE, in_signature='s', out_signature='s')
def GetAdapterLog(_self, device_name):
    '''JSON: the discovery calls and the filters set, oldest first.'''
    adapter = mockobject.objects['/org/bluez/' + device_name]
    return json.dumps({'calls': adapter.calls, 'filters': adapter.filters})


# Devices


def advertisement_props(rssi, uuids, manufacturer, service_data):
    return {
        'RSSI': dbus.Int16(rssi, variant_level=1),
        'UUIDs': dbus.Array([dbus.String(u) for u in uuids], signature='s', variant_level=1),
        'ManufacturerData': dbus.Dictionary({dbus.UInt16(k): byte_array(v) for k, v in manufacturer.items()},
                                            signature='qv', variant_level=1),
        'ServiceData': dbus.Dictionary({dbus.String(k): byte_array(v) for k, v in service_data.items()},
                                       signature='sv', variant_level=1),
    }


@dbus.service.method(MOCK_IFACE, in_signature='ssssnasa{qay}a{say}', out_signature='s')
def AddAdvertisingDevice(self, adapter_name, address, address_type, name, rssi, uuids, manufacturer, service_data):
    '''A device announced with its advertisement in one InterfacesAdded; an empty name means none.'''
    adapter_path = '/org/bluez/' + adapter_name
    path = adapter_path + '/dev_' + address.replace(':', '_').upper()
    properties = {
        'Address': dbus.String(address, variant_level=1),
        'AddressType': dbus.String(address_type, variant_level=1),
        'Alias': dbus.String(name or address.replace(':', '-'), variant_level=1),
        'Paired': dbus.Boolean(False, variant_level=1),
        'Connected': dbus.Boolean(False, variant_level=1),
        'Trusted': dbus.Boolean(False, variant_level=1),
        'Blocked': dbus.Boolean(False, variant_level=1),
        'Adapter': dbus.ObjectPath(adapter_path, variant_level=1),
        'LegacyPairing': dbus.Boolean(False, variant_level=1),
        'TxPower': dbus.Int16(4, variant_level=1),
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
    }
    if name:
        properties['Name'] = dbus.String(name, variant_level=1)
    properties.update(advertisement_props(rssi, uuids, manufacturer, service_data))
    self.AddObject(path, DEVICE_IFACE, properties, [
        ('Connect', '', '', device_connect),
        ('Disconnect', '', '', device_disconnect),
        ('Pair', '', '', device_pair),
        ('CancelPairing', '', '', ''),
    ])
    device = mockobject.objects[path]
    device.improv = None
    device.gatt = None
    device.connects = 0
    device.unresolved_links = 0
    device.pairs = 0
    device.agent_calls = []
    self.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {DEVICE_IFACE: properties}])
    return path


@dbus.service.method(MOCK_IFACE, in_signature='sna{qay}a{say}', out_signature='')
def UpdateAdvertisement(_self, path, rssi, manufacturer, service_data):
    '''A new advertisement from a known device (PropertiesChanged).'''
    device = mockobject.objects[path]
    changes = advertisement_props(rssi, [], manufacturer, service_data)
    del changes['UUIDs']
    set_props(device, DEVICE_IFACE, changes)


def device_connect(device):
    if device.props[DEVICE_IFACE]['Connected']:
        raise dbus.exceptions.DBusException('Already Connected', name='org.bluez.Error.AlreadyConnected')
    device.connects += 1
    set_props(device, DEVICE_IFACE, {'Connected': dbus.Boolean(True, variant_level=1)})
    if device.improv is not None and not device.improv['exported']:
        export_improv_service(device)
    if device.gatt is not None and not device.gatt['exported']:
        export_gatt_service(device)

    if device.unresolved_links > 0:
        device.unresolved_links -= 1
        return

    def resolved():
        set_props(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
        return False
    GLib.timeout_add(20, resolved)


def device_disconnect(device):
    if not device.props[DEVICE_IFACE]['Connected']:
        raise dbus.exceptions.DBusException('Not Connected', name='org.bluez.Error.NotConnected')
    set_props(device, DEVICE_IFACE, {
        'Connected': dbus.Boolean(False, variant_level=1),
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
    })


def device_pair(device):
    device.pairs += 1
    pairing = getattr(device, 'pairing', None)
    if pairing is not None and not device.props[DEVICE_IFACE]['Paired']:
        ask_agent(device, pairing)
    if not device.props[DEVICE_IFACE]['Paired']:
        set_props(device, DEVICE_IFACE, {'Paired': dbus.Boolean(True, variant_level=1)})


def ask_agent(device, pairing):
    '''As bluetoothd does for the caller of Pair: asks the last registered agent (on the bus
    name pairing['agentName'], or else the one it registered from); a refusal fails the
    pairing as BlueZ's AuthenticationRejected.'''
    manager = mockobject.objects['/org/bluez']
    if not manager.agent_paths:
        return
    path = str(manager.agent_paths[-1])
    agent = (str(pairing.get('agentName') or manager.agent_senders.get(path, '')), path)
    if 'passkey' in pairing:
        call = ('DisplayPasskey', 'ouq', (dbus.ObjectPath(device.path), dbus.UInt32(pairing['passkey']), dbus.UInt16(0)))
    elif 'confirm' in pairing:
        call = ('RequestConfirmation', 'ou', (dbus.ObjectPath(device.path), dbus.UInt32(pairing['confirm'])))
    else:
        call = ('RequestPasskey', 'o', (dbus.ObjectPath(device.path),))
    try:
        device.connection.call_blocking(agent[0], agent[1], 'org.bluez.Agent1', call[0], call[1], call[2])
        device.agent_calls.append([call[0], 'accepted'])
    except dbus.exceptions.DBusException as error:
        device.agent_calls.append([call[0], error.get_dbus_name()])
        raise dbus.exceptions.DBusException('Authentication Rejected', name='org.bluez.Error.AuthenticationRejected')


@dbus.service.method(MOCK_IFACE, in_signature='sa{sv}', out_signature='')
def SetPairing(_self, path, options):
    '''How Pair goes: with passkey (u) the agent is shown the passkey, with confirm (u) it is
    asked to confirm that both sides show that number (numeric comparison), without either
    it is asked for one. agentName names the bus name the agent is on (default: the one it
    registered from).'''
    mockobject.objects[path].pairing = {
        str(k): (int(v) if k in ('passkey', 'confirm') else str(v)) for k, v in options.items()}


@dbus.service.method(MOCK_IFACE, in_signature='su', out_signature='')
def SetUnresolvedLinks(_self, path, count):
    '''The next `count` connections to the device never resolve its services, as BlueZ now
    and then leaves a link.'''
    mockobject.objects[path].unresolved_links = int(count)


# A device with one GATT service described in JSON


@dbus.service.method(MOCK_IFACE, in_signature='ssss', out_signature='s')
def AddGATTDevice(self, adapter_name, address, name, spec):
    '''spec: {"service": uuid, "advertised": [uuid],
    "characteristics": [{"uuid", "flags", "value": hex, "description": user description (0x2901),
    "service": another service to put it in}],
    "answers": [{"write": hex, "characteristic": uuid, "value": hex, "delayMs": n}]}. Characteristics
    with an "encrypt-" flag refuse an unpaired client with NotAuthorized. Writing an answer's
    "write" value (to any characteristic) sets the answer's characteristic to its value (notified
    when a client listens) delayMs later.'''
    spec = json.loads(spec)
    path = AddAdvertisingDevice(self, adapter_name, address, 'random', name, -55, spec.get('advertised', []), {}, {})
    device = mockobject.objects[path]
    device.gatt = {'exported': False, 'spec': spec, 'chars': {}, 'writes': [], 'reads': []}
    return path


@dbus.service.method(MOCK_IFACE, in_signature='s', out_signature='s')
def GetGATTLog(_self, path):
    '''JSON: whether the device is paired, how often Pair was called, the writes ([uuid, hex]) and
    reads (uuid) its characteristics served, and whether it is connected.'''
    device = mockobject.objects[path]
    return json.dumps({
        'paired': bool(device.props[DEVICE_IFACE]['Paired']), 'pairs': device.pairs,
        'connected': bool(device.props[DEVICE_IFACE]['Connected']), 'connects': device.connects,
        'writes': device.gatt['writes'], 'reads': device.gatt['reads'], 'agentCalls': device.agent_calls,
    })


def export_gatt_service(device):
    manager = mockobject.objects['/']
    spec = device.gatt['spec']
    services = {}
    for index, characteristic in enumerate(spec['characteristics']):
        uuid = characteristic.get('service', spec['service'])
        if uuid not in services:
            service_path = f'{device.path}/service{0x20 + 0x20 * len(services):04x}'
            service_props = {
                'UUID': dbus.String(uuid, variant_level=1),
                'Device': dbus.ObjectPath(device.path, variant_level=1),
                'Primary': dbus.Boolean(True, variant_level=1),
            }
            manager.AddObject(service_path, SERVICE_IFACE, service_props, [])
            manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
                dbus.ObjectPath(service_path), {SERVICE_IFACE: service_props}])
            services[uuid] = service_path
        service_path = services[uuid]
        path = f'{service_path}/char{0x21 + 2 * index:04x}'
        props = {
            'UUID': dbus.String(characteristic['uuid'], variant_level=1),
            'Service': dbus.ObjectPath(service_path, variant_level=1),
            'Value': byte_array(bytes.fromhex(characteristic.get('value', ''))),
            'Notifying': dbus.Boolean(False, variant_level=1),
            'Flags': dbus.Array(characteristic['flags'], signature='s', variant_level=1),
        }
        manager.AddObject(path, CHRC_IFACE, props, [
            ('ReadValue', 'a{sv}', 'ay', gatt_read),
            ('WriteValue', 'aya{sv}', '', gatt_write),
            ('StartNotify', '', '', gatt_start_notify),
            ('StopNotify', '', '', chrc_stop_notify),
        ])
        chrc = mockobject.objects[path]
        chrc.device = device
        chrc.uuid = characteristic['uuid']
        chrc.fail_with = ''
        device.gatt['chars'][chrc.uuid] = chrc
        manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
            dbus.ObjectPath(path), {CHRC_IFACE: props}])
        if 'description' in characteristic:
            export_user_description(manager, path, characteristic['description'])
    device.gatt['exported'] = True


def export_user_description(manager, chrc_path, text):
    '''A Characteristic User Description (0x2901) descriptor holding `text`.'''
    path = chrc_path + '/desc0001'
    value = byte_array(text.encode())
    props = {
        'UUID': dbus.String('00002901-0000-1000-8000-00805f9b34fb', variant_level=1),
        'Characteristic': dbus.ObjectPath(chrc_path, variant_level=1),
        'Value': value,
        'Flags': dbus.Array(['read'], signature='s', variant_level=1),
    }
    manager.AddObject(path, DESC_IFACE, props, [('ReadValue', 'a{sv}', 'ay', lambda _self, _options: value)])
    manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {DESC_IFACE: props}])


def gatt_check(chrc, allowed):
    check_failure(chrc)
    flags = [str(flag) for flag in chrc.props[CHRC_IFACE]['Flags']]
    if not any(flag in flags for flag in allowed):
        raise dbus.exceptions.DBusException('Not permitted', name='org.bluez.Error.NotPermitted')
    if any(flag.startswith('encrypt') for flag in flags) and not chrc.device.props[DEVICE_IFACE]['Paired']:
        raise dbus.exceptions.DBusException('Insufficient encryption', name='org.bluez.Error.NotAuthorized')


def gatt_read(chrc, _options):
    gatt_check(chrc, ['read', 'encrypt-read'])
    chrc.device.gatt['reads'].append(chrc.uuid)
    return chrc.props[CHRC_IFACE]['Value']


def gatt_write(chrc, value, _options):
    gatt_check(chrc, ['write', 'encrypt-write'])
    written = bytes(int(b) for b in value).hex()
    chrc.device.gatt['writes'].append([chrc.uuid, written])
    for answer in chrc.device.gatt['spec'].get('answers', []):
        if answer['write'] == written:
            target = chrc.device.gatt['chars'][answer['characteristic']]
            reply = bytes.fromhex(answer['value'])
            if int(answer.get('delayMs', 0)) == 0:
                notify_value(target, reply)  # an answer to read right after the write
            else:
                GLib.timeout_add(int(answer['delayMs']), lambda: notify_value(target, reply) and False)


def gatt_start_notify(chrc):
    gatt_check(chrc, ['notify', 'indicate', 'encrypt-notify', 'encrypt-indicate'])
    set_props(chrc, CHRC_IFACE, {'Notifying': dbus.Boolean(True, variant_level=1)})


# Improv


@dbus.service.method(MOCK_IFACE, in_signature='sssyy', out_signature='s')
def AddImprovDevice(self, adapter_name, address, name, state, capabilities):
    '''An Improv Wi-Fi device in `state` (1 authorization required, 2 authorized).'''
    path = AddAdvertisingDevice(self, adapter_name, address, 'random', name, -58, [IMPROV_SERVICE], {},
                                {IMPROV_SERVICE_DATA: [state, capabilities, 0, 0, 0, 0]})
    device = mockobject.objects[path]
    device.improv = {
        'exported': False, 'state': state, 'error': 0, 'capabilities': capabilities, 'buffer': [],
        'mode': 'normal', 'authorize_after_ms': 0, 'url': 'http://192.168.1.50/setup', 'fail_connect': False,
        'commands': [], 'packets': [], 'write_types': [], 'ssid': None, 'password': None, 'name': name,
        'chars': {},
    }
    return path


@dbus.service.method(MOCK_IFACE, in_signature='sssyyu', out_signature='s')
def AddImprovDeviceHeardLater(self, adapter_name, address, name, state, capabilities, delay_ms):
    '''An Improv device BlueZ does not know yet: it is heard `delay_ms` after the adapter's next
    StartDiscovery if the adapter is still discovering then. Returns the path it will have.'''
    adapter = mockobject.objects['/org/bluez/' + adapter_name]
    adapter.pending.append((int(delay_ms), lambda: AddImprovDevice(self, adapter_name, address, name, state,
                                                                   capabilities)))
    return '/org/bluez/' + adapter_name + '/dev_' + address.replace(':', '_').upper()


@dbus.service.method(MOCK_IFACE, in_signature='sa{sv}', out_signature='')
def SetImprovBehaviour(_self, path, options):
    '''mode: normal | bad-checksum | unknown-rpc | silent; authorize_after_ms (u): authorize that
    long after the state's notifications start; fail_connect (b); url (s).'''
    improv = mockobject.objects[path].improv
    for key, value in options.items():
        key = str(key)
        improv[key] = bool(value) if key == 'fail_connect' else int(value) if key == 'authorize_after_ms' else str(value)


@dbus.service.method(MOCK_IFACE, in_signature='s', out_signature='')
def AuthorizeImprovDevice(_self, path):
    '''The person pressed the device's button.'''
    set_improv_state(mockobject.objects[path], 2)


@dbus.service.method(MOCK_IFACE, in_signature='s', out_signature='s')
def GetImprovLog(_self, path):
    '''JSON: the commands received, the packets written and their write types, the credentials.'''
    improv = mockobject.objects[path].improv
    return json.dumps({
        'commands': improv['commands'], 'packets': improv['packets'], 'writeTypes': improv['write_types'],
        'ssid': improv['ssid'], 'password': improv['password'], 'state': improv['state'],
    })


@dbus.service.method(MOCK_IFACE, in_signature='ss', out_signature='')
def SetCharacteristicError(_self, path, error_name):
    '''Reads and writes of the characteristic fail with this BlueZ error ("" for none).'''
    mockobject.objects[path].fail_with = str(error_name)


def export_improv_service(device):
    manager = mockobject.objects['/']
    service_path = device.path + '/service0010'
    service_props = {
        'UUID': dbus.String(IMPROV_SERVICE, variant_level=1),
        'Device': dbus.ObjectPath(device.path, variant_level=1),
        'Primary': dbus.Boolean(True, variant_level=1),
    }
    manager.AddObject(service_path, SERVICE_IFACE, service_props, [])
    manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(service_path), {SERVICE_IFACE: service_props}])
    for index, (role, suffix, flags) in enumerate(IMPROV_CHARACTERISTICS):
        path = f'{service_path}/char{0x11 + 2 * index:04x}'
        props = {
            'UUID': dbus.String(IMPROV_SERVICE[:-1] + suffix, variant_level=1),
            'Service': dbus.ObjectPath(service_path, variant_level=1),
            'Value': byte_array(initial_value(device, role)),
            'Notifying': dbus.Boolean(False, variant_level=1),
            'Flags': dbus.Array(flags, signature='s', variant_level=1),
        }
        manager.AddObject(path, CHRC_IFACE, props, [
            ('ReadValue', 'a{sv}', 'ay', chrc_read),
            ('WriteValue', 'aya{sv}', '', chrc_write),
            ('StartNotify', '', '', chrc_start_notify),
            ('StopNotify', '', '', chrc_stop_notify),
        ])
        chrc = mockobject.objects[path]
        chrc.role = role
        chrc.device = device
        chrc.fail_with = ''
        device.improv['chars'][role] = chrc
        manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
            dbus.ObjectPath(path), {CHRC_IFACE: props}])
    device.improv['exported'] = True


def initial_value(device, role):
    improv = device.improv
    return {STATE: [improv['state']], ERROR: [improv['error']], CAPABILITIES: [improv['capabilities']]}.get(role, [])


def check_failure(chrc):
    if chrc.fail_with:
        raise dbus.exceptions.DBusException('Operation is not permitted', name=chrc.fail_with)


def chrc_read(chrc, _options):
    check_failure(chrc)
    return chrc.props[CHRC_IFACE]['Value']


def chrc_start_notify(chrc):
    if 'notify' not in chrc.props[CHRC_IFACE]['Flags']:
        raise dbus.exceptions.DBusException('Notify not supported', name='org.bluez.Error.NotSupported')
    set_props(chrc, CHRC_IFACE, {'Notifying': dbus.Boolean(True, variant_level=1)})
    improv = chrc.device.improv
    if chrc.role == STATE and improv['state'] == 1 and improv['authorize_after_ms']:
        GLib.timeout_add(improv['authorize_after_ms'], lambda: set_improv_state(chrc.device, 2) and False)


def chrc_stop_notify(chrc):
    set_props(chrc, CHRC_IFACE, {'Notifying': dbus.Boolean(False, variant_level=1)})


def notify_value(chrc, value):
    '''Sets the value; sends it as a notification when a client asked for them.'''
    chrc.props[CHRC_IFACE]['Value'] = byte_array(value)
    if chrc.props[CHRC_IFACE]['Notifying']:
        emit_changed(chrc, CHRC_IFACE, {'Value': byte_array(value)})


def set_improv_state(device, state):
    device.improv['state'] = state
    if STATE in device.improv['chars']:
        notify_value(device.improv['chars'][STATE], [state])


def set_improv_error(device, error):
    device.improv['error'] = error
    notify_value(device.improv['chars'][ERROR], [error])


def send_result(device, command, strings):
    data = []
    for text in strings:
        encoded = list(text.encode())
        data += [len(encoded)] + encoded
    frame = [command, len(data)] + data
    checksum = sum(frame) & 0xFF
    if device.improv['mode'] == 'bad-checksum':
        checksum = (checksum + 1) & 0xFF
    notify_value(device.improv['chars'][RESULT], frame + [checksum])


def chrc_write(chrc, value, options):
    check_failure(chrc)
    if chrc.role != RPC:
        raise dbus.exceptions.DBusException('Writing is not permitted', name='org.bluez.Error.NotPermitted')
    improv = chrc.device.improv
    packet = [int(b) for b in value]
    improv['packets'].append(packet)
    improv['write_types'].append(str(options.get('type', 'request')))
    improv['buffer'] += packet
    buffer = improv['buffer']
    if len(buffer) < 2 or len(buffer) < buffer[1] + 3:
        return
    frame = buffer[:buffer[1] + 3]
    improv['buffer'] = []
    # A device answers after the write's reply.
    GLib.idle_add(lambda: handle_rpc(chrc.device, frame) and False)


def handle_rpc(device, frame):
    improv = device.improv
    if improv['mode'] == 'silent':
        return
    if sum(frame[:-1]) & 0xFF != frame[-1]:
        set_improv_error(device, 1)
        return
    command, data = frame[0], frame[2:-1]
    improv['commands'].append(command)
    if improv['mode'] == 'unknown-rpc' or command not in (1, 2, 3, 4):
        set_improv_error(device, 2)
        return
    set_improv_error(device, 0)
    if command == 3:
        send_result(device, 3, ['MockFirmware', '2024.6.0', 'ESP32-C3', improv['name']])
    elif command == 4:
        send_result(device, 4, ['HomeNet', '-52', 'WPA2', 'Cafe Libre', '-80', 'NO'])
    elif command == 1:
        if improv['state'] != 2:
            set_improv_error(device, 4)
            return
        ssid_length = data[0]
        password_length = data[1 + ssid_length]
        improv['ssid'] = bytes(data[1:1 + ssid_length]).decode(errors='replace')
        improv['password'] = bytes(data[2 + ssid_length:2 + ssid_length + password_length]).decode(errors='replace')
        set_improv_state(device, 3)
        GLib.timeout_add(50, lambda: finish_provisioning(device) and False)


def finish_provisioning(device):
    improv = device.improv
    if improv['fail_connect']:
        set_improv_error(device, 3)
        set_improv_state(device, 2)
        return
    # As ESPHome does: the state first, then the result with the redirect URL.
    set_improv_state(device, 4)
    send_result(device, 1, [improv['url']] if improv['url'] else [])
