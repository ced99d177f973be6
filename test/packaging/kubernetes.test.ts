import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { kubernetesDir, productVersion } from '../../packaging/release/layout';

/** The API objects the manifests may hold, each with the Kubernetes API's own schema (kubernetes-models). */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  /** Whatever the file holds: the schema checks it. */
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function validate(object: Manifest): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

describe('Kubernetes manifests (packaging/kubernetes)', () => {
  const files = readdirSync(kubernetesDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  const objects: Manifest[] = files.flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(kubernetesDir, file), 'utf8')).map(
      (doc) => doc.toJS() as Manifest,
    ),
  );
  const find = (kind: string) => {
    const found = objects.find((o) => o.kind === kind);
    if (!found) throw new Error(`no ${kind}`);
    return found;
  };

  it('lists every manifest in the kustomization, and each is valid against the Kubernetes API schema', () => {
    const kustomization = parseAllDocuments(
      readFileSync(path.join(kubernetesDir, 'kustomization.yaml'), 'utf8'),
    )[0]?.toJS() as {
      resources: string[];
    };
    expect([...kustomization.resources].sort()).to.deep.equal([...files].sort());
    for (const object of objects) validate(object);
    // The schema is really applied: a port that is not a number is refused.
    const broken = structuredClone(find('Deployment'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(() => validate(broken)).to.throw();
  });

  it('runs several instances of this version behind one Service with HTTP and the SSH port', () => {
    const deployment = find('Deployment');
    expect(deployment.spec.replicas).to.be.at.least(2);
    const [container] = deployment.spec.template.spec.containers;
    expect(container.image).to.equal(`localhost/gatehouse-server:${productVersion}`);
    const ports = Object.fromEntries(
      container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
    );
    expect(ports).to.deep.equal({ http: 8080, ssh: 2222, internal: 8081 });
    const service = find('Service');
    expect(service.spec.selector).to.deep.equal(deployment.spec.selector.matchLabels);
    expect(service.spec.ports.map((p: { targetPort: string }) => p.targetPort)).to.deep.equal([
      'http',
      'ssh',
    ]);
  });

  it('waits for /readyz before sending traffic, restarts on /healthz, and keeps instances through a drain', () => {
    const [container] = find('Deployment').spec.template.spec.containers;
    expect(container.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'http' });
    const pdb = find('PodDisruptionBudget');
    expect(pdb.spec.minAvailable).to.be.at.least(1);
    expect(pdb.spec.minAvailable).to.be.below(find('Deployment').spec.replicas);
    expect(pdb.spec.selector).to.deep.equal(find('Deployment').spec.selector);
  });

  it('opens the internal listener to the other instances only, at an address they can reach', () => {
    const [container] = find('Deployment').spec.template.spec.containers;
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    expect(env).to.include({
      GATEHOUSE_INTERNAL_HOST: '0.0.0.0',
      GATEHOUSE_INTERNAL_PORT: '8081',
      GATEHOUSE_INTERNAL_ADDRESS: 'http://$(POD_IP):8081',
    });
    const policy = find('NetworkPolicy');
    const internal = policy.spec.ingress.find((rule: { ports: { port: string }[] }) =>
      rule.ports.some((p) => p.port === 'internal'),
    );
    expect(internal.from).to.deep.equal([
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gatehouse' } } },
    ]);
  });

  it('takes the secret key, database and Redis URLs from a Secret, and every setting is one the server knows', () => {
    const secret = find('Secret');
    expect(Object.keys(secret.stringData ?? {}).sort()).to.deep.equal([
      'GATEHOUSE_DATABASE_URL',
      'GATEHOUSE_REDIS_URL',
      'GATEHOUSE_SECRET_KEY',
    ]);
    const [container] = find('Deployment').spec.template.spec.containers;
    expect(container.envFrom).to.deep.equal([
      { configMapRef: { name: 'gatehouse' } },
      { secretRef: { name: 'gatehouse' } },
    ]);
    // The ConfigMap and the fixed variables load as the server's configuration would load them.
    const env: Record<string, string> = { ...find('ConfigMap').data };
    for (const e of container.env as { name: string; value?: string }[])
      if (e.value) env[e.name] = e.value.replace('$(POD_IP)', '10.0.0.7');
    const config = loadConfig({
      ...env,
      GATEHOUSE_DATABASE_URL: 'postgres://gatehouse@postgres:5432/gatehouse',
    });
    expect(config.internal.host).to.equal('0.0.0.0');
    expect(config.internal.port).to.equal(8081);
    expect(config.http.trustProxy).to.equal(true);
    expect(config.publicUrl).to.equal('https://gatehouse.example.com');
  });
});
