import type { CallName } from '@gatehouse/web/shell';

// Devices and containers share one shape and one set of calls (SPEC.md section 7); a kind names which. Every agent
// is a device, wherever it runs; containers are what a container-engine connector exposes.
export interface DeviceKind {
  noun: string;
  plural: string;
  listPath: string;
  detailsPath: (uid: string) => string;
  calls: {
    list: CallName;
    get: CallName;
    update: CallName;
    remove: CallName;
    accept: CallName;
    status: CallName;
    tags: CallName;
  };
}

export const deviceKind: DeviceKind = {
  noun: 'device',
  plural: 'Devices',
  listPath: '/devices',
  detailsPath: (uid) => `/device/${uid}`,
  calls: {
    list: 'listDevices',
    get: 'getDevice',
    update: 'updateDevice',
    remove: 'deleteDevice',
    accept: 'acceptDevice',
    status: 'setDeviceStatus',
    tags: 'setDeviceTags',
  },
};

export const containerKind: DeviceKind = {
  noun: 'container',
  plural: 'Containers',
  listPath: '/containers',
  detailsPath: (uid) => `/container/${uid}`,
  calls: {
    list: 'listContainers',
    get: 'getContainer',
    update: 'updateContainer',
    remove: 'deleteContainer',
    accept: 'acceptContainer',
    status: 'setContainerStatus',
    tags: 'setContainerTags',
  },
};
