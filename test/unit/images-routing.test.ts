import { parseCatalog } from '../../src/domain/catalog/catalog';
import type { ImageModel } from '../../src/domain/catalog/types';
import { Cancellation } from '../../src/domain/generation/cancellation';
import { ProviderError } from '../../src/domain/generation/errors';
import type { GeneratedImage, ImageProvider, ImageProviderRequest } from '../../src/domain/images/ports';
import { StickyRoutes } from '../../src/domain/routing/affinity';
import { healthKey, Router, type RoutingPolicy } from '../../src/domain/routing/failover';
import { DeploymentHealth } from '../../src/domain/routing/health';
import { RoutedImageProvider, type ImageRouteTarget } from '../../src/providers/images/routed';
import { ApiError } from '../../src/domain/shared/errors';

/**
 * The routed image provider on text routing's rules: the order (priority, then weights), the
 * attempt budget (count and time) and a vendor's Retry-After. Deployments here are in-memory
 * image providers that answer or fail as told; the HTTP path is images-routing.test.ts's.
 */

type Behaviour = 'ok' | 'fail' | { status: number; retryAfterMs?: number; waitMs?: number };

function imageModel(deployments: { vendor: string; priority?: number; weight?: number }[]): ImageModel {
  const vendors = Object.fromEntries(
    deployments.map((d) => [d.vendor, { protocol: 'azure-openai', base_url: `https://${d.vendor}.openai.azure.com` }]),
  );
  const catalog = parseCatalog(
    {
      vendors,
      models: [
        {
          kind: 'image',
          id: 'acme/img',
          vendor: deployments[0]!.vendor,
          vendor_model_id: 'img',
          created: 1,
          modes: ['generate'],
          sizes: ['1024x1024'],
          max_input_images: 0,
          pricing: { per_image: '0.04' },
          deployments,
        },
      ],
    },
    'test',
  );
  return catalog.images[0]!;
}

/** The model's deployments as in-memory providers; `calls` lists the deployments asked, in order. */
function routed(
  model: ImageModel,
  behaviours: Record<string, Behaviour>,
  options: { policy?: Partial<RoutingPolicy>; random?: () => number } = {},
) {
  const calls: string[] = [];
  const health = new DeploymentHealth();
  const policy = { maxAttempts: 3, budgetMs: 60_000, firstByteTimeoutMs: 30_000, ...options.policy };
  const router = new Router(health, new StickyRoutes(60_000), policy, null, options.random);
  const targets: ImageRouteTarget[] = model.deployments.map((deployment) => {
    const provider: ImageProvider = {
      async generateImage(): Promise<GeneratedImage> {
        calls.push(deployment.name);
        const behaviour = behaviours[deployment.name] ?? 'ok';
        if (behaviour === 'ok') return { data: Buffer.from(deployment.name), format: 'png' };
        if (behaviour === 'fail') throw new ProviderError(`${deployment.name} broke`, deployment.vendor, 503);
        if (behaviour.waitMs) await new Promise((r) => setTimeout(r, behaviour.waitMs));
        throw new ProviderError(
          `${deployment.name} answered ${behaviour.status}`,
          deployment.vendor,
          behaviour.status,
          undefined,
          undefined,
          behaviour.retryAfterMs ?? null,
        );
      },
    };
    return { deployment, model, provider, key: healthKey(model, deployment) };
  });
  return { provider: new RoutedImageProvider(model, targets, router), calls, health };
}

const request = (model: ImageModel): ImageProviderRequest => ({
  model,
  mode: 'generate',
  prompt: 'p',
  size: { width: 1024, height: 1024 },
  images: [],
  index: 0,
  signal: new Cancellation(),
});

test('deployments of one priority share the images by weight (text routing’s order), lower priorities after', async () => {
  const model = imageModel([
    { vendor: 'heavy', weight: 3 },
    { vendor: 'light', weight: 1 },
    { vendor: 'spare', priority: 1 },
  ]);
  let seed = 1;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const { provider, calls } = routed(model, {}, { random });
  for (let i = 0; i < 400; i++) await provider.generateImage(request(model));
  const heavy = calls.filter((c) => c === 'heavy').length;
  expect(calls.filter((c) => c === 'spare')).toHaveLength(0);
  expect(heavy + calls.filter((c) => c === 'light').length).toBe(400);
  // 3:1 by weight: about 300 of 400.
  expect(heavy).toBeGreaterThan(260);
  expect(heavy).toBeLessThan(340);
});

test('the image names the deployment that made it and the attempts it took', async () => {
  const model = imageModel([{ vendor: 'east' }, { vendor: 'west', priority: 1 }]);
  const { provider, calls } = routed(model, { east: 'fail' });
  const image = await provider.generateImage(request(model));
  expect(image.servedBy).toEqual({ deployment: 'west', attempts: 2 });
  expect(calls).toEqual(['east', 'west']);
});

test('at most maxAttempts deployments are tried for an image: the last failure is the answer', async () => {
  const model = imageModel([{ vendor: 'a' }, { vendor: 'b', priority: 1 }, { vendor: 'c', priority: 2 }]);
  const { provider, calls } = routed(model, { a: 'fail', b: 'fail' }, { policy: { maxAttempts: 2 } });
  await expect(provider.generateImage(request(model))).rejects.toMatchObject({ message: 'b broke', vendorStatus: 503 });
  expect(calls).toEqual(['a', 'b']);
});

test('no attempt starts once the time budget is spent', async () => {
  const model = imageModel([{ vendor: 'a' }, { vendor: 'b', priority: 1 }]);
  const { provider, calls } = routed(model, { a: { status: 500, waitMs: 80 } }, { policy: { budgetMs: 50 } });
  await expect(provider.generateImage(request(model))).rejects.toMatchObject({ vendorStatus: 500 });
  expect(calls).toEqual(['a']);
});

test("a 429's Retry-After cools the deployment for that long, and every deployment rate-limited answers 429 with the soonest", async () => {
  const model = imageModel([{ vendor: 'a' }, { vendor: 'b', priority: 1 }]);
  const { provider, calls, health } = routed(model, {
    a: { status: 429, retryAfterMs: 5_000 },
    b: { status: 429, retryAfterMs: 2_000 },
  });
  const error = await provider.generateImage(request(model)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: 429, code: 'upstream_rate_limited', details: { retry_after_seconds: 2 } });
  expect(health.view(healthKey(model, model.deployments[0]!)).state).toBe('cooled');
  // Both cooled for their Retry-After: the next image calls nobody, and says when to come back.
  const again = await provider.generateImage(request(model)).catch((e: unknown) => e);
  expect(again).toMatchObject({ status: 429, code: 'upstream_rate_limited' });
  expect(calls).toEqual(['a', 'b']);
  expect(provider.available()).toBe(false);
});

describe("an image model's fallback in the catalog", () => {
  const catalogWith =
    (fallback: Record<string, unknown>, extra: object[] = []) =>
    () =>
      parseCatalog(
        {
          vendors: { azure_east: { protocol: 'azure-openai', base_url: 'https://east.openai.azure.com' } },
          models: [
            {
              kind: 'image',
              id: 'acme/img',
              vendor: 'openai',
              created: 1,
              modes: ['generate'],
              sizes: ['1024x1024'],
              max_input_images: 0,
              pricing: { per_image: '0.04' },
              deployments: [{ vendor: 'azure_east' }],
              ...fallback,
            },
            ...extra,
          ],
        },
        'test',
      );
  const other = {
    kind: 'image',
    id: 'acme/other',
    vendor: 'openai',
    created: 1,
    modes: ['generate'],
    sizes: ['1024x1024'],
    max_input_images: 0,
  };

  test('names another priced image model of the catalog', () => {
    expect(catalogWith({ fallback: 'acme/other' }, [{ ...other, pricing: { per_image: '0.02' } }])().images[0]!.fallback).toBe(
      'acme/other',
    );
    expect(catalogWith({ fallback: 'openai/gpt-4o-mini' })).toThrow(/models\[0\]\.fallback.*an image model/);
    expect(catalogWith({ fallback: 'acme/img' })).toThrow(/must name another model/);
    expect(catalogWith({ fallback: 'acme/other' }, [{ ...other, pricing: null }])).toThrow(/priced model/);
    expect(catalogWith({ fallback: 'acme/other', deployments: undefined }, [{ ...other, pricing: { per_image: '0.02' } }])).toThrow(
      /needs a deployments list/,
    );
  });
});
