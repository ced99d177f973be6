import type { Call } from '@gatehouse/console';
import { calls } from '../api';

// Devices and containers share one shape and one set of calls; a kind names which. Every agent
// is a device, wherever it runs; containers are what a container-engine connector exposes.
export interface DeviceKind {
  noun: string;
  plural: string;
  listPath: string;
  detailsPath: (uid: string) => string;
  calls: {
    list: Call;
    os: Call;
    get: Call;
    update: Call;
    remove: Call;
    accept: Call;
    status: Call;
    tags: Call;
    addTag: Call;
    setField: Call;
    removeField: Call;
    fieldKeys: Call;
  };
}

export const deviceKind: DeviceKind = {
  noun: 'device',
  plural: 'Devices',
  listPath: '/devices',
  detailsPath: (uid) => `/device/${uid}`,
  calls: {
    list: calls.listDevices,
    os: calls.listDeviceOs,
    get: calls.getDevice,
    update: calls.updateDevice,
    remove: calls.deleteDevice,
    accept: calls.acceptDevice,
    status: calls.setDeviceStatus,
    tags: calls.setDeviceTags,
    addTag: calls.addDeviceTag,
    setField: calls.setDeviceField,
    removeField: calls.deleteDeviceField,
    fieldKeys: calls.listDeviceFieldKeys,
  },
};

export const containerKind: DeviceKind = {
  noun: 'container',
  plural: 'Containers',
  listPath: '/containers',
  detailsPath: (uid) => `/container/${uid}`,
  calls: {
    list: calls.listContainers,
    os: calls.listContainerOs,
    get: calls.getContainer,
    update: calls.updateContainer,
    remove: calls.deleteContainer,
    accept: calls.acceptContainer,
    status: calls.setContainerStatus,
    tags: calls.setContainerTags,
    addTag: calls.addContainerTag,
    setField: calls.setContainerField,
    removeField: calls.deleteContainerField,
    fieldKeys: calls.listContainerFieldKeys,
  },
};
